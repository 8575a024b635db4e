#include "hit_history.h"

#include <algorithm>

#include "pose_recipe.h"
#include "posecast/sim/playback_time.h"

namespace posecast::server {

HitHistory::HitHistory(sim::World& world, const PoseFormats& formats, uint32_t capacity, uint32_t tick_rate_hz)
    : world_(world), formats_(formats), capacity_(std::max<uint32_t>(capacity, 2)), tick_rate_hz_(tick_rate_hz) {}

void HitHistory::observe_next_tick(sim::LocalPoseObserver* inner) {
  inner_ = inner;
  palettes_ = world_.computes_palettes();
  // Indexed by the World's entity index after this tick's commands (as PoseMirror's staging).
  const std::size_t bound = world_.entity_count() + world_.pending_commands() + 16;
  if (staged_.size() < bound) staged_.resize(bound);
  world_.set_local_pose_observer(this);
}

void HitHistory::stage(std::size_t index, sim::EntityId id) const {
  if (index >= staged_.size()) return;
  Staged& s = staged_[index];
  const sim::EntityState* state = world_.entity_at(index);
  if (state == nullptr || state->id != id) return;
  s.valid = true;
  s.id = id;
  s.entry.root = state->root;
  // A fresh recipe: base_layer_recipe fills only the fields of the recipe it finds (a slot's
  // previous crossfade would otherwise leave its source block behind).
  s.entry.recipe = protocol::PoseRecipe{};
  const uint32_t format = formats_.index(state->model, state->rig);
  base_layer_recipe(*state, *formats_.rig_of[format], s.entry.recipe);
}

bool HitHistory::wants_pose(std::size_t index, sim::EntityId id) const {
  stage(index, id);
  return inner_ != nullptr && inner_->wants_pose(index, id);
}

void HitHistory::observe_pose(std::size_t index, sim::EntityId id, std::span<const Transform> local_pose,
                              unsigned worker) {
  if (palettes_) stage(index, id);  // a World with palettes asks no wants_pose
  if (inner_ != nullptr) inner_->observe_pose(index, id, local_pose, worker);
}

// Entities follow the World's id order: kept (with their rings) by id, new ones added, gone
// ones dropped; one whose model or rig changed under its id starts an empty ring.
void HitHistory::follow_membership() {
  const std::size_t count = world_.entity_count();
  if (world_.membership_version() == membership_ && entities_.size() == count) return;
  membership_ = world_.membership_version();
  std::vector<EntityHitHistory> next(count);
  std::size_t old = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const sim::EntityId id = world_.entity_id_at(i);
    while (old < entities_.size() && entities_[old].id < id) ++old;
    if (old < entities_.size() && entities_[old].id == id) {
      next[i] = std::move(entities_[old++]);
    } else {
      next[i].id = id;
      next[i].ring.resize(capacity_);
    }
  }
  entities_ = std::move(next);
}

void HitHistory::commit(uint32_t tick, bool world_moved) {
  inner_ = nullptr;
  newest_tick_ = tick;
  follow_membership();
  for (const sim::QueuedCommand& queued : world_.last_tick_commands()) {
    const auto it = std::lower_bound(entities_.begin(), entities_.end(), queued.command.entity,
                                     [](const EntityHitHistory& e, sim::EntityId id) { return e.id < id; });
    if (it != entities_.end() && it->id == queued.command.entity) it->changed_tick = tick;
  }
  const int64_t now_us = sim::tick_start_us(tick, tick_rate_hz_);
  for (std::size_t i = 0; i < entities_.size() && i < staged_.size(); ++i) {
    Staged& s = staged_[i];
    EntityHitHistory& e = entities_[i];
    if (!s.valid || s.id != e.id) continue;
    s.valid = false;
    const sim::EntityState* state = world_.entity_at(i);
    const uint32_t format = formats_.index(state->model, state->rig);
    if (format != e.format || world_moved) e.count = 0, e.changed_tick = tick;
    e.format = format;
    if (e.count > 0 && e.at(0).tick + 1 != tick) e.count = 0;  // a gap: ticks are consecutive
    e.newest = e.count == 0 ? 0 : (e.newest + 1) % capacity_;
    e.count = std::min(e.count + 1, capacity_);
    HitHistoryEntry& entry = e.ring[e.newest];
    entry.tick = tick;
    entry.root = s.entry.root;
    entry.held = false;
    entry.recipe = s.entry.recipe;
    if (entry.recipe.count > 0) {
      // How long the motion has been steady (PoseRecipe::steady_us), as the mirror says it.
      const int64_t since = e.changed_tick == protocol::kNoTick
                                ? protocol::kMaxRecipeTimeUs
                                : now_us - sim::tick_start_us(e.changed_tick, tick_rate_hz_);
      entry.recipe.steady_us = std::clamp<int64_t>(since, 0, protocol::kMaxRecipeTimeUs);
    }
  }
}

// Both lists are in id order: one merge walk.
void HitHistory::take_held_roots(std::span<const EntityRecord> records, uint32_t tick) {
  std::size_t r = 0;
  for (EntityHitHistory& e : entities_) {
    while (r < records.size() && records[r].id < e.id) ++r;
    if (r == records.size()) break;
    const EntityRecord& record = records[r];
    if (record.id != e.id || record.current_tick != tick || e.count == 0 || e.at(0).tick != tick) continue;
    HitHistoryEntry& entry = e.ring[e.newest];
    const protocol::RootValue held = protocol::dequantize_root(record.current.root);
    entry.root = sim::RootTransform{held.x, held.y, held.z, held.yaw};
    entry.held = true;
  }
}

}  // namespace posecast::server
