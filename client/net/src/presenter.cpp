#include "posecast/client/presenter.h"

#include <algorithm>
#include <array>
#include <type_traits>
#include <variant>

#include "posecast/palette_batch.h"

namespace posecast::client {

using protocol::kNoTick;

Presenter::Presenter(const PresenterSettings& settings)
    : settings_(settings), predictor_(settings.prediction), buffer_(settings.buffer), playout_(settings.playout) {}

void Presenter::start(uint32_t tick_rate_hz, uint32_t send_rate_hz, AssetBinding binding) {
  binding_ = std::move(binding);
  buffer_.clear();
  buffer_.set_tick_rate(tick_rate_hz);
  playout_.reset(tick_rate_hz, send_rate_hz);
  registry_.clear();
  presented_.clear();
  events_.start(tick_rate_hz);
  fired_events_.clear();
  predictor_.start(tick_rate_hz, binding_);
}

void Presenter::clear() {
  registry_.clear();
  buffer_.clear();
  presented_.clear();
  events_.clear();
  fired_events_.clear();
  predictor_.clear();
  binding_ = AssetBinding{};
}

void Presenter::on_events(const protocol::AnimationEvents& events) {
  const std::size_t kept = events_.receive(events);
  counters_.events_received += kept;
  counters_.events_duplicates += events.events.size() - kept;
}

PartResult Presenter::on_snapshot(const protocol::Snapshot& part, int64_t arrival_us) {
  ++counters_.snapshot_parts;
  PartResult result;
  if (part.part_count == 0 || part.part_index >= part.part_count) {
    ++counters_.inconsistent_parts;
    result.outcome = PartOutcome::kInconsistent;
    return result;
  }
  result = buffer_.apply(part, registry_, arrival_us);
  switch (result.outcome) {
    case PartOutcome::kApplied: break;
    case PartOutcome::kDuplicate: ++counters_.duplicate_parts; return result;
    case PartOutcome::kTooOld: ++counters_.too_old_parts; return result;
    case PartOutcome::kInconsistent: ++counters_.inconsistent_parts; return result;
  }
  counters_.records_decoded += result.decoded;
  counters_.decode_errors += result.decode_errors + result.over_capacity;
  counters_.missing_reference += result.missing_reference;
  counters_.unknown_entity += result.unknown_entity;
  counters_.stale_records += result.stale_generation;
  counters_.duplicate_records += result.duplicate_records;
  playout_.on_packet(part.server_tick, part.part_count, arrival_us);
  if (result.new_tick) ++counters_.snapshot_ticks;
  if (result.completed) ++counters_.snapshots_complete;
  return result;
}

void Presenter::on_spawn(const protocol::EntitySpawn& spawn) {
  const SpawnOutcome outcome = registry_.on_spawn(spawn, binding_);
  if (outcome == SpawnOutcome::kAdded || outcome == SpawnOutcome::kReplaced) ++counters_.spawns;
  if (outcome == SpawnOutcome::kUnknownModel) ++counters_.unknown_model_spawns;
}

void Presenter::on_despawn(const protocol::EntityDespawn& despawn) {
  if (registry_.on_despawn(despawn) == DespawnOutcome::kApplied) ++counters_.despawns;
}

PayloadOutcome Presenter::receive(std::span<const uint8_t> payload, int64_t arrival_us) {
  Result<protocol::Message> message = protocol::decode_message(payload);
  if (!message) return PayloadOutcome::kMalformed;
  return std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, protocol::Snapshot>) {
          on_snapshot(m, arrival_us);
        } else if constexpr (std::is_same_v<T, protocol::EntitySpawn>) {
          on_spawn(m);
        } else if constexpr (std::is_same_v<T, protocol::EntityDespawn>) {
          on_despawn(m);
        } else if constexpr (std::is_same_v<T, protocol::AnimationEvents>) {
          on_events(m);
        } else {
          return PayloadOutcome::kNotPresentable;
        }
        return PayloadOutcome::kTaken;
      },
      message.value());
}

uint32_t Presenter::render_tick(int64_t render_us) const {
  const int64_t rate = buffer_.tick_rate();
  return render_us <= 0
             ? 0
             : static_cast<uint32_t>(std::min<int64_t>(render_us * rate / 1'000'000, kNoTick - 1));
}

void Presenter::present(int64_t now_us) {
  playout_.advance(now_us);
  presented_.clear();
  counters_.extrapolating = 0;
  counters_.from_recipes = 0;
  if (!playout_.started()) return;
  const int64_t render_us = playout_.render_time_us();
  // Despawned entities leave once the render time reaches their despawn tick.
  registry_.retire(render_tick(render_us));
  present_poses(render_us);
  compute_pending_palettes(registry_.entities());
  publish_presented();
  fire_events(render_us);
}

void Presenter::fire_events(int64_t render_us) {
  fired_events_.clear();
  due_events_.clear();
  events_.take_due(render_us, due_events_);
  for (const QueuedEvent& due : due_events_) {
    FiredEvent fired;
    fired.sequence = due.sequence;
    fired.event = due.event;
    fired.time_us = due.time_us;
    const ClientEntity* entity = registry_.find(due.event.entity_id);
    if (entity != nullptr && entity->generation == due.event.generation && entity->model != nullptr &&
        entity->model->model != nullptr && entity->rig_index < entity->model->model->rigs.size()) {
      const Rig& rig = entity->model->model->rigs[entity->rig_index];
      if (due.event.clip < rig.clips.size()) {
        fired.clip = &rig.clips[due.event.clip];
        if (due.event.marker < fired.clip->markers.size()) fired.marker = &fired.clip->markers[due.event.marker];
      }
    }
    fired_events_.push_back(fired);
  }
  counters_.events_fired += fired_events_.size();
}

void Presenter::present_poses(int64_t render_us) {
  // Where the render time falls among the views: the same for every entity.
  const ViewSplit split = buffer_.locate(render_us);
  const std::span<ClientEntity> entities = registry_.entities();
  shown_indices_.clear();
  palette_indices_.clear();
  for (std::size_t index = 0; index < entities.size(); ++index) {
    ClientEntity& entity = entities[index];
    if (render_us < buffer_.tick_time_us(entity.spawn_tick) &&
        entity.track.mode() == PresentMode::kNone) {
      // Not spawned yet at the render time (a late joiner's entities spawned long ago show
      // at once).
      continue;
    }
    // The entity's index in the registry is its index in every view holding all entities.
    const SampleWindow window = buffer_.window(entity.id, entity.generation, split, index);
    const uint64_t corrections_before = entity.track.corrections();
    // Grows once per larger rig (the first frame that shows one); no-op after.
    scratch_.reserve(entity.skeleton->node_count());
    // Palettes are left pending and computed below, eight entities of a skeleton at a time.
    if (!entity.track.present(*entity.skeleton, window, render_us, settings_.present,
                              entity.recipes, &scratch_, /*defer_palette=*/true)) {
      continue;
    }
    counters_.corrections += entity.track.corrections() - corrections_before;
    entity.root_track.present(window, render_us, settings_.present, buffer_.tick_rate());
    shown_indices_.push_back(index);
    if (entity.track.palette_pending()) palette_indices_.push_back(index);
  }
}

void Presenter::publish_presented() {
  const std::span<ClientEntity> entities = registry_.entities();
  for (const std::size_t index : shown_indices_) {
    const ClientEntity& entity = entities[index];
    const PoseTrack& track = entity.track;
    if (track.palette_refused()) continue;
    const PresentMode mode = track.mode();
    const bool extrapolated = mode == PresentMode::kExtrapolate || mode == PresentMode::kStalled;
    if (extrapolated) ++counters_.extrapolating;
    if (track.recipe()) ++counters_.from_recipes;
    presented_.push_back(PresentedEntity{entity.id, entity.generation, entity.model_id,
                                         entity.rig_index, entity.model->model.get(),
                                         entity.skeleton, mode, track.correcting(), track.recipe(),
                                         track.locals(), track.palette(), track.recipe_miss(),
                                         &track.mesh_model(), entity.root_track.value()});
    ++counters_.recipe_misses[static_cast<std::size_t>(track.recipe_miss())];
  }
}

void Presenter::present_predicted(int64_t present_us, int64_t now_us) {
  if (!predictor_.enabled()) return;
  predictor_.advance(present_us, now_us);
  std::size_t shown = 0;
  for (const PredictedView& view : predictor_.views()) shown += show_predicted(view) ? 1 : 0;
  predictor_.count_presented(shown);
}

bool Presenter::show_predicted(const PredictedView& view) {
  auto it = std::lower_bound(presented_.begin(), presented_.end(), view.id,
                             [](const PresentedEntity& e, uint32_t id) { return e.id < id; });
  if (it == presented_.end() || it->id != view.id || it->generation != view.generation) return false;
  if (it->skeleton == nullptr || view.palette.size() != it->skeleton->joint_count() ||
      view.locals.size() != it->skeleton->node_count()) {
    return false;
  }
  it->mode = PresentMode::kPredicted;
  it->correcting = view.correcting;
  it->from_recipe = false;
  it->recipe_miss = RecipeMiss::kNone;
  it->locals = view.locals;
  it->palette = view.palette;
  it->mesh_model = view.mesh_model;
  it->root = view.root;
  return true;
}

const PresentedEntity* Presenter::find(uint32_t entity_id) const {
  auto it = std::lower_bound(presented_.begin(), presented_.end(), entity_id,
                             [](const PresentedEntity& e, uint32_t id) { return e.id < id; });
  return it != presented_.end() && it->id == entity_id ? &*it : nullptr;
}

// Runs PaletteBatchJob over the entities in palette_indices_, in runs of up to eight that
// share a skeleton (a registry holds a model's entities next to each other only by chance, so
// runs are taken as they come). An entity whose palette is refused (a singular mesh node) is
// not presented this frame, as when its own PaletteJob failed inside PoseTrack::present().
void Presenter::compute_pending_palettes(std::span<ClientEntity> entities) {
  std::array<std::span<const Transform>, kPaletteBatchSize> locals;
  std::array<std::span<glm::mat4>, kPaletteBatchSize> palettes;
  std::array<glm::mat4, kPaletteBatchSize> mesh_models;
  std::size_t next = 0;
  while (next < palette_indices_.size()) {
    const Skeleton* skeleton = entities[palette_indices_[next]].skeleton;
    bool validated = true;
    std::size_t count = 0;
    for (; next + count < palette_indices_.size() && count < kPaletteBatchSize; ++count) {
      ClientEntity& entity = entities[palette_indices_[next + count]];
      if (entity.skeleton != skeleton) break;
      locals[count] = entity.track.locals();
      palettes[count] = entity.track.pending_palette();
      validated = validated && entity.track.skeleton_validated();
    }
    const std::size_t floats = PaletteBatchJob::scratch_floats(*skeleton);
    if (batch_scratch_.size() < floats) batch_scratch_.resize(floats);
    PaletteBatchJob job;
    job.skeleton = skeleton;
    job.locals = std::span<const std::span<const Transform>>(locals.data(), count);
    job.palettes = std::span<const std::span<glm::mat4>>(palettes.data(), count);
    job.mesh_models = std::span<glm::mat4>(mesh_models.data(), count);
    job.scratch = batch_scratch_;
    job.assets_validated = validated;
    const uint32_t written = job.Run();
    for (std::size_t lane = 0; lane < count; ++lane) {
      PoseTrack& track = entities[palette_indices_[next + lane]].track;
      const bool ok = (written & (1u << lane)) != 0;
      track.finish_palette(ok, mesh_models[lane]);
    }
    next += count;
  }
}

PresentMode Presenter::evaluate_at(uint32_t entity_id, int64_t render_us,
                                   std::span<glm::mat4> palette) {
  const ClientEntity* entity = registry_.find(entity_id);
  if (entity == nullptr || palette.size() != entity->skeleton->joint_count()) {
    return PresentMode::kNone;
  }
  scratch_track_.reset(entity->skeleton->node_count(), entity->skeleton->joint_count(),
                       /*skeleton_validated=*/true,  // AssetLibrary::add validated it
                       sim::max_clip_tracks(entity->model->model->rigs[entity->rig_index].clips));
  const SampleWindow window = buffer_.window(entity_id, entity->generation, render_us);
  if (!scratch_track_.present(*entity->skeleton, window, render_us, settings_.present,
                              entity->recipes)) {
    return PresentMode::kNone;
  }
  std::copy(scratch_track_.palette().begin(), scratch_track_.palette().end(), palette.begin());
  return scratch_track_.mode();
}

PresenterStats Presenter::stats(int64_t now_us) const {
  PresenterStats s = counters_;
  s.loss_percent = playout_.loss() * 100.0;
  s.jitter_ms = static_cast<double>(playout_.jitter_us()) / 1000.0;
  s.loss_cover = playout_.cover();
  s.events_waiting = events_.waiting();
  s.target_delay_ms = static_cast<double>(playout_.target_delay_us()) / 1000.0;
  if (playout_.started()) {
    s.delay_ms = static_cast<double>(playout_.current_delay_us(now_us)) / 1000.0;
    s.buffer_depth = buffer_.depth_after(playout_.render_time_us());
  }
  return s;
}

}  // namespace posecast::client
