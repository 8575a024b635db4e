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
  // True only when the caller has checked these assets once with Skeleton::validate() and
  // they cannot change afterwards (the World's models are immutable and validated when added).
  // Validate() then checks only the pointers and buffer sizes and skips its per-node loop:
  // repeated work for every entity and tick. False (the default) checks everything.
  bool assets_validated = false;

  bool Validate() const;
  // models[i] = models[parent[i]] * to_matrix(locals[i]) (roots: to_matrix(locals[i])).
  // Never allocates; false (writing nothing) when Validate() fails.
  bool Run() const;
};

}  // namespace posecast
