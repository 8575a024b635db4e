#pragma once
// HitQuery: a ray against every entity as it stood at a view time, from the HitHistory
// (docs/hit-queries.md). Per entity: the history entries at the ticks around the view time,
// the broad phase (the ray against the rig's bounding sphere at the interpolated root), then
// the pose: the recipe at the view time (sim::recipe_at_time, as a client derives it between
// two records) evaluated with the animator's jobs (sim::RecipeEvaluator), or, where the clip
// set changes between the two ticks, both ticks' poses interpolated (InterpolatePosesJob, as
// a client interpolates); local-to-model; the rig's capsules posed at the root; the first
// capsule the ray enters. The nearest hit over all entities wins (ties: the lower id).
//
// Tick thread only; run() never allocates once every rig has been queried once.

#include <cstdint>
#include <memory>
#include <vector>

#include "hit_history.h"
#include "posecast/hit_geometry.h"
#include "posecast/result.h"
#include "posecast/sim/recipe_evaluator.h"

namespace posecast::server {

// The ticks a client was sent snapshots on: (tick + phase) % interval == 0 (ClientReplica's
// send schedule). A client shows the time between two of them; the query brackets the view
// time with the same two, so it derives what that client derived. {1, 0}: every tick.
struct SnapshotGrid {
  uint32_t interval = 1;  // >= 1
  uint32_t phase = 0;
};

struct HitAnswer {
  bool hit = false;
  sim::EntityId entity = 0;
  uint16_t joint = 0;      // skin joint index (palette order)
  float distance = 0.0f;   // along the ray, from its origin
  int64_t view_us = 0;     // the view time used (after clamping)
  bool clamped = false;    // the asked view time lay outside the history
  uint32_t broad_passed = 0;  // entities whose bounding sphere the ray met (poses evaluated)
  uint32_t unevaluable = 0;   // of those, entities with no recipe at the view time (skipped)
};

class HitQuery {
 public:
  // Builds the capsules of every rig `formats` serves. Errors: a rig build_hit_rig refuses.
  static Result<std::unique_ptr<HitQuery>> create(const PoseFormats& formats, const HitRigOptions& options);

  // `ray` checked (check_ray) by the caller. `view_us`: server time (sim::tick_start_us of
  // session ticks); clamped into [the oldest tick the history holds, its newest tick]. Each
  // entity's pose is derived between the grid's ticks around the view time (past the newest
  // tick: the newest alone).
  HitAnswer run(const HitHistory& history, const HitRay& ray, int64_t view_us, SnapshotGrid grid = {});

  const HitRig& hit_rig(uint32_t format) const { return rigs_[format].hit; }

 private:
  struct RigData {
    const Rig* rig = nullptr;
    HitRig hit;
    std::vector<int64_t> durations;
    sim::RecipeEvaluator evaluator;
  };
  // The entity's local pose at `view_us` between entries `a` and `b` (b may be a itself) into
  // locals_; false when neither a recipe nor an interpolation of two recipes describes it.
  bool pose_at(RigData& rig, const HitHistoryEntry& a, const HitHistoryEntry& b, int64_t a_us, int64_t b_us,
               int64_t view_us);

  std::vector<RigData> rigs_;
  std::vector<Transform> locals_, other_;
  std::vector<glm::mat4> models_;
  std::vector<PosedCapsule> posed_;
  sim::PoseRecipe recipe_;
};

}  // namespace posecast::server
