#include "posecast/client/pose_blend.h"

#include <algorithm>
#include <cstddef>

#include "posecast/det_math.h"
#include "posecast/pose_interpolation.h"

namespace posecast::client {
namespace {

glm::quat conjugate(const glm::quat& q) { return glm::quat(q.w, -q.x, -q.y, -q.z); }

}  // namespace

void interpolate_locals(std::span<const Transform> a, std::span<const Transform> b, float t,
                        RotationBlend blend, std::span<Transform> out) {
  if (t <= 0.0f) {
    std::copy(a.begin(), a.end(), out.begin());
    return;
  }
  if (t >= 1.0f) {
    std::copy(b.begin(), b.end(), out.begin());
    return;
  }
  if (blend == RotationBlend::kSlerp) {
    // Eight slerps at a time; bit-identical to the det_lerp / det_slerp loop below with
    // det_slerp (pose_interpolation.h). Sizes are equal (the caller's contract), so Run()
    // cannot refuse; the loop stays as a fallback all the same.
    if (InterpolatePosesJob{a, b, t, out}.Run()) return;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].translation = det_lerp(a[i].translation, b[i].translation, t);
    out[i].scale = det_lerp(a[i].scale, b[i].scale, t);
    out[i].rotation = blend == RotationBlend::kSlerp ? det_slerp(a[i].rotation, b[i].rotation, t)
                                                     : det_nlerp(a[i].rotation, b[i].rotation, t);
  }
}

void extrapolate_locals(std::span<const Transform> a, std::span<const Transform> b, float s,
                        std::span<Transform> out) {
  const float k = std::max(s, 0.0f);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Transform& ta = a[i];
    const Transform& tb = b[i];
    out[i].translation = tb.translation + (tb.translation - ta.translation) * k;
    out[i].scale = tb.scale + (tb.scale - ta.scale) * k;
    // Continue the rotation a -> b by k steps: delta = b * conj(a) applied k times, done as a
    // normalised linear continuation of the shortest-path quaternions.
    glm::quat qa = ta.rotation;
    if (det_dot(qa, tb.rotation) < 0.0f) qa = glm::quat(-qa.w, -qa.x, -qa.y, -qa.z);
    const glm::quat& qb = tb.rotation;
    out[i].rotation = det_normalize(glm::quat(qb.w + (qb.w - qa.w) * k, qb.x + (qb.x - qa.x) * k,
                                              qb.y + (qb.y - qa.y) * k, qb.z + (qb.z - qa.z) * k));
  }
}

void difference_locals(std::span<const Transform> shown, std::span<const Transform> target,
                       std::span<Transform> delta) {
  for (std::size_t i = 0; i < delta.size(); ++i) {
    delta[i].translation = shown[i].translation - target[i].translation;
    delta[i].scale = shown[i].scale - target[i].scale;
    delta[i].rotation = det_normalize(det_mul(shown[i].rotation, conjugate(target[i].rotation)));
  }
}

void apply_correction(std::span<const Transform> target, std::span<const Transform> delta,
                      float w, std::span<Transform> out) {
  if (w <= 0.0f) {
    std::copy(target.begin(), target.end(), out.begin());
    return;
  }
  const float k = std::min(w, 1.0f);
  const glm::quat identity(1.0f, 0.0f, 0.0f, 0.0f);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].translation = target[i].translation + delta[i].translation * k;
    out[i].scale = target[i].scale + delta[i].scale * k;
    out[i].rotation = det_normalize(
        det_mul(det_nlerp(identity, delta[i].rotation, k), target[i].rotation));
  }
}

}  // namespace posecast::client
