#pragma once
// Local TRS -> world ("model") matrices, walking nodes parents first.

#include <glm/mat4x4.hpp>

#include <span>

#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast {

struct LocalToModelJob {
  const Skeleton* skeleton = nullptr;
  std::span<const Transform> locals;  // skeleton->node_count() entries
  std::span<glm::mat4> models;        // skeleton->node_count() entries, written

  bool Validate() const;
  // models[i] = models[parent[i]] * to_matrix(locals[i]) (roots: to_matrix(locals[i])).
  // Never allocates; false (writing nothing) when Validate() fails.
  bool Run() const;
};

}  // namespace posecast
