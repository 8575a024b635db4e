#pragma once
// HitHistory: a bounded history of every entity's pose description, for lag-compensated hit
// queries (docs/hit-queries.md). Per entity a ring of its last `capacity` ticks, each the
// recipe of its pose (server/src/pose_recipe.h: clips, times, weights, fades; count 0 when
// the pose is not layer 0's motion alone) and its root transform as clients were shown it (the
// held root of the root coding): a few hundred bytes a tick instead of a palette, re-evaluated
// on demand (hit_query.h).
//
// It takes the state inside the World's evaluation pass, as a LocalPoseObserver in front of
// the PoseMirror (the World has one observer): wants_pose is asked for each entity after the
// tick's commands and before it advances, which is the state its pose at that tick is
// evaluated from (a World computing palettes asks observe_pose instead, at the same moment).
// Each index is visited by exactly one worker, which writes only that index's staging slot.
//
// Tick thread only, except wants_pose / observe_pose (the World's evaluation threads).

#include <cstdint>
#include <span>
#include <vector>

#include "entity_record.h"
#include "pose_formats.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sim/world.h"

namespace posecast::server {

struct HitHistoryEntry {
  uint32_t tick = 0;  // session tick
  // Where clients were shown the entity at `tick`: the held root its record carried
  // (dequantised, docs/codec.md "Root transforms") when the tick quantised its pose, else the
  // World's exact root (a tick no client was sent: within 0.92 mm of any held root).
  sim::RootTransform root;
  bool held = false;  // `root` is the held root
  protocol::PoseRecipe recipe;  // count 0: the pose has no recipe (not evaluable later)
};

struct EntityHitHistory {
  sim::EntityId id = 0;
  uint32_t format = 0;          // PoseFormats index of its (model, rig)
  uint32_t changed_tick = protocol::kNoTick;  // last tick a command addressed it
  uint32_t newest = 0;          // slot of the newest entry
  uint32_t count = 0;           // entries held, <= capacity
  std::vector<HitHistoryEntry> ring;  // capacity entries, allocated once
  // The entry `back` ticks before the newest (0: newest); back < count.
  const HitHistoryEntry& at(uint32_t back) const {
    const uint32_t n = static_cast<uint32_t>(ring.size());
    return ring[(newest + n - back) % n];
  }
};

class HitHistory final : public sim::LocalPoseObserver {
 public:
  // `capacity` ticks per entity (>= 2). `world` and `formats` outlive the history.
  HitHistory(sim::World& world, const PoseFormats& formats, uint32_t capacity, uint32_t tick_rate_hz);

  // Before the World's tick: stands in front of `inner` (the observer the tick would have
  // had, or nullptr) as the World's observer for this tick.
  void observe_next_tick(sim::LocalPoseObserver* inner);
  // After the World's tick `tick` (a session tick): detaches from the World (restoring
  // nothing: the caller's end_world_tick clears the observer) and appends the staged entries.
  // world_moved: the embedder moved the World (every motion changed).
  void commit(uint32_t tick, bool world_moved);
  // After commit(tick) and the PoseMirror's sync of the same tick: the held roots of the
  // records (id order) whose pose was quantised at `tick` replace the exact roots of this
  // tick's entries, so a query rewinds to the root a client was shown, not the World's.
  void take_held_roots(std::span<const EntityRecord> records, uint32_t tick);

  // Entities in id order.
  std::span<const EntityHitHistory> entities() const { return entities_; }
  uint32_t capacity() const { return capacity_; }
  // The session tick of the last commit(); kNoTick before the first.
  uint32_t newest_tick() const { return newest_tick_; }
  uint32_t tick_rate_hz() const { return tick_rate_hz_; }
  // Bytes held per entity (its ring and record).
  std::size_t bytes_per_entity() const { return sizeof(EntityHitHistory) + capacity_ * sizeof(HitHistoryEntry); }

  // LocalPoseObserver
  bool wants_pose(std::size_t index, sim::EntityId id) const override;
  void observe_pose(std::size_t index, sim::EntityId id, std::span<const Transform> local_pose,
                    unsigned worker) override;

 private:
  struct Staged {
    bool valid = false;
    sim::EntityId id = 0;
    HitHistoryEntry entry;
  };
  void stage(std::size_t index, sim::EntityId id) const;
  void follow_membership();

  sim::World& world_;
  const PoseFormats& formats_;
  uint32_t capacity_;
  uint32_t tick_rate_hz_;
  sim::LocalPoseObserver* inner_ = nullptr;
  bool palettes_ = false;
  // Written by the evaluation threads, one slot per world index (hence mutable: wants_pose is
  // const in the observer interface).
  mutable std::vector<Staged> staged_;
  std::vector<EntityHitHistory> entities_;
  uint64_t membership_ = ~uint64_t{0};
  uint32_t newest_tick_ = protocol::kNoTick;
};

}  // namespace posecast::server
