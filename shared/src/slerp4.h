#pragma once
// Private to posecast_core: det_slerp (det_math.h) on four independent quaternion pairs at
// once, for the sampler's LINEAR rotation tracks.
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

struct Quat4 {
  Float4 x, y, z, w;
};

POSECAST_INLINE Float4 dot4(const Quat4& a, const Quat4& b) {  // det_dot's order
  return (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w);
}

POSECAST_INLINE Float4 acos_unit4(Float4 x) {  // det_acos_unit
  x = select(x < splat(0.0f), splat(0.0f), x);
  x = select(x > splat(1.0f), splat(1.0f), x);
  const Float4 p =
      1.5707963050f +
      x * (-0.2145988016f +
           x * (0.0889789874f +
                x * (-0.0501743046f +
                     x * (0.0308918810f +
                          x * (-0.0170881256f + x * (0.0066700901f + x * -0.0012624911f))))));
  return sqrt4(1.0f - x) * p;
}

POSECAST_INLINE Float4 sin_half_pi4(Float4 x) {  // det_sin_half_pi
  const Float4 x2 = x * x;
  return x * (1.0f +
              x2 * (-1.0f / 6.0f +
                    x2 * (1.0f / 120.0f +
                          x2 * (-1.0f / 5040.0f +
                                x2 * (1.0f / 362880.0f +
                                      x2 * (-1.0f / 39916800.0f + x2 * (1.0f / 6227020800.0f)))))));
}

POSECAST_INLINE Quat4 normalize4(const Quat4& q) {  // det_normalize
  const Float4 len2 = dot4(q, q);
  const Int4 nonzero = len2 > splat(0.0f);
  const Float4 inv = 1.0f / sqrt4(len2);
  return {select(nonzero, q.x * inv, splat(0.0f)), select(nonzero, q.y * inv, splat(0.0f)),
          select(nonzero, q.z * inv, splat(0.0f)), select(nonzero, q.w * inv, splat(1.0f))};
}

POSECAST_INLINE Quat4 slerp4(const Quat4& a, Quat4 b, Float4 t) {
  Float4 d = dot4(a, b);
  const Int4 flip = d < splat(0.0f);
  b = {select(flip, -b.x, b.x), select(flip, -b.y, b.y), select(flip, -b.z, b.z),
       select(flip, -b.w, b.w)};
  d = select(flip, -d, d);
  const Int4 near = d > splat(0.9995f);
  const Float4 s = 1.0f - t;
  const Float4 theta = acos_unit4(d);
  const Float4 inv_sin = 1.0f / sqrt4(1.0f - d * d);
  const Float4 wa = select(near, s, sin_half_pi4(s * theta) * inv_sin);
  const Float4 wb = select(near, t, sin_half_pi4(t * theta) * inv_sin);
  return normalize4(
      {a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb, a.w * wa + b.w * wb});
}

}  // namespace posecast::detail
