#include "posecast/pose_interpolation.h"

#include <cmath>
#include <cstddef>

#include "posecast/det_math.h"
#include "slerp_lanes.h"

namespace posecast {
namespace {

constexpr std::size_t kLanes = 8;

using detail::Float4;
using detail::Float8;
using detail::QuatLanes;

// 4x4 transpose: four (x, y, z, w) rows to lanes x, y, z, w, and back (as the sampler's
// SlerpQueue does).
POSECAST_INLINE QuatLanes<Float4> transpose4(Float4 r0, Float4 r1, Float4 r2, Float4 r3) {
  const Float4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
  const Float4 t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const Float4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
  const Float4 t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  return {__builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
          __builtin_shufflevector(t1, t3, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
}

// The rotation of node i as (x, y, z, w) (glm::quat's storage order, transform.h); identity
// for nodes past `count`.
POSECAST_INLINE Float4 load_rotation(const Transform* pose, std::size_t i, std::size_t count) {
  return i < count ? detail::load4(&pose[i].rotation.x) : Float4{0.0f, 0.0f, 0.0f, 1.0f};
}

POSECAST_INLINE QuatLanes<Float8> load_rotations(const Transform* pose, std::size_t count) {
  const QuatLanes<Float4> lo = transpose4(load_rotation(pose, 0, count), load_rotation(pose, 1, count),
                                          load_rotation(pose, 2, count), load_rotation(pose, 3, count));
  const QuatLanes<Float4> hi = transpose4(load_rotation(pose, 4, count), load_rotation(pose, 5, count),
                                          load_rotation(pose, 6, count), load_rotation(pose, 7, count));
  return {__builtin_shufflevector(lo.x, hi.x, 0, 1, 2, 3, 4, 5, 6, 7),
          __builtin_shufflevector(lo.y, hi.y, 0, 1, 2, 3, 4, 5, 6, 7),
          __builtin_shufflevector(lo.z, hi.z, 0, 1, 2, 3, 4, 5, 6, 7),
          __builtin_shufflevector(lo.w, hi.w, 0, 1, 2, 3, 4, 5, 6, 7)};
}

// Lanes [first, first + count) of a and b slerped by t into out. Lanes past `count` slerp
// identity to identity (defined values, and "nearly equal", so they never force the full slerp
// on the others) and are dropped.
POSECAST_INLINE void slerp_group(const Transform* a, const Transform* b, float t, std::size_t count,
                                 Transform* out) {
  const QuatLanes<Float8> q =
      detail::slerp_lanes(load_rotations(a, count), load_rotations(b, count), detail::splat8(t));
  const QuatLanes<Float4> lo = transpose4(POSECAST_SHUFFLE(q.x, 0, 1, 2, 3), POSECAST_SHUFFLE(q.y, 0, 1, 2, 3),
                                          POSECAST_SHUFFLE(q.z, 0, 1, 2, 3), POSECAST_SHUFFLE(q.w, 0, 1, 2, 3));
  const QuatLanes<Float4> hi = transpose4(POSECAST_SHUFFLE(q.x, 4, 5, 6, 7), POSECAST_SHUFFLE(q.y, 4, 5, 6, 7),
                                          POSECAST_SHUFFLE(q.z, 4, 5, 6, 7), POSECAST_SHUFFLE(q.w, 4, 5, 6, 7));
  const Float4 rows[kLanes] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  for (std::size_t i = 0; i < count; ++i) detail::store4(&out[i].rotation.x, rows[i]);
}

POSECAST_HOT_CLONES
void interpolate_poses(const Transform* a, const Transform* b, float t, std::size_t count,
                       Transform* out) {
  // Rotations first, a group of eight at a time, while a and b are intact (out may alias one
  // of them: each group reads its nodes before writing them, and T/S below read only a node's
  // own T/S, which the rotation store does not touch).
  for (std::size_t first = 0; first < count; first += kLanes) {
    const std::size_t n = count - first < kLanes ? count - first : kLanes;
    slerp_group(a + first, b + first, t, n, out + first);
  }
  for (std::size_t i = 0; i < count; ++i) {
    out[i].translation = det_lerp(a[i].translation, b[i].translation, t);
    out[i].scale = det_lerp(a[i].scale, b[i].scale, t);
  }
}

}  // namespace

bool InterpolatePosesJob::Validate() const {
  return a.size() == output.size() && b.size() == output.size() && std::isfinite(t);
}

bool InterpolatePosesJob::Run() const {
  if (!Validate()) return false;
  interpolate_poses(a.data(), b.data(), t, output.size(), output.data());
  return true;
}

}  // namespace posecast
