#pragma once
// Private to posecast_core: det_slerp (det_math.h) on four or eight independent quaternion
// pairs at once (V = Float4 or Float8), for the sampler's LINEAR rotation tracks.
//
// Bit-identical to det_slerp lane by lane: the same operations in the same order, with both
// of det_slerp's branches computed and the taken one selected per lane:
//   - a negative dot flips b (shortest path);
//   - dot > 0.9995 takes det_nlerp, which is the blend below with weights (1 - t, t) (its own
//     hemisphere test cannot fire again: the flipped dot is exactly -dot >= 0);
//   - otherwise weights sin((1 - t) theta) / sin(theta) and sin(t theta) / sin(theta), with
//     det_acos_unit and det_sin_half_pi's polynomials;
//   - det_normalize, identity for a zero-length (or NaN) result.
// The polynomial constants are det_math.h's; tests/sampling compare SampleJob's rotations
// with det_slerp bit for bit, so a change on either side is caught.

#include "simd4.h"

namespace posecast::detail {

template <class V>
struct QuatLanes {
  V x, y, z, w;
};

template <class V>
POSECAST_INLINE V dot_lanes(const QuatLanes<V>& a, const QuatLanes<V>& b) {  // det_dot's order
  return (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w);
}

template <class V>
POSECAST_INLINE V acos_unit_lanes(V x) {  // det_acos_unit
  x = select(x < splat_as<V>(0.0f), splat_as<V>(0.0f), x);
  x = select(x > splat_as<V>(1.0f), splat_as<V>(1.0f), x);
  const V p =
      1.5707963050f +
      x * (-0.2145988016f +
           x * (0.0889789874f +
                x * (-0.0501743046f +
                     x * (0.0308918810f +
                          x * (-0.0170881256f + x * (0.0066700901f + x * -0.0012624911f))))));
  return sqrt4(1.0f - x) * p;
}

template <class V>
POSECAST_INLINE V sin_half_pi_lanes(V x) {  // det_sin_half_pi
  const V x2 = x * x;
  return x * (1.0f +
              x2 * (-1.0f / 6.0f +
                    x2 * (1.0f / 120.0f +
                          x2 * (-1.0f / 5040.0f +
                                x2 * (1.0f / 362880.0f +
                                      x2 * (-1.0f / 39916800.0f + x2 * (1.0f / 6227020800.0f)))))));
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

template <class V>
POSECAST_INLINE QuatLanes<V> slerp_lanes(const QuatLanes<V>& a, QuatLanes<V> b, V t) {
  V d = dot_lanes(a, b);
  const auto flip = d < splat_as<V>(0.0f);
  b = {select(flip, -b.x, b.x), select(flip, -b.y, b.y), select(flip, -b.z, b.z),
       select(flip, -b.w, b.w)};
  d = select(flip, -d, d);
  const auto near = d > splat_as<V>(0.9995f);
  const V s = 1.0f - t;
  V wa = s;
  V wb = t;
  // Keys sampled at animation rates are mostly under 1.8 degrees apart (99% of Fox's "Survey"
  // pairs), where every lane takes det_nlerp's weights: the polynomials are skipped then. The
  // same bits either way: the selects below pick (s, t) for those lanes.
  if (!all_lanes(near)) {
    const V theta = acos_unit_lanes(d);
    const V inv_sin = 1.0f / sqrt4(1.0f - d * d);
    wa = select(near, s, sin_half_pi_lanes(s * theta) * inv_sin);
    wb = select(near, t, sin_half_pi_lanes(t * theta) * inv_sin);
  }
  return normalize_lanes<V>(
      {a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb, a.w * wa + b.w * wb});
}

}  // namespace posecast::detail
