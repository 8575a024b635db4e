#pragma once
// Linear-blend skinning on the CPU: the reference the GPU path (shaders/skinned.vert.glsl) is
// tested against. Same formula: skin = sum_k w_k * palette[j_k]; p' = skin * (p, 1);
// n' = normalize(mat3(skin) * n) (zero stays zero). Computed in double, so the result is the
// exact value rounded once to float.

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <span>
#include <vector>

#include "posecast/skinned_mesh.h"

namespace posecast::render {

struct SkinnedVertex {
  glm::vec3 position{0.0f};  // palette space
  glm::vec3 normal{0.0f};    // palette space, unit or zero
};

// Skins every vertex of `mesh` with `palette`. Influences whose weight is zero are skipped, so
// their joint index may be anything. Returns false (writing nothing) when `out` is not the
// vertex count or a weighted joint index is outside the palette.
bool skin_vertices_cpu(const SkinnedMesh& mesh, std::span<const glm::mat4> palette,
                       std::span<SkinnedVertex> out);

}  // namespace posecast::render
