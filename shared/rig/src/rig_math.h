#pragma once
// Deterministic math for the rig generator (private to shared/rig).
//
// The generated .glb is hashed in golden tests, so every number in it must come out with the
// same bits on every compiler and CPU. Everything here therefore uses only + - * / sqrt and
// floor (each exactly rounded by IEEE 754) in double precision, evaluated in a fixed order, and
// the generator rounds to float once, when it writes. Angles are given in *turns*
// (1 turn = 360 degrees): key phases are exact fractions k/K, and reducing a turn count to
// [0, 1) is exact, whereas reducing radians by a rounded 2*pi is not.

#include <array>
#include <cmath>

namespace posecast::rig::detail {

inline constexpr double kPi = 3.14159265358979323846;

// Taylor coefficients (-1)^k / (2k+1)! and (-1)^k / (2k)! for k = 0..10. On [0, pi/2] the first
// omitted terms are below 2e-17, under double rounding.
inline constexpr std::array<double, 11> kSinCoefficients = {
    1.0,
    -1.0 / 6.0,
    1.0 / 120.0,
    -1.0 / 5040.0,
    1.0 / 362880.0,
    -1.0 / 39916800.0,
    1.0 / 6227020800.0,
    -1.0 / 1307674368000.0,
    1.0 / 355687428096000.0,
    -1.0 / 121645100408832000.0,
    1.0 / 51090942171709440000.0};
inline constexpr std::array<double, 11> kCosCoefficients = {
    1.0,
    -1.0 / 2.0,
    1.0 / 24.0,
    -1.0 / 720.0,
    1.0 / 40320.0,
    -1.0 / 3628800.0,
    1.0 / 479001600.0,
    -1.0 / 87178291200.0,
    1.0 / 20922789888000.0,
    -1.0 / 6402373705728000.0,
    1.0 / 2432902008176640000.0};

// Horner evaluation of sum c[k] * y^k, highest power first.
inline double horner(const std::array<double, 11>& c, double y) {
  double p = c[10];
  for (int k = 9; k >= 0; --k) p = c[static_cast<std::size_t>(k)] + y * p;
  return p;
}

// sin and cos of x radians for x in [0, pi/2].
inline double sin_quarter(double x) { return x * horner(kSinCoefficients, x * x); }
inline double cos_quarter(double x) { return horner(kCosCoefficients, x * x); }

// sin and cos of an angle given in turns, for any finite value.
inline double sin_turns(double turns) {
  const double f = turns - std::floor(turns);  // [0, 1), exact
  const double scaled = f * 4.0;               // exact (power of two)
  const double quadrant = std::floor(scaled);
  const double x = (scaled - quadrant) * (kPi / 2.0);  // [0, pi/2)
  switch (static_cast<int>(quadrant)) {
    case 0: return sin_quarter(x);
    case 1: return cos_quarter(x);
    case 2: return -sin_quarter(x);
    default: return -cos_quarter(x);
  }
}
inline double cos_turns(double turns) { return sin_turns(turns + 0.25); }

// Smooth step 3t^2 - 2t^3 of t clamped to [0, 1].
inline double smoothstep(double t) {
  if (t <= 0.0) return 0.0;
  if (t >= 1.0) return 1.0;
  return t * t * (3.0 - 2.0 * t);
}

struct Vec3 {
  double x = 0.0, y = 0.0, z = 0.0;
};
inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator*(Vec3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline double dot(Vec3 a, Vec3 b) { return (a.x * b.x + a.y * b.y) + a.z * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double length(Vec3 a) { return std::sqrt(dot(a, a)); }
// Precondition: a is not the zero vector.
inline Vec3 normalize(Vec3 a) { return a * (1.0 / length(a)); }

// Quaternion (x, y, z, w) as glTF stores it.
struct Quat {
  double x = 0.0, y = 0.0, z = 0.0, w = 1.0;
};
inline Quat operator*(Quat a, Quat b) {  // Hamilton product, fixed order
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
inline Quat normalize(Quat q) {
  const double inv = 1.0 / std::sqrt((q.x * q.x + q.y * q.y) + (q.z * q.z + q.w * q.w));
  return {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}
// Rotation of `turns` about a unit axis.
inline Quat axis_turns(Vec3 axis, double turns) {
  const double s = sin_turns(turns * 0.5);
  return {axis.x * s, axis.y * s, axis.z * s, cos_turns(turns * 0.5)};
}
// Rotation from angles in degrees: q = qY(yaw) * qX(pitch) * qZ(roll), so roll applies first.
// Signs (the rig stands along +Y facing +Z, its left is +X): positive pitch swings a hanging
// limb backwards (-Z), positive yaw turns +Z towards +X, positive roll swings a hanging limb
// towards +X. Unit length.
inline Quat euler_degrees(double pitch, double yaw, double roll) {
  const Quat qy = axis_turns({0.0, 1.0, 0.0}, yaw / 360.0);
  const Quat qx = axis_turns({1.0, 0.0, 0.0}, pitch / 360.0);
  const Quat qz = axis_turns({0.0, 0.0, 1.0}, roll / 360.0);
  return normalize(qy * qx * qz);
}

}  // namespace posecast::rig::detail
