#pragma once
// Deterministic scalar and quaternion math for the pose path.
//
// The contract (docs/determinism.md): every function here uses only +, -, *, / and sqrt, each
// of which IEEE 754 rounds exactly, so the same inputs give the same bits on every compiler and
// CPU as long as the build keeps -ffp-contract=off and no fast-math. glibc's acosf/sinf/atan2f
// differ by an ulp between x86-64 and aarch64, and glm::slerp/glm::mix call them, so the pose
// path must not use them: use det_key_slerp (the sampler, between clip keys) and det_slerp
// (interpolation between two poses) below.

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <cstddef>

namespace posecast {

// The pose path's polynomials: one set of coefficients each, shared by the scalar functions
// below and the sampler's lane-by-lane versions (shared/src/slerp_lanes.h), so both give the
// same bits. det_horner evaluates c[0] + x * (c[1] + x * (... + x * c[N-1])) in exactly that
// order for a float or a vector of floats (each lane rounded as the scalar would be).
namespace det_detail {

// acos(x) = sqrt(1 - x) * p(x) for x in [0, 1], absolute error <= 3e-8 (Abramowitz & Stegun
// 4.4.46).
inline constexpr float kAcosUnit[] = {1.5707963050f,  -0.2145988016f, 0.0889789874f,
                                      -0.0501743046f, 0.0308918810f,  -0.0170881256f,
                                      0.0066700901f,  -0.0012624911f};
// sin(x) = x * p(x^2) for x in [0, pi/2], the Taylor series to x^13: truncation error < 1e-9,
// below float rounding.
inline constexpr float kSinHalfPi[] = {1.0f,           -1.0f / 6.0f,        1.0f / 120.0f,
                                       -1.0f / 5040.0f, 1.0f / 362880.0f,    -1.0f / 39916800.0f,
                                       1.0f / 6227020800.0f};
// cos(x) = p(x^2) for x in [0, pi/2], the Taylor series to x^12: truncation error < 7e-9.
inline constexpr float kCosHalfPi[] = {1.0f,            -1.0f / 2.0f,        1.0f / 24.0f,
                                       -1.0f / 720.0f,  1.0f / 40320.0f,     -1.0f / 3628800.0f,
                                       1.0f / 479001600.0f};

// x * (c[I] + x * (... + x * c[N-1])): the tail of det_horner, unrolled at compile time.
template <std::size_t I, class V, std::size_t N>
[[gnu::always_inline]] inline V horner_tail(V x, const float (&c)[N]) {
  if constexpr (I + 1 == N) {
    return x * c[I];
  } else {
    return x * (c[I] + horner_tail<I + 1>(x, c));
  }
}

template <class V, std::size_t N>
[[gnu::always_inline]] inline V det_horner(V x, const float (&c)[N]) {
  static_assert(N >= 2);
  return c[0] + horner_tail<1>(x, c);
}

}  // namespace det_detail

// acos(x) for x in [0, 1], absolute error <= 3e-8. Inputs outside [0, 1] are clamped.
inline float det_acos_unit(float x) {
  if (x < 0.0f) x = 0.0f;
  if (x > 1.0f) x = 1.0f;
  return std::sqrt(1.0f - x) * det_detail::det_horner(x, det_detail::kAcosUnit);
}

// sin(x) for x in [0, pi/2] (the range slerp needs after choosing the shortest path);
// error below float rounding.
inline float det_sin_half_pi(float x) {
  return x * det_detail::det_horner(x * x, det_detail::kSinHalfPi);
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

// Spherical linear interpolation along the shortest path, t in [0, 1], unit inputs: the
// client's interpolation between two decoded poses (the sampler uses det_key_slerp below).
// Nearly equal inputs (cos > 0.9995, under 1.8 degrees apart) use nlerp, which there differs
// from slerp by less than float rounding of the weights.
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

// cos(x) for x in [0, pi/2], error below float rounding. `x2` is x * x (det_key_slerp
// computes it once for sine and cosine).
inline float det_cos_half_pi_of_square(float x2) {
  return det_detail::det_horner(x2, det_detail::kCosHalfPi);
}

// The sampler's slerp between two keys of a LINEAR rotation track (glTF), in the form
//   slerp(a, b, t) = a cos(t theta) + c sin(t theta),
// where b is taken on a's side (negated when a . b < 0: the shortest path), theta in
// [0, pi/2] is the angle between a and that b, and c is the unit quaternion orthogonal to a
// in their plane, (b - a cos theta) / sin theta. Both are t-free: they are computed once per
// key pair (Clip::slerp_terms), in double precision, so every tick costs two polynomials and
// eight products, with no square root, division or normalisation (the result has a's length,
// within float rounding of 1 for unit keys). Equal keys give c = 0, theta = 0: a exactly.
// Unlike det_slerp, no branch for nearly equal keys: c's error there is its rounding over
// sin theta, scaled back by sin(t theta), so the result stays within float rounding of slerp.
struct KeySlerpTerms {
  float c[4];  // x, y, z, w
  float theta;
};

namespace det_detail {
// atan(x) for x in [0, 1] in double: for x > tan(pi/8), pi/4 + atan((x - 1) / (x + 1)); then
// the Taylor series to y^41 (|y| <= 0.4143: truncation < 1e-17). + - * / only, so the same
// bits everywhere (IEEE double, no contraction).
inline double atan_unit(double x) {
  double offset = 0.0;
  if (x > 0.41421356237309503) {
    offset = 0.78539816339744830962;
    x = (x - 1.0) / (x + 1.0);
  }
  const double x2 = x * x;
  double sum = 0.0;
  for (int k = 41; k >= 1; k -= 2) sum = (k % 4 == 1 ? 1.0 : -1.0) / k + x2 * sum;
  // sum = 1 - x^2/3 + x^4/5 - ... (Horner from the highest term down)
  return offset + x * sum;
}
}  // namespace det_detail

// The t-free terms of key pair (a, b) (unit quaternions), in double precision: exact
// rounding of +, -, *, / and sqrt, so the same float bits on every machine. The keys are
// normalised in double first: float keys are unit only to about 1e-7, and for keys a
// thousandth of a degree apart that would tilt c off a's orthogonal plane by 1e-7 / sin theta.
inline KeySlerpTerms det_key_slerp_terms(const glm::quat& a, const glm::quat& b) {
  KeySlerpTerms terms{{0.0f, 0.0f, 0.0f, 0.0f}, 0.0f};
  double ax = static_cast<double>(a.x), ay = static_cast<double>(a.y);
  double az = static_cast<double>(a.z), aw = static_cast<double>(a.w);
  double bx = static_cast<double>(b.x), by = static_cast<double>(b.y);
  double bz = static_cast<double>(b.z), bw = static_cast<double>(b.w);
  const double a_length = std::sqrt((ax * ax + ay * ay) + (az * az + aw * aw));
  const double b_length = std::sqrt((bx * bx + by * by) + (bz * bz + bw * bw));
  if (!(a_length > 0.0) || !(b_length > 0.0)) return terms;  // not rotations: a throughout
  ax /= a_length, ay /= a_length, az /= a_length, aw /= a_length;
  bx /= b_length, by /= b_length, bz /= b_length, bw /= b_length;
  double d = (ax * bx + ay * by) + (az * bz + aw * bw);
  if (d < 0.0) {
    bx = -bx, by = -by, bz = -bz, bw = -bw;
    d = -d;
  }
  const double cx = bx - ax * d, cy = by - ay * d, cz = bz - az * d, cw = bw - aw * d;
  const double sin_theta = std::sqrt((cx * cx + cy * cy) + (cz * cz + cw * cw));
  // Keys in the same direction leave only double rounding here (~1e-16); float keys in
  // distinct directions are at least ~1e-8 apart. So below 1e-12 they are equal: a throughout
  // (and NaN keys too).
  if (!(sin_theta > 1e-12)) return terms;
  // theta = atan2(sin_theta, d) with both >= 0, through atan on [0, 1].
  const double theta = sin_theta <= d
                           ? det_detail::atan_unit(sin_theta / d)
                           : 1.57079632679489661923 - det_detail::atan_unit(d / sin_theta);
  terms.c[0] = static_cast<float>(cx / sin_theta);
  terms.c[1] = static_cast<float>(cy / sin_theta);
  terms.c[2] = static_cast<float>(cz / sin_theta);
  terms.c[3] = static_cast<float>(cw / sin_theta);
  terms.theta = static_cast<float>(theta);
  return terms;
}

// The sampler's slerp at t in [0, 1] from key a with its key pair's terms (above).
inline glm::quat det_key_slerp(const glm::quat& a, const KeySlerpTerms& k, float t) {
  const float x = t * k.theta;
  const float x2 = x * x;
  const float sin_x = det_sin_half_pi(x);
  const float cos_x = det_cos_half_pi_of_square(x2);
  return glm::quat(a.w * cos_x + k.c[3] * sin_x, a.x * cos_x + k.c[0] * sin_x,
                   a.y * cos_x + k.c[1] * sin_x, a.z * cos_x + k.c[2] * sin_x);
}

// --- Angles (root motion, facing) ---------------------------------------------------------

inline constexpr float kDetPi = 3.14159265358979323846f;
inline constexpr float kDetTwoPi = 6.28318530717958647692f;

// x wrapped to [-pi, pi) (finite x; |x| up to about 1e6 keeps float accuracy): x - 2 pi n with
// n = floor((x + pi) / 2 pi), in double so the subtraction is exact enough, rounded once.
inline float det_wrap_angle(float x) {
  const double two_pi = 6.28318530717958647692;
  const double xd = static_cast<double>(x);
  const double n = std::floor((xd + 3.14159265358979323846) / two_pi);
  float r = static_cast<float>(xd - n * two_pi);
  if (r >= kDetPi) r -= kDetTwoPi;  // rounding can land exactly on +pi
  if (r < -kDetPi) r = -kDetPi;
  return r;
}

// sin and cos of any finite x (radians), absolute error below 1e-6 for |x| < 1e4: x wrapped to
// [-pi, pi), folded into [0, pi/2], then det_sin_half_pi and det_cos_half_pi_of_square.
inline void det_sin_cos(float x, float& sine, float& cosine) {
  const float r = det_wrap_angle(x);
  const float a = r < 0.0f ? -r : r;                   // [0, pi]
  const bool upper = a > 0.5f * kDetPi;                // fold (pi/2, pi] onto [0, pi/2)
  const float f = upper ? kDetPi - a : a;
  const float s = det_sin_half_pi(f);
  const float c = det_cos_half_pi_of_square(f * f);
  sine = r < 0.0f ? -s : s;
  cosine = upper ? -c : c;
}
inline float det_sin(float x) {
  float s, c;
  det_sin_cos(x, s, c);
  return s;
}
inline float det_cos(float x) {
  float s, c;
  det_sin_cos(x, s, c);
  return c;
}

// atan2(y, x) in [-pi, pi], computed in double through det_detail::atan_unit (+ - * / only),
// rounded once: within float rounding of libm's. atan2(0, 0) is 0; NaN inputs give NaN.
inline float det_atan2(float y, float x) {
  const double yd = static_cast<double>(y), xd = static_cast<double>(x);
  if (yd != yd || xd != xd) return static_cast<float>(yd + xd);
  const double ay = yd < 0.0 ? -yd : yd, ax = xd < 0.0 ? -xd : xd;
  if (ay == 0.0 && ax == 0.0) return 0.0f;
  const double half_pi = 1.57079632679489661923, pi = 3.14159265358979323846;
  // First octant angle of (ax, ay), then reflected into the right quadrant.
  double a = ay <= ax ? det_detail::atan_unit(ay / ax) : half_pi - det_detail::atan_unit(ax / ay);
  if (xd < 0.0) a = pi - a;
  return static_cast<float>(yd < 0.0 ? -a : a);
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
