#pragma once
// Internal to shared/: the root-motion joint's parent space and the clip lookups that root-motion
// extraction and foot locking (root_motion_extraction.h) both use. Load-time helpers.

#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>

#include "posecast/clip.h"
#include "posecast/det_math.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast {

// The root joint's parent space in the rest pose: where the root's local keys live.
struct ParentSpace {
  glm::mat4 to_model{1.0f};    // parent model matrix
  glm::mat4 from_model{1.0f};  // its inverse
  glm::quat rotation{1.0f, 0.0f, 0.0f, 0.0f};  // parent model rotation (scale ignored)
};

inline ParentSpace parent_space(const Skeleton& skeleton, int root) {
  ParentSpace space;
  const int parent = skeleton.parents[static_cast<std::size_t>(root)];
  if (parent == kNoParent) return space;
  space.to_model = rest_model_matrices(skeleton)[static_cast<std::size_t>(parent)];
  if (!affine_inverse(space.to_model, space.from_model)) space.from_model = glm::mat4(1.0f);
  glm::quat rotation(1.0f, 0.0f, 0.0f, 0.0f);
  for (int n = parent; n != kNoParent; n = skeleton.parents[static_cast<std::size_t>(n)])
    rotation = det_mul(skeleton.rest[static_cast<std::size_t>(n)].rotation, rotation);
  space.rotation = det_normalize(rotation);
  return space;
}

inline int find_track(const Clip& clip, int node, TrackTarget target) {
  for (std::size_t i = 0; i < clip.tracks.size(); ++i)
    if (clip.tracks[i].node == node && clip.tracks[i].target == target) return static_cast<int>(i);
  return -1;
}

}  // namespace posecast
