#include "posecast/render/dual_quaternion.h"

#include <cmath>

namespace posecast::render {

bool is_rigid(const glm::mat4& m) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (!std::isfinite(m[c][r])) return false;
  if (m[0][3] != 0.0f || m[1][3] != 0.0f || m[2][3] != 0.0f || m[3][3] != 1.0f) return false;
  for (int i = 0; i < 3; ++i) {
    for (int j = i; j < 3; ++j) {
      double dot = 0.0;
      for (int r = 0; r < 3; ++r) {
        dot += static_cast<double>(m[i][r]) * static_cast<double>(m[j][r]);
      }
      const double expected = i == j ? 1.0 : 0.0;
      if (std::fabs(dot - expected) > kRigidTolerance) return false;
    }
  }
  // Orthonormal columns have determinant +-1: a mirror is -1.
  return glm::determinant(glm::dmat3(glm::mat3(m))) > 0.0;
}

bool to_dual_quaternion(const glm::mat4& m, DualQuaternion& out) {
  if (!is_rigid(m)) return false;
  // R(row, column) = m[column][row]. Shepperd's method: divide by the largest of the four
  // 4*q_i^2 so the square root's argument is never small.
  const auto R = [&m](int row, int column) { return static_cast<double>(m[column][row]); };
  const double trace = R(0, 0) + R(1, 1) + R(2, 2);
  double x, y, z, w;
  if (trace > 0.0) {
    const double s = 2.0 * std::sqrt(trace + 1.0);
    w = 0.25 * s;
    x = (R(2, 1) - R(1, 2)) / s;
    y = (R(0, 2) - R(2, 0)) / s;
    z = (R(1, 0) - R(0, 1)) / s;
  } else if (R(0, 0) > R(1, 1) && R(0, 0) > R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + R(0, 0) - R(1, 1) - R(2, 2));
    w = (R(2, 1) - R(1, 2)) / s;
    x = 0.25 * s;
    y = (R(0, 1) + R(1, 0)) / s;
    z = (R(0, 2) + R(2, 0)) / s;
  } else if (R(1, 1) > R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + R(1, 1) - R(0, 0) - R(2, 2));
    w = (R(0, 2) - R(2, 0)) / s;
    x = (R(0, 1) + R(1, 0)) / s;
    y = 0.25 * s;
    z = (R(1, 2) + R(2, 1)) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 + R(2, 2) - R(0, 0) - R(1, 1));
    w = (R(1, 0) - R(0, 1)) / s;
    x = (R(0, 2) + R(2, 0)) / s;
    y = (R(1, 2) + R(2, 1)) / s;
    z = 0.25 * s;
  }
  // The input is orthonormal only within the tolerance: renormalise, and pick w >= 0 so the
  // same rotation always converts to the same quaternion.
  double length = std::sqrt(x * x + y * y + z * z + w * w);
  if (w < 0.0) length = -length;
  x /= length;
  y /= length;
  z /= length;
  w /= length;
  // dual = 0.5 * (t, 0) * real: vector part w t + t x v, scalar part -t . v.
  const double tx = static_cast<double>(m[3][0]), ty = static_cast<double>(m[3][1]), tz = static_cast<double>(m[3][2]);
  const double dx = 0.5 * (tx * w + ty * z - tz * y);
  const double dy = 0.5 * (-tx * z + ty * w + tz * x);
  const double dz = 0.5 * (tx * y - ty * x + tz * w);
  const double dw = -0.5 * (tx * x + ty * y + tz * z);
  out.real = glm::vec4(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z),
                       static_cast<float>(w));
  out.dual = glm::vec4(static_cast<float>(dx), static_cast<float>(dy), static_cast<float>(dz),
                       static_cast<float>(dw));
  return true;
}

bool palette_to_dual_quaternions(std::span<const glm::mat4> palette,
                                 std::span<DualQuaternion> out) {
  if (palette.size() != out.size()) return false;
  for (std::size_t j = 0; j < palette.size(); ++j) {
    if (!to_dual_quaternion(palette[j], out[j])) return false;
  }
  return true;
}

}  // namespace posecast::render
