#pragma once
// Private to posecast_core: the deterministic slerps on four or eight independent quaternion
// pairs at once (V = Float4 or Float8), lane by lane bit-identical to their scalar
// definitions in det_math.h:
//   - key_slerp_lanes: det_key_slerp, the sampler's LINEAR rotation tracks, from each key
//     pair's precomputed terms (Clip::slerp_terms, or det_key_slerp_terms on the spot for a
//     clip without them): two polynomials and eight products per lane;
//   - slerp_lanes: det_slerp, the client's interpolation between decoded poses (terms
//     computed in lanes):
//       - b times `sign` (exactly b, or exactly -b: det_slerp's shortest-path flip);
//       - `near` lanes take det_nlerp, which is the blend below with weights (1 - t, t) (its
//         own hemisphere test cannot fire again: the flipped dot is exactly -dot >= 0);
//       - otherwise weights sin((1 - t) theta) * inv_sin and sin(t theta) * inv_sin, with
//         det_sin_half_pi's polynomial;
//       - det_normalize, identity for a zero-length (or NaN) result.
// The polynomials are det_math.h's own (det_detail::det_horner over its coefficient tables);
// tests/sampling compare SampleJob's rotations
// with det_key_slerp, and tests/netclient the interpolation with det_slerp, bit for bit, so
// a change on either side is caught.

#include "posecast/det_math.h"
#include "simd4.h"

namespace posecast::detail {

template <class V>
struct QuatLanes {
  V x, y, z, w;
};

// 4x4 transpose: four (x, y, z, w) rows to lanes x, y, z, w (and, applied to lanes, back).
POSECAST_INLINE QuatLanes<Float4> transpose4(const Float4* r) {
  const Float4 t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5);
  const Float4 t1 = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
  const Float4 t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5);
  const Float4 t3 = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
  return {__builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
          __builtin_shufflevector(t1, t3, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
}

// Eight (x, y, z, w) rows to eight-lane x, y, z, w, and back. Rows i and i + 4 share one
// 256-bit register (low and high half), so the transpose is the in-lane 4x4 one on both
// halves at once: eight shuffles, plus four half inserts (or extracts). Bits only move.
POSECAST_INLINE QuatLanes<Float8> rows_to_lanes8(const Float4* rows) {
  Float8 pair[4];  // rows (i, i + 4)
  for (int i = 0; i < 4; ++i) {
    pair[i] = __builtin_shufflevector(rows[i], rows[i + 4], 0, 1, 2, 3, 4, 5, 6, 7);
  }
  const Float8 t0 = __builtin_shufflevector(pair[0], pair[1], 0, 8, 1, 9, 4, 12, 5, 13);
  const Float8 t1 = __builtin_shufflevector(pair[0], pair[1], 2, 10, 3, 11, 6, 14, 7, 15);
  const Float8 t2 = __builtin_shufflevector(pair[2], pair[3], 0, 8, 1, 9, 4, 12, 5, 13);
  const Float8 t3 = __builtin_shufflevector(pair[2], pair[3], 2, 10, 3, 11, 6, 14, 7, 15);
  return {__builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13),
          __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15),
          __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13),
          __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15)};
}

// Lane i of q as the row (x, y, z, w) rows[i], for all eight lanes.
POSECAST_INLINE void lanes8_to_rows(const QuatLanes<Float8>& q, Float4* rows) {
  const Float8 t0 = __builtin_shufflevector(q.x, q.y, 0, 8, 1, 9, 4, 12, 5, 13);
  const Float8 t1 = __builtin_shufflevector(q.x, q.y, 2, 10, 3, 11, 6, 14, 7, 15);
  const Float8 t2 = __builtin_shufflevector(q.z, q.w, 0, 8, 1, 9, 4, 12, 5, 13);
  const Float8 t3 = __builtin_shufflevector(q.z, q.w, 2, 10, 3, 11, 6, 14, 7, 15);
  const Float8 pair[4] = {__builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13),
                          __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15),
                          __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13),
                          __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15)};
  for (int i = 0; i < 4; ++i) {
    rows[i] = POSECAST_SHUFFLE(pair[i], 0, 1, 2, 3);
    rows[i + 4] = POSECAST_SHUFFLE(pair[i], 4, 5, 6, 7);
  }
}

template <class V>
POSECAST_INLINE V dot_lanes(const QuatLanes<V>& a, const QuatLanes<V>& b) {  // det_dot's order
  return (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w);
}

template <class V>
POSECAST_INLINE V acos_unit_lanes(V x) {  // det_acos_unit
  x = select(x < splat_as<V>(0.0f), splat_as<V>(0.0f), x);
  x = select(x > splat_as<V>(1.0f), splat_as<V>(1.0f), x);
  return sqrt4(1.0f - x) * det_detail::det_horner(x, det_detail::kAcosUnit);
}

template <class V>
POSECAST_INLINE V sin_half_pi_lanes(V x) {  // det_sin_half_pi
  return x * det_detail::det_horner(x * x, det_detail::kSinHalfPi);
}

template <class V>
POSECAST_INLINE QuatLanes<V> normalize_lanes(const QuatLanes<V>& q) {  // det_normalize
  const V len2 = dot_lanes(q, q);
  const auto nonzero = len2 > splat_as<V>(0.0f);
  const V inv = 1.0f / sqrt4(len2);
  const V zero = splat_as<V>(0.0f);
  return {select(nonzero, q.x * inv, zero), select(nonzero, q.y * inv, zero),
          select(nonzero, q.z * inv, zero), select(nonzero, q.w * inv, splat_as<V>(1.0f))};
}

// True when every lane of a comparison mask is set (an AND across the lanes).
POSECAST_INLINE bool all_lanes(Int4 m) {
  m &= POSECAST_SHUFFLE(m, 2, 3, 0, 1);
  m &= POSECAST_SHUFFLE(m, 1, 0, 3, 2);
  return m[0] != 0;
}
POSECAST_INLINE bool all_lanes(Int8 m) {
  return all_lanes(Int4{m[0], m[1], m[2], m[3]} & Int4{m[4], m[5], m[6], m[7]});
}

// det_key_slerp lane by lane: a cos(t theta) + c sin(t theta), det_math.h's operations.
template <class V>
POSECAST_INLINE QuatLanes<V> key_slerp_lanes(const QuatLanes<V>& a, const QuatLanes<V>& c,
                                             V theta, V t) {
  const V x = t * theta;
  const V sin_x = sin_half_pi_lanes(x);
  const V cos_x = det_detail::det_horner(x * x, det_detail::kCosHalfPi);
  return {a.x * cos_x + c.x * sin_x, a.y * cos_x + c.y * sin_x, a.z * cos_x + c.z * sin_x,
          a.w * cos_x + c.w * sin_x};
}

// det_slerp given its t-free terms in lanes (computed by the overload below): x = sign (-1
// when b is flipped to the shortest path, else 1), y = theta = det_acos_unit(|dot|), z =
// inv_sin = 1 / sqrt(1 - dot^2), w = near (1 when det_slerp takes its nlerp branch, else 0).
template <class V>
POSECAST_INLINE QuatLanes<V> slerp_lanes(const QuatLanes<V>& a, const QuatLanes<V>& b,
                                         const QuatLanes<V>& terms, V t) {
  const V sign = terms.x;
  const QuatLanes<V> shortest{b.x * sign, b.y * sign, b.z * sign, b.w * sign};
  const auto near = terms.w > splat_as<V>(0.5f);
  const V s = 1.0f - t;
  V wa = s;
  V wb = t;
  // Poses a frame apart are often under 1.8 degrees apart, where every lane takes det_nlerp's
  // weights: the polynomials are skipped then. The same bits either way: the selects below
  // pick (s, t) for those lanes.
  if (!all_lanes(near)) {
    wa = select(near, s, sin_half_pi_lanes(s * terms.y) * terms.z);
    wb = select(near, t, sin_half_pi_lanes(t * terms.y) * terms.z);
  }
  return normalize_lanes<V>({a.x * wa + shortest.x * wb, a.y * wa + shortest.y * wb,
                             a.z * wa + shortest.z * wb, a.w * wa + shortest.w * wb});
}

// det_slerp (the client's interpolation between decoded poses): the terms computed in lanes,
// det_slerp's operations. Near lanes keep
// theta = inv_sin = 0 only when every lane is near; otherwise they get values the selects in
// the overload above discard, so the bits are det_slerp's either way.
template <class V>
POSECAST_INLINE QuatLanes<V> slerp_lanes(const QuatLanes<V>& a, const QuatLanes<V>& b, V t) {
  V d = dot_lanes(a, b);
  const auto flip = d < splat_as<V>(0.0f);
  d = select(flip, -d, d);
  const auto near = d > splat_as<V>(0.9995f);
  QuatLanes<V> terms{select(flip, splat_as<V>(-1.0f), splat_as<V>(1.0f)), splat_as<V>(0.0f),
                     splat_as<V>(0.0f), select(near, splat_as<V>(1.0f), splat_as<V>(0.0f))};
  if (!all_lanes(near)) {
    terms.y = acos_unit_lanes(d);
    terms.z = 1.0f / sqrt4(1.0f - d * d);
  }
  return slerp_lanes(a, b, terms, t);
}

}  // namespace posecast::detail
