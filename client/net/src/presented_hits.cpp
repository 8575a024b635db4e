#include "posecast/client/presented_hits.h"

#include "posecast/local_to_model.h"

namespace posecast::client {

std::span<const PosedCapsule> PresentedHitQuery::pose(const PresentedEntity& entity, const HitRig& rig) {
  if (entity.skeleton == nullptr || entity.locals.size() != entity.skeleton->node_count()) return {};
  models_.resize(entity.skeleton->node_count());
  posed_.resize(rig.capsules.size());
  const LocalToModelJob job{entity.skeleton, entity.locals, models_};
  if (!job.Run()) return {};
  const glm::mat4 at = entity_matrix(entity.root.x, entity.root.y, entity.root.z, entity.root.yaw);
  if (!pose_capsules(rig, models_, at, posed_)) return {};
  return posed_;
}

PresentedHit PresentedHitQuery::run(std::span<const PresentedEntity> entities, const HitRay& ray,
                                    const HitRigLookup& rig_of) {
  PresentedHit best;
  for (const PresentedEntity& e : entities) {
    const HitRig* rig = rig_of(e);
    if (rig == nullptr) continue;
    const std::span<const PosedCapsule> posed = pose(e, *rig);
    std::size_t index = 0;
    float t = 0.0f;
    if (posed.empty() || !ray_capsules(ray, posed, index, t)) continue;
    // The server's rule: the nearest entry, ties to the lower id.
    if (best.hit && (t > best.distance || (t == best.distance && e.id > best.entity))) continue;
    best = PresentedHit{true, e.id, rig->capsules[index].joint, t};
  }
  return best;
}

}  // namespace posecast::client
