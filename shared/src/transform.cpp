#include "posecast/transform.h"

#include <cmath>
#include <cstring>

namespace posecast {

glm::mat4 to_matrix(const Transform& t) {
  const glm::quat& q = t.rotation;
  const float x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
  const float xx = q.x * x2, yy = q.y * y2, zz = q.z * z2;
  const float xy = q.x * y2, xz = q.x * z2, yz = q.y * z2;
  const float wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
  glm::mat4 m;
  m[0] = glm::vec4((1.0f - (yy + zz)) * t.scale.x, (xy + wz) * t.scale.x, (xz - wy) * t.scale.x,
                   0.0f);
  m[1] = glm::vec4((xy - wz) * t.scale.y, (1.0f - (xx + zz)) * t.scale.y, (yz + wx) * t.scale.y,
                   0.0f);
  m[2] = glm::vec4((xz + wy) * t.scale.z, (yz - wx) * t.scale.z, (1.0f - (xx + yy)) * t.scale.z,
                   0.0f);
  m[3] = glm::vec4(t.translation, 1.0f);
  return m;
}

glm::mat4 affine_mul(const glm::mat4& a, const glm::mat4& b) {
  glm::mat4 r;
  for (int c = 0; c < 3; ++c) {
    const glm::vec4& bc = b[c];
    r[c] = glm::vec4(a[0].x * bc.x + a[1].x * bc.y + a[2].x * bc.z,
                     a[0].y * bc.x + a[1].y * bc.y + a[2].y * bc.z,
                     a[0].z * bc.x + a[1].z * bc.y + a[2].z * bc.z, 0.0f);
  }
  const glm::vec4& bt = b[3];
  r[3] = glm::vec4(a[0].x * bt.x + a[1].x * bt.y + a[2].x * bt.z + a[3].x,
                   a[0].y * bt.x + a[1].y * bt.y + a[2].y * bt.z + a[3].y,
                   a[0].z * bt.x + a[1].z * bt.y + a[2].z * bt.z + a[3].z, 1.0f);
  return r;
}

bool affine_inverse(const glm::mat4& m, glm::mat4& out) {
  // Inverse of the 3x3 part by cofactors, then t' = -R^-1 t.
  const float a = m[0].x, b = m[1].x, c = m[2].x;
  const float d = m[0].y, e = m[1].y, f = m[2].y;
  const float g = m[0].z, h = m[1].z, i = m[2].z;
  const float co00 = e * i - f * h, co01 = f * g - d * i, co02 = d * h - e * g;
  const float det = a * co00 + b * co01 + c * co02;
  if (det == 0.0f || !std::isfinite(det)) return false;
  const float inv = 1.0f / det;
  glm::mat4 r(1.0f);
  // r is column-major: r[col][row]; row/col of the 3x3 inverse = adj^T / det.
  r[0].x = co00 * inv;
  r[0].y = co01 * inv;
  r[0].z = co02 * inv;
  r[1].x = (c * h - b * i) * inv;
  r[1].y = (a * i - c * g) * inv;
  r[1].z = (b * g - a * h) * inv;
  r[2].x = (b * f - c * e) * inv;
  r[2].y = (c * d - a * f) * inv;
  r[2].z = (a * e - b * d) * inv;
  const glm::vec4& t = m[3];
  r[3] = glm::vec4(-(r[0].x * t.x + r[1].x * t.y + r[2].x * t.z),
                   -(r[0].y * t.x + r[1].y * t.y + r[2].y * t.z),
                   -(r[0].z * t.x + r[1].z * t.y + r[2].z * t.z), 1.0f);
  out = r;
  return true;
}

bool is_affine(const glm::mat4& m, float tol) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (!std::isfinite(m[c][r])) return false;
  return std::fabs(m[0].w) <= tol && std::fabs(m[1].w) <= tol && std::fabs(m[2].w) <= tol &&
         std::fabs(m[3].w - 1.0f) <= tol;
}

bool decompose(const glm::mat4& m, Transform& out) {
  if (!is_affine(m, 1e-5f)) return false;
  glm::vec3 c0(m[0]), c1(m[1]), c2(m[2]);
  float sx = std::sqrt(c0.x * c0.x + c0.y * c0.y + c0.z * c0.z);
  const float sy = std::sqrt(c1.x * c1.x + c1.y * c1.y + c1.z * c1.z);
  const float sz = std::sqrt(c2.x * c2.x + c2.y * c2.y + c2.z * c2.z);
  if (sx == 0.0f || sy == 0.0f || sz == 0.0f) return false;
  const float det = c0.x * (c1.y * c2.z - c2.y * c1.z) - c1.x * (c0.y * c2.z - c2.y * c0.z) +
                    c2.x * (c0.y * c1.z - c1.y * c0.z);
  if (det < 0.0f) sx = -sx;
  c0 /= sx;
  c1 /= sy;
  c2 /= sz;
  // Rotation matrix to quaternion (Shepperd): pick the largest diagonal term for stability.
  const float trace = c0.x + c1.y + c2.z;
  glm::quat q;
  if (trace > 0.0f) {
    const float s = std::sqrt(trace + 1.0f) * 2.0f;
    q = glm::quat(0.25f * s, (c1.z - c2.y) / s, (c2.x - c0.z) / s, (c0.y - c1.x) / s);
  } else if (c0.x > c1.y && c0.x > c2.z) {
    const float s = std::sqrt(1.0f + c0.x - c1.y - c2.z) * 2.0f;
    q = glm::quat((c1.z - c2.y) / s, 0.25f * s, (c1.x + c0.y) / s, (c2.x + c0.z) / s);
  } else if (c1.y > c2.z) {
    const float s = std::sqrt(1.0f + c1.y - c0.x - c2.z) * 2.0f;
    q = glm::quat((c2.x - c0.z) / s, (c1.x + c0.y) / s, 0.25f * s, (c2.y + c1.z) / s);
  } else {
    const float s = std::sqrt(1.0f + c2.z - c0.x - c1.y) * 2.0f;
    q = glm::quat((c0.y - c1.x) / s, (c2.x + c0.z) / s, (c2.y + c1.z) / s, 0.25f * s);
  }
  const float len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  out.translation = glm::vec3(m[3]);
  out.rotation = glm::quat(q.w / len, q.x / len, q.y / len, q.z / len);
  out.scale = glm::vec3(sx, sy, sz);
  return true;
}

bool is_exact_identity(const glm::mat4& m) {
  static const glm::mat4 kIdentity(1.0f);
  return std::memcmp(&m, &kIdentity, sizeof m) == 0;
}

}  // namespace posecast
