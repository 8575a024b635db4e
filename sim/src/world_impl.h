#pragma once
// Internal: the World's data, shared by world.cpp (ticking), world_commands.cpp (applying
// commands) and snapshot.cpp.

#include <optional>
#include <vector>

#include "evaluator.h"
#include "posecast/sim/command_queue.h"
#include "posecast/sim/world.h"
#include "posecast/sim/worker_pool.h"
#include "world_tables.h"

namespace posecast::sim {

struct World::Impl {
  WorldOptions options;
  WorldTables tables;
  std::vector<Entity> entities;  // sorted by id
  CommandQueue queue;
  std::vector<QueuedCommand> due;  // reused each tick
  std::optional<WorkerPool> pool;
  std::vector<EvalScratch> scratch;  // one per worker
  EvalScratch command_scratch;       // for work done while applying commands
  uint64_t tick = 0;
  uint64_t world_hash = 0;
  uint64_t membership_version = 0;  // World::membership_version
  WorldStats stats;
  World::LocalPoseObserver pose_observer = nullptr;  // set_local_pose_observer
  void* pose_observer_context = nullptr;
  World::PoseInterest pose_interest = nullptr;  // set_local_pose_observer

  // Index of the entity with `id`, or entities.size().
  std::size_t find(EntityId id) const;
  void resize_scratch();
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
