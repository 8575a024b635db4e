#pragma once
// Internal: the World's data, shared by world.cpp (ticking), world_commands.cpp (applying
// commands) and snapshot.cpp.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "evaluator.h"
#include "posecast/sim/command_queue.h"
#include "posecast/sim/world.h"
#include "posecast/sim/worker_pool.h"
#include "world_tables.h"

namespace posecast::sim {

// One worker's share of the entities in a tick's evaluation pass: indices [front, back),
// packed in one atomic word. Its worker claims chunks from the front; a worker that has
// finished its own share takes chunks from the back of the others' (so a worker on a slower
// or busier core does less: the pass ends when the work does). The shares are sized by what
// each worker claimed in the tick before (in proportion, when entities came or went), so an
// entity is evaluated by the same worker tick after tick and its state and palette stay in
// that core's caches. (With one counter for all, every tick split the entities differently,
// and each tick a core first fetched from the other core's cache what that one had written: a
// two-thread World ran at about 1.4x the time per entity of two one-thread Worlds in two
// processes, Fox/1000.) Which worker evaluates an entity never changes a bit. Indices fit 32 bits each (entity ids are 32-bit, so a World
// holds fewer than 2^32 entities).
struct alignas(64) WorkerShare {
  std::atomic<uint64_t> range{0};
  static uint64_t pack(std::size_t front, std::size_t back) {
    return (static_cast<uint64_t>(front) << 32) | static_cast<uint64_t>(back);
  }
  static std::size_t front_of(uint64_t packed) { return static_cast<std::size_t>(packed >> 32); }
  static std::size_t back_of(uint64_t packed) { return static_cast<std::size_t>(packed & 0xFFFFFFFFu); }
};

struct World::Impl {
  WorldOptions options;
  WorldTables tables;
  std::vector<Entity> entities;  // sorted by id
  CommandQueue queue;
  std::vector<QueuedCommand> due;  // reused each tick
  std::vector<AnimationEvent> events;  // the last tick's (World::last_tick_events)
  std::optional<WorkerPool> pool;
  std::vector<EvalScratch> scratch;  // one per worker
  std::unique_ptr<WorkerShare[]> shares;  // one per worker (assign_shares, each tick)
  EvalScratch command_scratch;       // for work done while applying commands
  uint64_t tick = 0;
  uint64_t world_hash = 0;
  TickCheck tick_check;  // World::tick_check
  uint64_t membership_version = 0;  // World::membership_version
  WorldStats stats;
  LocalPoseObserver* pose_observer = nullptr;  // set_local_pose_observer; not owned

  // Index of the entity with `id`, or entities.size().
  std::size_t find(EntityId id) const;
  void resize_scratch();
  // Sets every worker's share for the next evaluation pass (WorkerShare).
  void assign_shares();
  void apply_due_commands();
  // Applies one command; an error says why it was rejected.
  Status apply(const Command& command);
  // Sizes a new or restored entity's palette and cursors.
  static void prepare_entity(Entity& entity);
  // The reference for (model, rig, clip, time), created on first use.
  Result<int32_t> find_or_add_reference(ModelId model, uint16_t rig, int32_t clip, int64_t time_us);
};

// Errors of add_model's checks, also used by restore.
Status validate_model(const Model& model);

}  // namespace posecast::sim
