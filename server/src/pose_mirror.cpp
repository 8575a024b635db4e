#include "pose_mirror.h"

#include <algorithm>
#include <utility>

#include "pose_recipe.h"
#include "root_hold.h"
#include "posecast/sim/playback_time.h"

namespace posecast::server {
namespace {

float distance_squared(const Vec3& a, const Vec3& b) {
  const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return dx * dx + dy * dy + dz * dz;
}

}  // namespace

PoseMirror::PoseMirror(sim::World& world, const PoseFormats& formats, uint32_t tick_rate_hz,
                       bool attach_recipes, uint32_t root_reference_ticks)
    : world_(world),
      formats_(formats),
      tick_rate_hz_(tick_rate_hz),
      root_reference_ticks_(root_reference_ticks < 1 ? 1 : root_reference_ticks),
      attach_recipes_(attach_recipes) {
  quantizers_.resize(world_.threads());
  for (auto& per_worker : quantizers_) {
    for (const auto& format : formats_.formats) {
      per_worker.push_back(std::make_unique<protocol::PoseQuantizer>(*format));
    }
  }
}

PoseMirror::~PoseMirror() { end_world_tick(); }

std::size_t PoseMirror::find(sim::EntityId id) const {
  const auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) return records_.size();
  return static_cast<std::size_t>(it - ids_.begin());
}

void PoseMirror::set_owner(sim::EntityId id, uint32_t client) {
  const std::size_t i = find(id);
  if (i < records_.size()) records_[i].owner = client;
  ++ownership_version_;
}

void PoseMirror::release_owned_by(uint32_t client) {
  for (EntityRecord& record : records_) {
    if (record.owner == client) record.owner = 0;
  }
  ++ownership_version_;
}

// ---- Which poses the next tick quantises ----------------------------------------------------

void PoseMirror::clear_wanted() {
  for (const uint32_t i : wanted_indices_) wanted_[i] = 0;
  wanted_indices_.clear();
  wanted_.resize(records_.size());  // sync keeps it sized; a guard
}

void PoseMirror::mark_wanted(std::size_t record) {
  if (wanted_[record] != 0) return;
  wanted_[record] = 1;
  wanted_indices_.push_back(static_cast<uint32_t>(record));
}

void PoseMirror::want_all() {
  for (std::size_t i = 0; i < records_.size(); ++i) mark_wanted(i);
}

void PoseMirror::want(sim::EntityId id) {
  const std::size_t i = find(id);
  if (i < records_.size()) mark_wanted(i);
}

void PoseMirror::want_within(const Vec3& center, float radius) {
  const float r2 = radius * radius;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    if (distance_squared(records_[i].position, center) <= r2) mark_wanted(i);
  }
}

void PoseMirror::observe_next_tick() {
  quantize_this_tick_ = true;
  // Entities spawned by this tick's commands have no record yet; they are quantised too (rare).
  quantize_unknown_ = true;
  // Staging is indexed by the World's entity index after this tick's commands: at most the
  // current count plus one spawn per queued command.
  const std::size_t bound = world_.entity_count() + world_.pending_commands() + 16;
  if (staged_.size() < bound) staged_.resize(bound);
  staged_indices_.resize(world_.threads());
  for (auto& indices : staged_indices_) indices.clear();
  // The World evaluates only these poses (it computes no palettes for the server unless
  // ServerOptions::world_palettes): the other entities' clocks advance without one.
  world_.set_local_pose_observer(this);
}

void PoseMirror::skip_next_tick() {
  quantize_this_tick_ = false;
  world_.set_local_pose_observer(nullptr);
}

void PoseMirror::end_world_tick() { world_.set_local_pose_observer(nullptr); }

// ---- The evaluation pass ------------------------------------------------------------------

std::size_t PoseMirror::record_of(std::size_t index, sim::EntityId id) const {
  // Records are kept in the World's entity order (sync merges them by world index), so the
  // record at `index` is normally this entity's: check it before searching.
  return index < ids_.size() && ids_[index] == id ? index : find(id);
}

bool PoseMirror::wants_pose(std::size_t index, sim::EntityId id) const {
  const std::size_t record = record_of(index, id);
  if (record < records_.size()) return wanted_[record] != 0;
  return quantize_unknown_;
}

bool PoseMirror::quantize_setup(std::size_t index, sim::EntityId id, uint32_t& format,
                                const protocol::QuantizedPose*& reference) const {
  const std::size_t record = record_of(index, id);
  reference = nullptr;
  if (record < records_.size()) {
    if (wanted_[record] == 0) return false;  // a World with palettes observes every entity
    const EntityRecord& entity = records_[record];
    format = entity.format_index;
    // The previous quantised pose keeps rotation axes stable (quantization.h, hysteresis).
    if (entity.current_tick != kNoTick) reference = &entity.last_quantized();
    return true;
  }
  if (!quantize_unknown_) return false;
  const sim::EntityState* state = world_.entity_at(index);
  if (state == nullptr || state->id != id || formats_.find(state->model, state->rig) == nullptr) return false;
  format = formats_.index(state->model, state->rig);
  return true;
}

// Each world index is visited by exactly one worker, and it writes only staged_[index] and
// that worker's quantizers: no locks. Records are read only (nothing modifies them during the
// pass).
void PoseMirror::observe_pose(std::size_t index, sim::EntityId id, std::span<const Transform> pose,
                              unsigned worker) {
  if (index >= staged_.size()) {
    staged_overflow_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Staged& staged = staged_[index];
  staged.valid = false;
  staged.id = id;
  uint32_t format = 0;
  const protocol::QuantizedPose* reference = nullptr;
  if (!quantize_setup(index, id, format, reference)) return;
  if (worker >= quantizers_.size() || worker >= staged_indices_.size()) return;
  protocol::PoseQuantizer& quantizer = *quantizers_[worker][format];
  if (staged.pose.values.size() != formats_.formats[format]->node_count() * protocol::kValuesPerNode) {
    staged.pose.reset(*formats_.formats[format]);
  }
  staged.pose.recipe = protocol::PoseRecipe{};
  // The entity's state is the one this pass just evaluated (the worker advances it after this
  // call), and only this worker touches it. By index: a search costs a miss per probe.
  const sim::EntityState* state = world_.entity_at(index);
  const bool own_state = state != nullptr && state->id == id;
  if (attach_recipes_ && own_state) base_layer_recipe(*state, *formats_.rig_of[format], staged.pose.recipe);
  // The root where this pose was evaluated, exact codes (take_staged decides the held value).
  // A root the codes cannot hold (the World refuses such transforms) stays at the origin.
  staged.exact_root = own_state ? world_root(*state) : protocol::RootValue{};
  staged.pose.root = protocol::QuantizedRoot{};
  if (!protocol::quantize_root(staged.exact_root, staged.pose.root)) staged.exact_root = protocol::RootValue{};
  // A pose with a recipe is quantised without a reference, as the clip dictionary predicts
  // (ClipDictionary::predict): its codes are then the prediction's, which encoding vouches for
  // (PoseEncodeOptions::recipe_reproduces_pose). Other poses keep their axes stable against
  // the previous tick's (hysteresis) for smaller deltas.
  if (staged.pose.recipe.count > 0) reference = nullptr;
  staged.valid = quantizer.quantize(pose, reference, staged.pose);
  if (staged.valid) {
    staged_indices_[worker].push_back(static_cast<uint32_t>(index));
  } else {
    staged.pose.recipe = protocol::PoseRecipe{};
  }
}

// ---- After the tick -------------------------------------------------------------------------

void PoseMirror::sync(uint32_t tick, bool world_moved, std::vector<RetiredEntity>& retired) {
  find_respawned(world_moved);
  // The World's membership version says whether any entity came or went (or the World was
  // restored) since the last sync: then the ids are compared, else they are known equal
  // (comparing them costs a cache miss per entity at 10,000 entities).
  const std::size_t count = world_.entity_count();
  bool same = count == records_.size() && respawned_.empty();
  if (same && world_.membership_version() != synced_membership_version_) {
    for (std::size_t i = 0; same && i < count; ++i) same = world_.entity_id_at(i) == ids_[i];
  }
  synced_membership_version_ = world_.membership_version();
  if (!same) rebuild_records(tick, retired);
  refresh_positions();
  mark_changed(tick, world_moved);
  if (quantize_this_tick_) take_staged(tick);
}

// Interest follows each entity's root (records are in the World's entity order after sync):
// one read of the root per entity, beside the state the tick just advanced.
void PoseMirror::refresh_positions() {
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const sim::RootTransform& root = world_.entity_at(i)->root;
    records_[i].position = Vec3{root.x, root.y, root.z};
  }
}

// An id despawned and spawned again within this tick looks unchanged in the id list: find
// those in the tick's commands (a despawn followed by a spawn of the same id), so the new
// entity gets a new generation (and possibly another model).
void PoseMirror::find_respawned(bool world_moved) {
  respawned_.clear();
  despawned_now_.clear();
  for (const sim::QueuedCommand& queued : world_.last_tick_commands()) {
    const sim::Command& command = queued.command;
    if (std::holds_alternative<sim::DespawnCommand>(command.body)) {
      despawned_now_.push_back(command.entity);
    } else if (std::holds_alternative<sim::SpawnCommand>(command.body) &&
               std::find(despawned_now_.begin(), despawned_now_.end(), command.entity) != despawned_now_.end()) {
      respawned_.push_back(command.entity);
    }
  }
  // A World moved by the embedder (a replay's restore) may hold, under a known id, another
  // entity than the record's: a new generation when its model or rig differ.
  if (world_moved) {
    for (std::size_t w = 0; w < world_.entity_count(); ++w) {
      const sim::EntityId id = world_.entity_id_at(w);
      const std::size_t r = find(id);
      const sim::EntityState* state = world_.find_entity(id);
      if (r < records_.size() && state != nullptr &&
          (state->model != records_[r].model || state->rig != records_[r].rig)) {
        respawned_.push_back(id);
      }
    }
  }
  std::sort(respawned_.begin(), respawned_.end());
}

EntityRecord PoseMirror::new_record(sim::EntityId id, uint32_t tick) {
  EntityRecord created;
  created.id = id;
  const auto previous = last_generation_.find(id);
  created.generation = previous == last_generation_.end() ? 1 : static_cast<uint16_t>(previous->second + 1);
  const sim::EntityState* state = world_.find_entity(id);
  created.model = state->model;
  created.rig = state->rig;
  created.spawn_tick = tick;
  created.changed_tick = tick;
  created.format_index = formats_.index(state->model, state->rig);
  created.current.reset(*formats_.formats[created.format_index]);
  return created;
}

// Merges the World's ids (sorted) with the records (sorted): keep, create, or retire.
void PoseMirror::rebuild_records(uint32_t tick, std::vector<RetiredEntity>& retired) {
  const std::size_t count = world_.entity_count();
  std::vector<EntityRecord> next;
  next.reserve(count);
  std::size_t r = 0;
  auto retire = [&](EntityRecord& gone) {
    last_generation_[gone.id] = gone.generation;
    if (gone.owner != 0) ++ownership_version_;  // its owner's SessionStatus changes
    retired.push_back(RetiredEntity{gone.id, gone.generation});
  };
  for (std::size_t w = 0; w < count; ++w) {
    const sim::EntityId id = world_.entity_id_at(w);
    while (r < records_.size() && records_[r].id < id) retire(records_[r++]);
    if (r < records_.size() && records_[r].id == id) {
      if (!std::binary_search(respawned_.begin(), respawned_.end(), id)) {
        next.push_back(std::move(records_[r++]));
        continue;
      }
      retire(records_[r++]);  // the old entity went; a new one took its id
    }
    next.push_back(new_record(id, tick));
  }
  while (r < records_.size()) retire(records_[r++]);
  records_.swap(next);
  ids_.clear();
  for (const EntityRecord& entity : records_) ids_.push_back(entity.id);
  // This tick's flags are used; the records they were set on moved.
  wanted_.assign(records_.size(), 0);
  wanted_indices_.clear();
}

// The tick of the last command for each entity: recipes say how long their motion has been
// steady (PoseRecipe::steady_us), so clients know where a command split the motion. A World
// moved by the embedder (a replay's seek or restore) changed every entity's motion.
void PoseMirror::mark_changed(uint32_t tick, bool world_moved) {
  if (world_moved) {
    for (EntityRecord& entity : records_) entity.changed_tick = tick;
  }
  for (const sim::QueuedCommand& queued : world_.last_tick_commands()) {
    const std::size_t i = find(queued.command.entity);
    if (i < records_.size()) records_[i].changed_tick = tick;
  }
}

// The poses staged this tick, in world index order (the order of the pose callback).
void PoseMirror::take_staged(uint32_t tick) {
  const std::size_t count = world_.entity_count();
  const int64_t now_us = sim::tick_start_us(tick, tick_rate_hz_);
  staged_order_.clear();
  for (const auto& indices : staged_indices_) staged_order_.insert(staged_order_.end(), indices.begin(), indices.end());
  std::sort(staged_order_.begin(), staged_order_.end());
  for (const uint32_t i : staged_order_) {
    if (i >= count || i >= staged_.size()) continue;
    Staged& s = staged_[i];
    if (!s.valid || s.id != records_[i].id) continue;
    EntityRecord& entity = records_[i];
    // The values change hands (the staging slot keeps a buffer for its next pose); the recipe
    // is copied once (std::swap of a QuantizedPose would move its 248-byte recipe three times).
    entity.current.values.swap(s.pose.values);
    entity.current.off_layout = s.pose.off_layout;
    entity.current.recipe = s.pose.recipe;
    entity.current.root = hold_root_for(entity, tick, root_reference_ticks_, s.exact_root, s.pose.root);
    entity.current_exact_root = s.exact_root;
    entity.current_in_history = false;
    entity.current_tick = tick;
    if (entity.current.recipe.count > 0) {
      const int64_t since = entity.changed_tick == kNoTick
                                ? protocol::kMaxRecipeTimeUs
                                : now_us - sim::tick_start_us(entity.changed_tick, tick_rate_hz_);
      entity.current.recipe.steady_us = std::clamp<int64_t>(since, 0, protocol::kMaxRecipeTimeUs);
    }
    s.valid = false;
    ++poses_quantized_;
    if (pose_callback_) pose_callback_(tick, entity.id, entity.generation, entity.current);
  }
}

void PoseMirror::commit_sent(std::vector<uint32_t>& indices, uint32_t tick, uint32_t oldest_needed) {
  for (const uint32_t index : indices) {
    if (index < records_.size()) records_[index].commit_sent(tick, oldest_needed);
  }
  indices.clear();
}

void PoseMirror::sweep_history(uint32_t oldest_needed) {
  const std::size_t slice = (records_.size() + kHistorySweepTicks - 1) / kHistorySweepTicks;
  for (std::size_t k = 0; k < slice; ++k) {
    if (history_sweep_next_ >= records_.size()) history_sweep_next_ = 0;
    records_[history_sweep_next_++].prune_history(oldest_needed);
  }
}

}  // namespace posecast::server
