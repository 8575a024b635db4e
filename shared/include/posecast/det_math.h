#pragma once
// Deterministic scalar and quaternion math for the pose path.
//
// The contract (docs/determinism.md): every function here uses only +, -, *, / and sqrt, each
// of which IEEE 754 rounds exactly, so the same inputs give the same bits on every compiler and
// CPU as long as the build keeps -ffp-contract=off and no fast-math. glibc's acosf/sinf/atan2f
// differ by an ulp between x86-64 and aarch64, and glm::slerp/glm::mix call them, so the pose
// path must not use them: use det_slerp below.

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <cmath>

namespace posecast {

// acos(x) for x in [0, 1], absolute error <= 3e-8 (Abramowitz & Stegun 4.4.46, a polynomial
// times sqrt(1 - x)). Inputs outside [0, 1] are clamped.
inline float det_acos_unit(float x) {
  if (x < 0.0f) x = 0.0f;
  if (x > 1.0f) x = 1.0f;
  const float p =
      1.5707963050f +
      x * (-0.2145988016f +
           x * (0.0889789874f +
                x * (-0.0501743046f +
                     x * (0.0308918810f +
                          x * (-0.0170881256f + x * (0.0066700901f + x * -0.0012624911f))))));
  return std::sqrt(1.0f - x) * p;
}

// sin(x) for x in [0, pi/2] (the range slerp needs after choosing the shortest path), by its
// Taylor series to x^13; truncation error < 1e-9, below float rounding.
inline float det_sin_half_pi(float x) {
  const float x2 = x * x;
  return x * (1.0f +
              x2 * (-1.0f / 6.0f +
                    x2 * (1.0f / 120.0f +
                          x2 * (-1.0f / 5040.0f +
                                x2 * (1.0f / 362880.0f +
                                      x2 * (-1.0f / 39916800.0f + x2 * (1.0f / 6227020800.0f)))))));
}

inline float det_dot(const glm::quat& a, const glm::quat& b) {
  return ((a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w));
}

// Unit quaternion in the same direction; identity for a zero quaternion.
inline glm::quat det_normalize(const glm::quat& q) {
  const float len2 = det_dot(q, q);
  if (!(len2 > 0.0f)) return glm::quat(1.0f, 0.0f, 0.0f, 0.0f);
  const float inv = 1.0f / std::sqrt(len2);
  return glm::quat(q.w * inv, q.x * inv, q.y * inv, q.z * inv);
}

// Normalised linear interpolation along the shortest path; t in [0, 1].
inline glm::quat det_nlerp(const glm::quat& a, glm::quat b, float t) {
  if (det_dot(a, b) < 0.0f) b = glm::quat(-b.w, -b.x, -b.y, -b.z);
  const float s = 1.0f - t;
  return det_normalize(glm::quat(a.w * s + b.w * t, a.x * s + b.x * t, a.y * s + b.y * t,
                                 a.z * s + b.z * t));
}

// Spherical linear interpolation along the shortest path (glTF LINEAR rotation), t in [0, 1],
// unit inputs. Nearly equal keys (cos > 0.9995, under 1.8 degrees apart) use nlerp, which there
// differs from slerp by less than float rounding of the weights.
inline glm::quat det_slerp(const glm::quat& a, glm::quat b, float t) {
  float d = det_dot(a, b);
  if (d < 0.0f) {
    b = glm::quat(-b.w, -b.x, -b.y, -b.z);
    d = -d;
  }
  if (d > 0.9995f) return det_nlerp(a, b, t);
  const float theta = det_acos_unit(d);
  const float inv_sin = 1.0f / std::sqrt(1.0f - d * d);
  const float wa = det_sin_half_pi((1.0f - t) * theta) * inv_sin;
  const float wb = det_sin_half_pi(t * theta) * inv_sin;
  return det_normalize(glm::quat(a.w * wa + b.w * wb, a.x * wa + b.x * wb, a.y * wa + b.y * wb,
                                 a.z * wa + b.z * wb));
}

// The part of det_slerp(a, b, t) that does not depend on t, for one key pair: `sign` (-1 when
// b is flipped to the shortest path, else 1), `near` (1 when det_slerp takes its nlerp
// branch, else 0), and for the other pairs `theta` = det_acos_unit(|dot|) and `inv_sin` =
// 1 / sqrt(1 - dot^2) (both 0 when near). Computed with det_slerp's own operations, so a
// sampler that precomputes them per key pair (Clip::slerp_terms) and finishes the slerp per
// tick gets det_slerp's bits.
struct SlerpTerms {
  float sign, theta, inv_sin, near;
};
inline SlerpTerms det_slerp_terms(const glm::quat& a, const glm::quat& b) {
  float d = det_dot(a, b);
  float sign = 1.0f;
  if (d < 0.0f) {
    sign = -1.0f;
    d = -d;
  }
  if (d > 0.9995f) return {sign, 0.0f, 0.0f, 1.0f};
  return {sign, det_acos_unit(d), 1.0f / std::sqrt(1.0f - d * d), 0.0f};
}

inline glm::vec3 det_lerp(const glm::vec3& a, const glm::vec3& b, float t) {
  const float s = 1.0f - t;
  return glm::vec3(a.x * s + b.x * t, a.y * s + b.y * t, a.z * s + b.z * t);
}

// Hamilton product, written out so the evaluation order is fixed. Always inlined: hot loops
// (the quantiser: four products per node) otherwise got a call and a stack round trip each.
[[gnu::always_inline]] inline glm::quat det_mul(const glm::quat& a, const glm::quat& b) {
  return glm::quat(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                   a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}

}  // namespace posecast
