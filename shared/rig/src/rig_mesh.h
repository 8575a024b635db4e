#pragma once
// The generated rig's skinned body: one triangle mesh made of the layout's capsules
// (private to shared/rig).
//
// Skin weights: each capsule belongs to its owner joint; within a blend length of either end it
// fades half of its weight into the joint it meets there (0.5 at the end, smoothstep to 0), and
// that joint's own capsule does the same from its side, so the skin is continuous across every
// joint. Weights are multiples of 1/256, so the four of a vertex sum to exactly 1 in float.

#include <array>
#include <cstdint>
#include <vector>

#include "rig_layout.h"

namespace posecast::rig::detail {

struct RigMesh {
  // Per vertex, all the same length.
  std::vector<std::array<float, 3>> positions;  // scene-root space (the mesh node is untransformed)
  std::vector<std::array<float, 3>> normals;    // unit length
  std::vector<std::array<float, 2>> uvs;        // u around a capsule, v along it, both in [0, 1]
  std::vector<std::array<uint16_t, 4>> joints;  // skin joint indices, unused slots 0
  std::vector<std::array<float, 4>> weights;    // descending, unused slots 0, sum exactly 1
  std::vector<uint32_t> indices;                // triangles, counter-clockwise seen from outside
};

RigMesh build_rig_mesh(const RigLayout& layout);

}  // namespace posecast::rig::detail
