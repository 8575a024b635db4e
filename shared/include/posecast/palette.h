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

  bool Validate() const;
  // Never allocates; false (writing nothing) when Validate() fails or the mesh node's world
  // matrix is singular.
  bool Run() const;
};

}  // namespace posecast
