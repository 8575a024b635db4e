#include "posecast/replay/replayer.h"

#include "posecast/hash.h"

namespace posecast::replay {
namespace {

Result<std::unique_ptr<sim::World>> make_world(const Recording& rec,
                                               const std::vector<std::shared_ptr<const Model>>& models,
                                               unsigned threads, const sim::EvaluationFault* fault) {
  sim::WorldOptions options;
  options.tick_checks = true;
  options.fault = fault;
  options.tick_rate_hz = rec.header.tick_rate_hz;
  options.threads = threads;
  options.hash_palettes = true;
  auto world = std::make_unique<sim::World>(options);
  for (std::size_t i = 0; i < models.size(); ++i) {
    Result<sim::ModelId> id = world->add_model(models[i]);
    if (!id) return Error{"models[" + std::to_string(i) + "] '" + rec.header.models[i].source + "': " + id.error().message};
  }
  return world;
}

}  // namespace

void replay_tick(const Recording& recording, uint64_t tick, sim::World& world, bool evaluate) {
  for (const RecordedCommand& c : recording.commands_at(tick)) world.submit(c.submitter, c.command);
  if (evaluate) {
    world.tick();
  } else {
    world.fast_forward_tick();
  }
}

Result<std::unique_ptr<Replayer>> Replayer::create(std::shared_ptr<const Recording> recording,
                                                   const ModelLoader& loader, ReplayOptions options) {
  std::unique_ptr<Replayer> r(new Replayer());
  r->recording_ = std::move(recording);
  r->options_ = options;
  const RecordingHeader& h = r->recording_->header;
  for (std::size_t i = 0; i < h.models.size(); ++i) {
    const RecordedModel& m = h.models[i];
    const std::string where = "models[" + std::to_string(i) + "] '" + m.source + "'";
    Result<std::shared_ptr<const Model>> model = loader(m.source);
    if (!model) return Error{where + ": " + model.error().message};
    if (!model.value()) return Error{where + ": the loader returned no model"};
    if (model.value()->content_hash != m.content_hash) {
      return Error{where + ": asset hash mismatch: content hash " + hash_hex(model.value()->content_hash) +
                   " differs from the recorded " + hash_hex(m.content_hash) + " (not the asset the session used)"};
    }
    r->models_.push_back(std::move(model.value()));
  }
  Result<std::unique_ptr<sim::World>> world = make_world(*r->recording_, r->models_, options.threads, options.fault);
  if (!world) return world.error();
  r->world_ = std::move(world.value());
  if (Status s = r->restore(r->recording_->checkpoints.front()); !s) return s.error();
  return r;
}

Status Replayer::restore(const Checkpoint& checkpoint) {
  Result<std::vector<uint8_t>> bytes = recording_->snapshot(checkpoint);
  if (!bytes) return bytes.error();
  if (Status s = world_->restore(bytes.value()); !s) {
    return Error{"checkpoint at tick " + std::to_string(checkpoint.tick) + ": " + s.error().message};
  }
  return {};
}

Result<std::unique_ptr<sim::World>> Replayer::world_at_checkpoint(const Checkpoint& checkpoint) const {
  Result<std::unique_ptr<sim::World>> world = make_world(*recording_, models_, 1, nullptr);
  if (!world) return world.error();
  Result<std::vector<uint8_t>> bytes = recording_->snapshot(checkpoint);
  if (!bytes) return bytes.error();
  if (Status s = world.value()->restore(bytes.value()); !s) {
    return Error{"checkpoint at tick " + std::to_string(checkpoint.tick) + ": " + s.error().message};
  }
  return world;
}

ReplayStep Replayer::step() {
  ReplayStep s;
  s.tick = next_tick();
  replay_tick(*recording_, s.tick, *world_);
  s.world_hash = world_->world_hash();
  const TickRecord* t = recording_->tick_record(s.tick);
  s.recorded_hash = t != nullptr ? t->world_hash : 0;
  const sim::TickCheck recorded = recording_->tick_check(s.tick);
  const sim::TickCheck& replayed = world_->tick_check();
  s.state_matches = sim::same_as_recorded(replayed.state, recorded.state, ~uint64_t{0});
  s.palettes_match =
      sim::same_as_recorded(replayed.palettes, recorded.palettes, sim::kPaletteTotalMask) && replayed.palettes_checked == recorded.palettes_checked;
  if (!s.state_matches) s.state_entity = sim::locate_entity(replayed.state, recorded.state);
  if (!s.palettes_match) s.palette_entity = sim::locate_entity(replayed.palettes, recorded.palettes);
  return s;
}

std::optional<uint64_t> last_palette_check_before(const Recording& recording, sim::EntityId entity, uint64_t tick) {
  for (uint64_t t = tick; t > recording.first_tick() && tick - t < sim::kPaletteCheckPeriod;) {
    --t;
    if (sim::palette_slot_due(entity, t)) return t;
    for (const RecordedCommand& c : recording.commands_at(t)) {
      if (c.command.entity == entity) return t;
    }
  }
  return std::nullopt;
}

std::string describe_check_mismatch(const Recording& recording, const ReplayStep& step) {
  const std::string tick = "tick " + std::to_string(step.tick);
  std::string s;
  if (!step.world_hash_matches()) {
    s += tick + ": world hash " + hash_hex(step.world_hash) + ", recorded " + hash_hex(step.recorded_hash) + "\n";
  }
  if (!step.state_matches) {
    s += tick + ": the state of " +
         (step.state_entity ? "entity " + std::to_string(*step.state_entity)
                            : std::string("several entities (or of one the sums cannot name)")) +
         " differs from the recording\n";
  }
  if (!step.palettes_match) {
    if (step.palette_entity) {
      s += tick + ": the palette of ";
      const std::optional<uint64_t> last = last_palette_check_before(recording, *step.palette_entity, step.tick);
      s += "entity " + std::to_string(*step.palette_entity) + " differs from the recording: caught at " + tick + " (" +
           (last ? "last matched " + std::to_string(*last) : std::string("its first check")) + ")\n";
    } else {
      s += tick + ": the palettes of several entities (or of one the sums cannot name) differ from the recording\n";
    }
  }
  return s;
}

Status Replayer::seek(uint64_t tick, ReplayStep* first_mismatch, bool* mismatched) {
  const Recording& rec = *recording_;
  if (tick < rec.first_tick() || tick > rec.end_tick()) {
    return Error{"seek: tick " + std::to_string(tick) + " is outside the recording's ticks " +
                 std::to_string(rec.first_tick()) + ".." + std::to_string(rec.end_tick())};
  }
  const Checkpoint* checkpoint = rec.checkpoint_at_or_before(tick);
  // Stepping on from where the replay is beats restoring when no checkpoint lies in between.
  const bool step_on = next_tick() <= tick && checkpoint->tick <= next_tick();
  if (!step_on) {
    if (Status s = restore(*checkpoint); !s) return s;
  }
  if (mismatched == nullptr) {
    // Nobody asked for the stepped-over ticks to be verified: fast-forward all but the last,
    // whose palettes the World must show after the seek.
    while (next_tick() + 1 < tick) replay_tick(rec, next_tick(), *world_, false);
    if (next_tick() < tick) step();
    return {};
  }
  *mismatched = false;
  while (next_tick() < tick) {
    const ReplayStep s = step();
    if (!s.matches() && !*mismatched) {
      *mismatched = true;
      if (first_mismatch != nullptr) *first_mismatch = s;
    }
  }
  return {};
}

}  // namespace posecast::replay
