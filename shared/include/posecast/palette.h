#pragma once
// World matrices -> skinning palette, as glTF 2.0 defines it:
//   palette[j] = inverse(world(mesh_node)) * world(joint_node[j]) * inverse_bind[j]

#include <glm/mat4x4.hpp>

#include <span>

#include "posecast/skeleton.h"

namespace posecast {

struct PaletteJob {
  const Skeleton* skeleton = nullptr;
  std::span<const glm::mat4> models;  // skeleton->node_count() entries (LocalToModelJob output)
  std::span<glm::mat4> palette;       // skeleton->joint_count() entries, written
  // True only when the caller has checked these assets once with Skeleton::validate() and
  // they cannot change afterwards (the World's models are immutable and validated when added).
  // Validate() then checks only the pointers and buffer sizes and skips its per-joint loop:
  // repeated work for every entity and tick. False (the default) checks everything.
  bool assets_validated = false;

  bool Validate() const;
  // Never allocates; false (writing nothing) when Validate() fails or the mesh node's world
  // matrix is singular.
  bool Run() const;
};

}  // namespace posecast
