#pragma once
// Private to posecast_core: inline twins of to_matrix() and affine_mul() (transform.cpp) for
// the per-tick jobs (local_to_model.cpp, palette.cpp).
//
// Why twins: the out-of-line scalar versions cost a call and a returned matrix per product,
// and the row-wise scalar code vectorises into shuffles. Here two columns of a product are one
// eight-lane expression
//     [r_c | r_c+1] = ([a0|a0] * [b_c.x|b_c+1.x] + [a1|a1] * [.y|.y]) + [a2|a2] * [.z|.z]
// (plus a3 for the translation column), in GCC/Clang generic vectors: AVX in the AVX2 clone
// (POSECAST_HOT_CLONES), SSE pairs on baseline x86-64, NEON on aarch64, scalar code at -O0.
//
// Determinism: every lane performs exactly the float operations of the scalar function, in the
// same order (no FMA: -ffp-contract=off; no reassociation). Adding -0.0f (to the columns that
// take no translation term) leaves every float unchanged, and the last row is written as the
// exact constants (0, 0, 0, 1) the scalar functions write, so results are bit-identical to
// to_matrix()/affine_mul() on every compiler, CPU and optimisation level.
// tests/sampling/local_to_model_palette_test.cpp checks this bit for bit.

#include <cstddef>
#include <glm/mat4x4.hpp>

#include "posecast/transform.h"
#include "simd4.h"

namespace posecast::detail {

// An affine matrix as two column pairs: lo = [c0 | c1], hi = [c2 | c3] (glm's memory order).
struct Affine8 {
  Float8 lo, hi;
};

POSECAST_INLINE Affine8 load_affine(const glm::mat4& m) { return {load8(&m[0].x), load8(&m[2].x)}; }

POSECAST_INLINE void store_affine(glm::mat4& m, const Affine8& a) {
  store8(&m[0].x, a.lo);
  store8(&m[2].x, a.hi);
}

// The left factor of a product, each column repeated in both halves, and the translation
// column as [-0 | a3]: added to both column pairs' second sums, it is an exact no-op for
// column 2 (x + -0 == x for every float) and the "+ a[3]" of column 3.
struct LeftFactor {
  Float8 c0, c1, c2, c3;
};

// From memory: each column loaded straight into both halves (a 128-bit broadcast load).
POSECAST_INLINE LeftFactor left_factor(const glm::mat4& m) {
  const Float4 c0 = load4(&m[0].x), c1 = load4(&m[1].x), c2 = load4(&m[2].x), c3 = load4(&m[3].x);
  const Float4 minus_zero = {-0.0f, -0.0f, -0.0f, -0.0f};
  return {__builtin_shufflevector(c0, c0, 0, 1, 2, 3, 0, 1, 2, 3),
          __builtin_shufflevector(c1, c1, 0, 1, 2, 3, 0, 1, 2, 3),
          __builtin_shufflevector(c2, c2, 0, 1, 2, 3, 0, 1, 2, 3),
          __builtin_shufflevector(minus_zero, c3, 0, 1, 2, 3, 4, 5, 6, 7)};
}

POSECAST_INLINE LeftFactor left_factor(const Affine8& a) {
  const Float8 minus_zero = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
  return {POSECAST_SHUFFLE(a.lo, 0, 1, 2, 3, 0, 1, 2, 3),
          POSECAST_SHUFFLE(a.lo, 4, 5, 6, 7, 4, 5, 6, 7),
          POSECAST_SHUFFLE(a.hi, 0, 1, 2, 3, 0, 1, 2, 3),
          __builtin_shufflevector(minus_zero, a.hi, 0, 1, 2, 3, 12, 13, 14, 15)};
}

// The exact last row: lane 3 of each column cleared, then 1.0f in column 3's. Multiplying the
// zero last row of `a` by a negative entry of `b` would otherwise leave -0.0f where affine_mul
// writes +0.0f (and a last row that is not exactly (0,0,0,1) would leak).
// Written as constant-lane blends (one instruction each where the ISA has a blend), which move
// bits exactly like the masks they replace.
POSECAST_INLINE Affine8 with_exact_last_row(Float8 lo, Float8 hi) {
  const Float8 last_row_lo = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const Float8 last_row_hi = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f};
  return {__builtin_shufflevector(lo, last_row_lo, 0, 1, 2, 11, 4, 5, 6, 15),
          __builtin_shufflevector(hi, last_row_hi, 0, 1, 2, 11, 4, 5, 6, 15)};
}

// affine_mul(a, b), bit for bit, with b's columns given as [b_c.x | b_c+1.x] etc.
POSECAST_INLINE Affine8 mul_broadcast(const LeftFactor& a, Float8 x01, Float8 y01, Float8 z01,
                                      Float8 x23, Float8 y23, Float8 z23) {
  const Float8 lo = (a.c0 * x01 + a.c1 * y01) + a.c2 * z01;
  const Float8 hi = ((a.c0 * x23 + a.c1 * y23) + a.c2 * z23) + a.c3;
  return with_exact_last_row(lo, hi);
}

// affine_mul(a, b), bit for bit.
POSECAST_INLINE Affine8 affine_mul8(const LeftFactor& a, const Affine8& b) {
  return mul_broadcast(a, POSECAST_SHUFFLE(b.lo, 0, 0, 0, 0, 4, 4, 4, 4),
                       POSECAST_SHUFFLE(b.lo, 1, 1, 1, 1, 5, 5, 5, 5),
                       POSECAST_SHUFFLE(b.lo, 2, 2, 2, 2, 6, 6, 6, 6),
                       POSECAST_SHUFFLE(b.hi, 0, 0, 0, 0, 4, 4, 4, 4),
                       POSECAST_SHUFFLE(b.hi, 1, 1, 1, 1, 5, 5, 5, 5),
                       POSECAST_SHUFFLE(b.hi, 2, 2, 2, 2, 6, 6, 6, 6));
}

// to_matrix(t) with its last row left unspecified (lanes 3 and 7 of each pair), computed as
// vectors: every lane does exactly to_matrix()'s scalar operations for its entry, e.g.
//   column 0 = (1 - (yy + zz), xy + wz, xz - wy) * scale.x
// with xy = x * (y + y) etc. Products and sums are commutative in IEEE arithmetic, and
// a - b is a + (-b) exactly, so the lanes compute P1 + (+/-P2), then 1 - that on the diagonal.
POSECAST_INLINE Affine8 to_matrix8_any_last_row(const Transform& t) {
  const Float4 q = load4(&t.rotation.x);  // x, y, z, w
  const Float4 q2 = q + q;                // x2, y2, z2, (w2 unused)
  // Columns 0 and 1 (lanes 3 and 7 unused):
  //   P1 = yy xy xz . | xy xx yz .      P2 = zz wz wy . | wz zz wx .
  const Float8 p1_lo = __builtin_shufflevector(q, q, 1, 0, 0, 0, 0, 0, 1, 0) *
                       __builtin_shufflevector(q2, q2, 1, 1, 2, 0, 1, 0, 2, 0);
  const Float8 p2_lo = __builtin_shufflevector(q, q, 2, 3, 3, 0, 3, 2, 3, 0) *
                       __builtin_shufflevector(q2, q2, 2, 2, 1, 0, 2, 2, 0, 0);
  // Column 2 (lane 3 unused): P1 = xz yz xx .   P2 = wy wx yy .
  const Float4 p1_c2 = POSECAST_SHUFFLE(q, 0, 1, 0, 0) * POSECAST_SHUFFLE(q2, 2, 2, 0, 0);
  const Float4 p2_c2 = POSECAST_SHUFFLE(q, 3, 3, 1, 0) * POSECAST_SHUFFLE(q2, 1, 0, 1, 0);
  // Sign flips (exact) turn the sums into xz - wy, xy - wz and yz - wx.
  const Int8 negate_lo = {0, 0, INT32_MIN, 0, INT32_MIN, 0, 0, 0};
  const Int4 negate_c2 = {0, INT32_MIN, 0, 0};
  const Float8 sum_lo = p1_lo + reinterpret_cast<Float8>(reinterpret_cast<Int8>(p2_lo) ^ negate_lo);
  const Float4 sum_c2 = p1_c2 + reinterpret_cast<Float4>(reinterpret_cast<Int4>(p2_c2) ^ negate_c2);
  // 1 - sum on the diagonal (lanes 0 and 5 of the pair, 2 of column 2): constant-lane blends.
  const Float8 rot_lo = __builtin_shufflevector(sum_lo, 1.0f - sum_lo, 8, 1, 2, 3, 4, 13, 6, 7);
  const Float4 rot_c2 = __builtin_shufflevector(sum_c2, 1.0f - sum_c2, 0, 1, 6, 3);
  // (w, sx, sy, sz): the four floats ending the Transform, one in-bounds load.
  static_assert(offsetof(Transform, scale) == offsetof(Transform, rotation) + 16);
  const Float4 w_scale = load4(&t.rotation.w);
  const Float8 lo = rot_lo * __builtin_shufflevector(w_scale, w_scale, 1, 1, 1, 1, 2, 2, 2, 2);
  const Float4 c2 = rot_c2 * POSECAST_SHUFFLE(w_scale, 3, 3, 3, 3);
  // Translation: x, y, z and (unused) the rotation's x that follows it in Transform.
  const Float4 translation = load4(&t.translation.x);
  return {lo, __builtin_shufflevector(c2, translation, 0, 1, 2, 3, 4, 5, 6, 7)};
}

// to_matrix(t), bit for bit.
POSECAST_INLINE Affine8 to_matrix8(const Transform& t) {
  const Affine8 m = to_matrix8_any_last_row(t);
  return with_exact_last_row(m.lo, m.hi);
}

// affine_mul(a, to_matrix(t)), bit for bit.
POSECAST_INLINE Affine8 affine_mul_trs(const LeftFactor& a, const Transform& t) {
  return affine_mul8(a, to_matrix8_any_last_row(t));
}

}  // namespace posecast::detail
