#pragma once
// A hit query on what a client presents (docs/hit-queries.md, "Agreement with the client"):
// the ray against each presented entity's capsules posed from its presented locals and root,
// with the server's rule for the answer (the nearest entry; ties go to the lower entity id).
// Given the ray the client sent, checked by check_ray as the server checks it, and the frame
// whose render time the query carried, the answer equals the server's bit for bit wherever
// the frame was derived between two snapshots from recipes (the design's exceptions are in
// docs/hit-queries.md). The viewer compares each answer with it; tests count disagreements.
//
// One thread; run() allocates only while its scratch grows to the largest rig.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "posecast/client/presenter.h"
#include "posecast/hit_geometry.h"

namespace posecast::client {

struct PresentedHit {
  bool hit = false;
  uint32_t entity = 0;
  uint16_t joint = 0;      // skin joint index, as HitResult::joint
  float distance = 0.0f;   // along the ray, from its origin
};

// The capsules of an entity's (model, rig), or nullptr: that entity is not tested.
using HitRigLookup = std::function<const HitRig*(const PresentedEntity&)>;

class PresentedHitQuery {
 public:
  // `ray` already checked (check_ray returned kOk; direction unit). Entities in any order.
  PresentedHit run(std::span<const PresentedEntity> entities, const HitRay& ray, const HitRigLookup& rig_of);

  // `entity`'s capsules posed as presented (its locals through LocalToModelJob, under its
  // root): `rig.capsules.size()` entries, valid until the next call. Empty when the pose does
  // not fit the rig (a node count or a palette size that differs).
  std::span<const PosedCapsule> pose(const PresentedEntity& entity, const HitRig& rig);

 private:
  std::vector<glm::mat4> models_;
  std::vector<PosedCapsule> posed_;
};

}  // namespace posecast::client
