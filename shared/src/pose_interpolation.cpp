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

// Nodes [0, count) of a and b (count <= 8) slerped by t into out. Lanes past `count` slerp
// identity to identity (defined values, and "nearly equal", so they never force the full slerp
// on the others) and are dropped.
POSECAST_INLINE void slerp_group(const Transform* a, const Transform* b, float t, std::size_t count,
                                 Transform* out) {
  Float4 rows_a[kLanes];
  Float4 rows_b[kLanes];
  for (std::size_t i = 0; i < kLanes; ++i) {
    const Float4 identity{0.0f, 0.0f, 0.0f, 1.0f};
    // (x, y, z, w): glm::quat's storage order (transform.h).
    rows_a[i] = i < count ? detail::load4(&a[i].rotation.x) : identity;
    rows_b[i] = i < count ? detail::load4(&b[i].rotation.x) : identity;
  }
  const QuatLanes<Float8> q = detail::slerp_lanes(detail::rows_to_lanes8(rows_a),
                                                  detail::rows_to_lanes8(rows_b), detail::splat8(t));
  Float4 rows[kLanes];
  detail::lanes8_to_rows(q, rows);
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
