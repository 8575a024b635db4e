#pragma once
// Skinning on the CPU: the references the GPU paths are tested against.
//
// Linear blend, the formula of shaders/skinned.vert.glsl: skin = sum_k w_k * palette[j_k];
// p' = skin * (p, 1); n' = normalize(mat3(skin) * n) (zero stays zero). Computed in double, so
// the result is the exact value rounded once to float.

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cstddef>
#include <span>
#include <vector>

#include "posecast/render/dual_quaternion.h"
#include "posecast/skinned_mesh.h"

namespace posecast::render {

struct SkinnedVertex {
  glm::vec3 position{0.0f};  // palette space
  glm::vec3 normal{0.0f};    // palette space, unit or zero
};

// True when `mesh` can be skinned into `out_size` vertices with a palette of `palette_size`
// joints: every attribute has the vertex count, `out_size` is that count, and every weighted
// joint index is inside the palette (the check both CPU references make before writing).
bool skinning_inputs_fit(const SkinnedMesh& mesh, std::size_t palette_size, std::size_t out_size);

// Skins every vertex of `mesh` with `palette`. Influences whose weight is zero are skipped, so
// their joint index may be anything. Returns false (writing nothing) when `out` is not the
// vertex count or a weighted joint index is outside the palette.
bool skin_vertices_cpu(const SkinnedMesh& mesh, std::span<const glm::mat4> palette,
                       std::span<SkinnedVertex> out);

// Dual-quaternion skinning (shaders/skinned_dq.vert.glsl), from the palette as uploaded
// (palette_to_dual_quaternions). Per vertex: the pivot is the influence with the largest weight
// (the first of equal ones); each weighted dual quaternion whose real part has a negative dot
// product with the pivot's is negated (antipodality: q and -q are the same rotation, and
// blending across the sign would pass through zero); b = sum_k w_k * s_k * dq[j_k];
// r = b.real / |b.real|, d = b.dual / |b.real|;
// p' = rotate(r, p) + 2 * (r.w * d.xyz - d.w * r.xyz + r.xyz x d.xyz);
// n' = normalize(rotate(r, n)) (zero stays zero). Computed in double, rounded once to float.
// Returns false (writing nothing) on the same conditions as skin_vertices_cpu, or when a
// vertex's blended real part is zero.
bool skin_vertices_cpu_dq(const SkinnedMesh& mesh, std::span<const DualQuaternion> palette,
                          std::span<SkinnedVertex> out);

}  // namespace posecast::render
