#pragma once
// Palette matrices as unit dual quaternions, for dual-quaternion skinning (DQS). The one
// conversion used by the GPU upload (PaletteBuffer), the skinning capture and the CPU reference
// (cpu_skinning.h), so all three skin from the same float values.
//
// Why the client converts at upload instead of the wire or the server carrying dual
// quaternions: the palette is the renderer's input; the server's palette (and the codec's
// bit-exact checks against it) stays the one glTF defines, the same for LBS and DQS clients,
// and a model's skinning mode is a local display choice that needs no protocol, recording or
// server change. The conversion costs one square root and a few dozen flops per joint per
// frame, on the CPU beside the upload; the DQS block is half the size of the matrix block.

#include <glm/mat4x4.hpp>
#include <glm/vec4.hpp>

#include <span>

namespace posecast::render {

// A unit dual quaternion real + eps * dual; each part stored (x, y, z, w). As std140 data it is
// two vec4s per joint, real first (shaders/skinned_dq.vert.glsl).
struct DualQuaternion {
  glm::vec4 real{0.0f, 0.0f, 0.0f, 1.0f};  // the rotation, unit length, w >= 0
  glm::vec4 dual{0.0f};                    // 0.5 * translation * real
};
static_assert(sizeof(DualQuaternion) == 32, "two std140 vec4s");

// Tolerance of is_rigid: how far the upper 3x3's Gram matrix (columns' dot products) may be
// from the identity. Float palettes of rigid joints stay within about 1e-6; a joint scaled by
// 0.05 % or more is refused.
inline constexpr double kRigidTolerance = 1e-3;

// True when the upper 3x3 of `m` is a rotation (orthonormal columns within kRigidTolerance,
// positive determinant) and its last row is (0, 0, 0, 1): a matrix a dual quaternion can hold.
// Any scale (uniform or not), shear, mirror, NaN or Inf makes it false.
bool is_rigid(const glm::mat4& m);

// The unit dual quaternion of a rigid matrix (computed in double, rounded once to float; the
// rotation's sign is chosen with w >= 0). False (out untouched) when !is_rigid(m).
bool to_dual_quaternion(const glm::mat4& m, DualQuaternion& out);

// Converts a whole palette. False (out's contents unspecified) when the sizes differ or any
// matrix is not rigid: such a palette is skinned with LBS (docs/viewer.md, "Dual-quaternion
// skinning").
bool palette_to_dual_quaternions(std::span<const glm::mat4> palette,
                                 std::span<DualQuaternion> out);

}  // namespace posecast::render
