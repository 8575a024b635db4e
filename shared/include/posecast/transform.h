#pragma once
// Local transforms (TRS) and affine matrices, in the conventions of glTF 2.0:
// column vectors, column-major storage, M = T * R * S, quaternions stored (x, y, z, w).

#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

namespace posecast {

// 40 bytes, no padding, so arrays of it can be hashed and copied as bytes.
struct Transform {
  glm::vec3 translation{0.0f, 0.0f, 0.0f};
  glm::quat rotation{1.0f, 0.0f, 0.0f, 0.0f};  // glm order (w, x, y, z) in the constructor
  glm::vec3 scale{1.0f, 1.0f, 1.0f};

  static Transform identity() { return Transform{}; }
};
static_assert(sizeof(Transform) == 40, "Transform must stay padding-free");

// T * R * S as an affine matrix whose last row is exactly (0, 0, 0, 1). Deterministic.
glm::mat4 to_matrix(const Transform& t);

// a * b for affine matrices (last rows (0,0,0,1)); 36 products instead of 64. Deterministic.
glm::mat4 affine_mul(const glm::mat4& a, const glm::mat4& b);

// Inverse of an affine matrix with a non-singular 3x3 part. Returns false (and leaves `out`
// unchanged) when the determinant is zero or not finite. Deterministic.
bool affine_inverse(const glm::mat4& m, glm::mat4& out);

// m * (p, 1) for an affine m: the point p moved by m. Deterministic (the products summed in
// column order).
inline glm::vec3 affine_point(const glm::mat4& m, const glm::vec3& p) {
  return glm::vec3(m[0]) * p.x + glm::vec3(m[1]) * p.y + glm::vec3(m[2]) * p.z + glm::vec3(m[3]);
}

// Decomposes an affine matrix into T * R * S (used for nodes given as `matrix`). A negative
// determinant becomes a negative x scale. Fails when the matrix is not affine (last row not
// (0,0,0,1) within 1e-5), has a zero scale, or holds NaN/Inf. Import-time only.
bool decompose(const glm::mat4& m, Transform& out);

// True when every component of the matrix is finite and the last row is (0,0,0,1) within tol.
bool is_affine(const glm::mat4& m, float tol);

// True when m is bit for bit the identity matrix (every off-diagonal entry +0.0f): the palette
// jobs' test for a mesh node whose product they may skip (PaletteJob::Run).
bool is_exact_identity(const glm::mat4& m);

}  // namespace posecast
