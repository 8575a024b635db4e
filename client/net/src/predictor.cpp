#include "posecast/client/predictor.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "posecast/client/pose_blend.h"
#include "posecast/hash.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/protocol/command_translation.h"
#include "posecast/sim/playback_time.h"

namespace posecast::client {
struct Predictor::Entity {
  // Copies the local pose the World evaluates for its one entity (the predicted tick's pose).
  class LocalsCopy final : public sim::LocalPoseObserver {
   public:
    void observe_pose(std::size_t, sim::EntityId, std::span<const Transform> pose, unsigned) override {
      locals.assign(pose.begin(), pose.end());
    }
    std::vector<Transform> locals;
  };

  uint32_t id = 0;
  uint16_t generation = 0;
  std::unique_ptr<sim::World> world;
  LocalsCopy observer;
  bool started = false;         // a server state restored
  bool have_state = false;
  uint32_t newest_state_tick = 0;
  uint32_t applied_sequence = 0;
  // Commands the server had not processed at the newest OwnerState, by sequence; their
  // apply_tick is the stamp. next_command: the first not yet applied in the current pass.
  struct Pending {
    protocol::ClientCommand command;
    bool refused = false;  // the shared translation refused it: never simulated again
  };
  std::deque<Pending> commands;
  std::size_t next_command = 0;
  struct TickHashes {
    uint64_t tick = ~uint64_t{0};
    uint64_t state = 0;
    uint64_t palette = 0;
  };
  std::vector<TickHashes> ring;
  uint32_t shown_tick = 0;
  // The tick before the newest's pose and root: what is shown lies between the two.
  std::vector<Transform> previous;
  protocol::RootValue previous_root;
  float fraction = 1.0f;  // of the way from `previous` to the newest tick
  // What is shown: the newest tick's pose (observer.locals, root) plus a correction decaying
  // from 1 to 0 over smoothing_us from correction_start_us.
  std::vector<Transform> current;  // between the two newest ticks, at `fraction`
  std::vector<Transform> shown;    // current with the correction applied
  std::vector<Transform> delta;
  protocol::RootValue root, shown_root, delta_root;
  int64_t correction_start_us = -1;
  std::vector<glm::mat4> models;
  std::vector<glm::mat4> palette;
  glm::mat4 mesh_model{1.0f};
};

Predictor::Predictor(const PredictionSettings& settings) : settings_(settings) {}
Predictor::~Predictor() = default;

void Predictor::start(uint32_t tick_rate_hz, const AssetBinding& binding) {
  clear();
  tick_rate_hz_ = tick_rate_hz;
  models_.clear();
  for (uint32_t id = 0; id < binding.size(); ++id) {
    const ClientModel* local = binding.find(id);
    if (local == nullptr) break;  // the server's ids count from 0; a gap ends the usable ones
    models_.push_back(local->model);
  }
  started_ = true;
}

void Predictor::clear() {
  entities_.clear();
  views_.clear();
  present_tick_ = 0;
  started_ = false;
}

Predictor::Entity* Predictor::find(uint32_t id) {
  for (auto& e : entities_) {
    if (e->id == id) return e.get();
  }
  return nullptr;
}
const Predictor::Entity* Predictor::find(uint32_t id) const {
  for (const auto& e : entities_) {
    if (e->id == id) return e.get();
  }
  return nullptr;
}

Predictor::Entity& Predictor::entity(uint32_t id, uint16_t generation) {
  Entity* e = find(id);
  if (e != nullptr && e->generation == generation) return *e;
  if (e == nullptr) {
    entities_.push_back(std::make_unique<Entity>());
    e = entities_.back().get();
  } else {
    *e = Entity{};  // another entity under this id: start over
  }
  e->id = id;
  e->generation = generation;
  sim::WorldOptions options;
  options.tick_rate_hz = tick_rate_hz_;
  options.hash_palettes = true;  // one entity: its palette hash is cheap and checks (c) in tests
  e->world = std::make_unique<sim::World>(options);
  for (const auto& model : models_) {
    if (!e->world->add_model(model)) break;  // a model the World refuses: its entities fail to restore
  }
  e->world->set_local_pose_observer(&e->observer);
  e->ring.assign(std::max<std::size_t>(settings_.history_ticks, 2), Entity::TickHashes{});
  return *e;
}

uint32_t Predictor::tick_after(int64_t server_us) const {
  // The server applies a command that arrives during tick n's interval at tick n + 1.
  // tick_start_us(n) = floor(n * 1e6 / rate): the tick running at time t is floor(t * rate / 1e6).
  return static_cast<uint32_t>(std::max<int64_t>(server_us, 0) * tick_rate_hz_ / 1'000'000 + 1);
}

uint32_t Predictor::stamp_tick(int64_t server_arrival_us) const {
  uint32_t tick = tick_after(server_arrival_us);
  for (const auto& e : entities_) {
    if (e->started) tick = std::max<uint32_t>(tick, static_cast<uint32_t>(e->world->tick_index()));
  }
  return std::max(tick, present_tick_);
}

void Predictor::on_command(const protocol::ClientCommand& command) {
  if (!enabled()) return;
  // Only an OwnerState starts a new generation: a command naming another one than the
  // prediction's is refused by the server as stale, so it is not predicted.
  if (const Entity* known = find(command.entity_id); known != nullptr && known->generation != command.generation) {
    ++stats_.prediction_refused;
    return;
  }
  Entity& e = entity(command.entity_id, command.generation);
  const uint64_t lead = static_cast<uint64_t>(settings_.max_lead_us) * tick_rate_hz_ / 1'000'000;
  if (command.apply_tick > present_tick_ + lead) {
    ++stats_.prediction_refused;  // the server refuses it too (too early)
    return;
  }
  e.commands.push_back({command, false});
  if (!e.started) return;
  // Applied at once: run up to its tick (commands are stamped no earlier than the ticks run).
  uint32_t ran = 0;
  while (e.world->tick_index() <= command.apply_tick && ran++ < settings_.max_ticks_per_advance) {
    step(e);
    ++stats_.predicted_ticks;
  }
  present_tick_ = std::max<uint32_t>(present_tick_, static_cast<uint32_t>(e.world->tick_index() - 1));
}

void Predictor::step(Entity& e) {
  const uint64_t tick = e.world->tick_index();
  while (e.next_command < e.commands.size() && e.commands[e.next_command].command.apply_tick <= tick) {
    Entity::Pending& pending = e.commands[e.next_command++];
    if (pending.refused) continue;
    Result<sim::Command> translated = protocol::translate_client_command(pending.command, *e.world, tick);
    if (translated) {
      e.world->submit(0, std::move(translated).value());
    } else {
      // Counted once: the server refuses it alike, so it is never simulated again.
      ++stats_.prediction_refused;
      pending.refused = true;
    }
  }
  e.previous.swap(e.observer.locals);  // the tick about to run overwrites observer.locals
  e.previous_root = e.root;
  e.world->tick();
  if (e.previous.size() != e.observer.locals.size()) e.previous = e.observer.locals;
  Entity::TickHashes& h = e.ring[tick % e.ring.size()];
  h.tick = tick;
  h.state = hash_bytes(e.world->entity_snapshot(e.id));
  h.palette = e.world->entity_count() > 0 ? e.world->palette_hash_at(0) : 0;
  e.shown_tick = static_cast<uint32_t>(tick);
  if (const sim::EntityState* s = e.world->find_entity(e.id)) e.root = {s->root.x, s->root.y, s->root.z, s->root.yaw};
}

bool Predictor::on_owner_state(const protocol::OwnerState& state, bool owned, int64_t now_us) {
  if (!enabled() || !owned) {
    ++stats_.owner_states_dropped;
    return false;
  }
  // A state of an earlier generation of the entity (16-bit serial arithmetic) arrived late.
  if (const Entity* known = find(state.entity_id);
      known != nullptr && static_cast<int16_t>(static_cast<uint16_t>(state.generation - known->generation)) < 0) {
    ++stats_.owner_states_dropped;
    return false;
  }
  Entity& e = entity(state.entity_id, state.generation);
  if (e.have_state && state.server_tick <= e.newest_state_tick) {
    ++stats_.owner_states_dropped;  // reordered or repeated
    return false;
  }
  // The commands the server has processed are in its state: drop them.
  std::size_t processed = 0;
  while (processed < e.commands.size() && e.commands[processed].command.sequence <= state.applied_sequence) {
    ++processed;
  }
  const uint32_t until = std::max<uint32_t>(present_tick_, state.server_tick);
  catch_up(e, state.server_tick);
  const Entity::TickHashes& h = e.ring[state.server_tick % e.ring.size()];
  if (e.started && h.tick == state.server_tick && h.state == hash_bytes(state.state)) {
    e.commands.erase(e.commands.begin(), e.commands.begin() + static_cast<std::ptrdiff_t>(processed));
    e.next_command -= std::min(e.next_command, processed);
    ++stats_.prediction_confirmed;
  } else {
    const bool was_started = e.started;
    const std::vector<Transform> before = e.shown;
    const protocol::RootValue before_root = e.shown_root;
    Entity::TickHashes saved = h;
    if (!reconcile(e, state, until)) {
      e.ring[state.server_tick % e.ring.size()] = saved;
      ++stats_.owner_states_dropped;
      return false;
    }
    e.commands.erase(e.commands.begin(), e.commands.begin() + static_cast<std::ptrdiff_t>(std::min(processed, e.commands.size())));
    e.next_command -= std::min(e.next_command, processed);
    if (was_started) {
      ++stats_.prediction_corrections;
      // Blend from what was shown to the new prediction (update_shown decays the difference).
      e.correction_start_us = -1;
      update_shown(e, now_us);  // the new prediction, uncorrected
      if (!before.empty() && before.size() == e.shown.size()) {
        e.delta.resize(before.size());
        difference_locals(before, e.shown, e.delta);
        e.delta_root = {before_root.x - e.shown_root.x, before_root.y - e.shown_root.y,
                        before_root.z - e.shown_root.z, protocol::wrap_root_angle(before_root.yaw - e.shown_root.yaw)};
        e.correction_start_us = now_us;
        const double dx = static_cast<double>(e.delta_root.x);
        const double dz = static_cast<double>(e.delta_root.z);
        stats_.last_correction_m = std::sqrt(dx * dx + dz * dz);
      }
    }
  }
  e.have_state = true;
  e.newest_state_tick = state.server_tick;
  e.applied_sequence = state.applied_sequence;
  ++stats_.owner_states;
  update_shown(e, now_us);
  rebuild_views();
  return true;
}

void Predictor::catch_up(Entity& e, uint32_t tick) {
  if (!e.started) return;
  uint32_t ran = 0;
  while (e.world->tick_index() <= tick && ran++ < settings_.max_ticks_per_advance) {
    step(e);
    ++stats_.predicted_ticks;
  }
}

bool Predictor::reconcile(Entity& e, const protocol::OwnerState& state, uint32_t until) {
  if (!e.world->restore_entity(state.state, e.id)) return false;
  e.world->set_tick_index(uint64_t{state.server_tick} + 1);
  e.started = true;
  // Every command not processed by the server is simulated again from tick S + 1: those
  // stamped at or before S (late on the server) at S + 1, the rest at their stamps.
  e.next_command = 0;
  while (e.next_command < e.commands.size() && e.commands[e.next_command].command.sequence <= state.applied_sequence) {
    ++e.next_command;
  }
  Entity::TickHashes& h = e.ring[state.server_tick % e.ring.size()];
  h.tick = state.server_tick;
  h.state = hash_bytes(state.state);
  h.palette = 0;  // not evaluated here
  uint32_t ran = 0;
  while (e.world->tick_index() <= until && ran++ < settings_.max_ticks_per_advance) {
    step(e);
    ++stats_.resimulated_ticks;
  }
  // Further behind than max_ticks_per_advance: advance() catches up over the next frames.
  return true;
}

void Predictor::advance(int64_t present_us, int64_t now_us) {
  if (!enabled()) return;
  const uint32_t present_tick = tick_after(present_us);
  present_tick_ = std::max(present_tick_, present_tick);
  // The present time lies in tick present_tick - 1's interval: shown between that tick's pose
  // and present_tick's at the fraction of the interval gone.
  const uint64_t before = present_tick - 1;
  const int64_t start = sim::tick_start_us(before, tick_rate_hz_);
  const int64_t length = sim::tick_duration_us(before, tick_rate_hz_);
  const float fraction = std::clamp(static_cast<float>(present_us - start) / static_cast<float>(length), 0.0f, 1.0f);
  for (auto& owned : entities_) {
    Entity& e = *owned;
    if (!e.started) continue;
    uint32_t ran = 0;
    while (e.world->tick_index() <= present_tick_ && ran++ < settings_.max_ticks_per_advance) {
      step(e);
      ++stats_.predicted_ticks;
    }
    // Run further ahead by a command stamped past the present: its newest tick, whole.
    e.fraction = e.shown_tick == present_tick ? fraction : 1.0f;
    update_shown(e, now_us);
  }
  rebuild_views();
}

void Predictor::retain_owned(const std::function<bool(uint32_t)>& owns) {
  const std::size_t before = entities_.size();
  std::erase_if(entities_, [&](const std::unique_ptr<Entity>& e) { return !owns(e->id); });
  if (entities_.size() != before) rebuild_views();
}

void Predictor::update_shown(Entity& e, int64_t now_us) {
  const sim::EntityState* state = e.world->find_entity(e.id);
  const Rig* rig = e.world->entity_rig(e.id);
  if (e.observer.locals.empty() || state == nullptr || rig == nullptr) return;
  // The prediction at the present: between the two newest ticks.
  e.current.resize(e.observer.locals.size());
  interpolate_locals(e.previous, e.observer.locals, e.fraction, RotationBlend::kSlerp, e.current);
  const std::vector<Transform>& target = e.current;
  const protocol::RootValue root = protocol::lerp_root(e.previous_root, e.root, e.fraction);
  float w = 0.0f;
  if (e.correction_start_us >= 0 && settings_.smoothing_us > 0 && e.delta.size() == target.size()) {
    const int64_t elapsed = now_us - e.correction_start_us;
    w = elapsed >= settings_.smoothing_us ? 0.0f
                                          : 1.0f - static_cast<float>(elapsed) / static_cast<float>(settings_.smoothing_us);
    w = std::clamp(w, 0.0f, 1.0f);
  }
  if (w == 0.0f) e.correction_start_us = -1;
  e.shown.resize(target.size());
  if (w > 0.0f) {
    apply_correction(target, e.delta, w, e.shown);
  } else {
    e.shown = target;
  }
  e.shown_root = {root.x + e.delta_root.x * w, root.y + e.delta_root.y * w, root.z + e.delta_root.z * w,
                  protocol::wrap_root_angle(root.yaw + e.delta_root.yaw * w)};
  const Skeleton& skeleton = rig->skeleton;
  e.models.resize(skeleton.node_count());
  e.palette.resize(skeleton.joint_count());
  LocalToModelJob l2m{&skeleton, e.shown, e.models};
  l2m.assets_validated = true;
  PaletteJob palette{&skeleton, e.models, e.palette};
  palette.assets_validated = true;
  if (!l2m.Run() || !palette.Run()) return;
  e.mesh_model = skeleton.mesh_node >= 0 ? e.models[static_cast<std::size_t>(skeleton.mesh_node)] : glm::mat4(1.0f);
}

void Predictor::rebuild_views() {
  views_.clear();
  for (const auto& owned : entities_) {
    const Entity& e = *owned;
    if (!e.started || e.shown.empty() || e.palette.empty()) continue;
    views_.push_back(PredictedView{e.id, e.generation, e.shown_tick, e.correction_start_us >= 0, e.shown, e.palette,
                                   &e.mesh_model, e.shown_root});
  }
}

bool Predictor::predicted_hashes(uint32_t entity_id, uint32_t tick, uint64_t& state_hash,
                                 uint64_t& palette_hash) const {
  const Entity* e = find(entity_id);
  if (e == nullptr || e->ring.empty()) return false;
  const Entity::TickHashes& h = e->ring[tick % e->ring.size()];
  if (h.tick != tick) return false;
  state_hash = h.state;
  palette_hash = h.palette;
  return true;
}

const sim::World* Predictor::world(uint32_t entity_id) const {
  const Entity* e = find(entity_id);
  return e != nullptr && e->started ? e->world.get() : nullptr;
}

}  // namespace posecast::client
