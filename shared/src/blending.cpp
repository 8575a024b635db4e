#include "posecast/blending.h"

#include <cmath>
#include <cstddef>
#include <cstring>

#include "posecast/det_math.h"

namespace posecast {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

bool finite_non_negative(float w) { return std::isfinite(w) && w >= 0.0f; }

bool mask_ok(std::span<const float> mask, std::size_t nodes) {
  if (mask.empty()) return true;
  if (mask.size() != nodes) return false;
  for (float m : mask) {
    if (!std::isfinite(m)) return false;
  }
  return true;
}

void copy_pose(std::span<const Transform> from, std::span<Transform> to) {
  // Transform is padding-free (transform.h), so a byte copy is a bit-exact copy.
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size() * sizeof(Transform));
}

// Exact value comparison (no epsilon), written out rather than relying on glm's operators.
bool equal(const glm::vec3& a, const glm::vec3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
bool equal(const glm::quat& a, const glm::quat& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}

glm::vec3 mul_add(const glm::vec3& acc, const glm::vec3& v, float k) {
  return glm::vec3(acc.x + v.x * k, acc.y + v.y * k, acc.z + v.z * k);
}

}  // namespace

bool BlendJob::Validate() const {
  const std::size_t nodes = output.size();
  if (rest.size() != nodes) return false;
  for (const BlendInput& input : inputs) {
    if (input.pose.size() != nodes || !finite_non_negative(input.weight)) return false;
  }
  return true;
}

bool BlendJob::Run() const {
  if (!Validate()) return false;
  std::size_t first = kNone;
  std::size_t contributing = 0;
  float total = 0.0f;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].weight > 0.0f) {
      if (first == kNone) first = i;
      total += inputs[i].weight;
      ++contributing;
    }
  }
  if (contributing == 0) {
    copy_pose(rest, output);
    return true;
  }
  if (contributing == 1) {
    copy_pose(inputs[first].pose, output);
    return true;
  }
  // Weights are normalised once per call; every node uses the same factors.
  const float inv_total = 1.0f / total;
  const float k_first = inputs[first].weight * inv_total;
  for (std::size_t n = 0; n < output.size(); ++n) {
    const Transform& f = inputs[first].pose[n];
    glm::vec3 t(f.translation.x * k_first, f.translation.y * k_first, f.translation.z * k_first);
    glm::vec3 s(f.scale.x * k_first, f.scale.y * k_first, f.scale.z * k_first);
    const glm::quat& reference = f.rotation;
    glm::quat q(reference.w * k_first, reference.x * k_first, reference.y * k_first,
                reference.z * k_first);
    for (std::size_t i = first + 1; i < inputs.size(); ++i) {
      if (!(inputs[i].weight > 0.0f)) continue;
      const float k = inputs[i].weight * inv_total;
      const Transform& x = inputs[i].pose[n];
      t = mul_add(t, x.translation, k);
      s = mul_add(s, x.scale, k);
      // q and -q are the same rotation: take the one on the reference's side.
      const float kq = det_dot(reference, x.rotation) < 0.0f ? -k : k;
      q = glm::quat(q.w + x.rotation.w * kq, q.x + x.rotation.x * kq, q.y + x.rotation.y * kq,
                    q.z + x.rotation.z * kq);
    }
    Transform& out = output[n];
    out.translation = t;
    out.rotation = det_normalize(q);
    out.scale = s;
  }
  return true;
}

bool OverrideBlendJob::Validate() const {
  return layer.size() == pose.size() && std::isfinite(weight) && mask_ok(mask, pose.size());
}

bool OverrideBlendJob::Run() const {
  if (!Validate()) return false;
  for (std::size_t n = 0; n < pose.size(); ++n) {
    const float t = mask.empty() ? weight : weight * mask[n];
    if (!(t > 0.0f)) continue;
    Transform& p = pose[n];
    const Transform& l = layer[n];
    if (t >= 1.0f) {
      p = l;
      continue;
    }
    p.translation = det_lerp(p.translation, l.translation, t);
    p.rotation = det_nlerp(p.rotation, l.rotation, t);
    p.scale = det_lerp(p.scale, l.scale, t);
  }
  return true;
}

bool AdditiveBlendJob::Validate() const {
  return additive.size() == pose.size() && reference.size() == pose.size() &&
         std::isfinite(weight) && mask_ok(mask, pose.size());
}

bool AdditiveBlendJob::Run() const {
  if (!Validate()) return false;
  const glm::quat identity(1.0f, 0.0f, 0.0f, 0.0f);
  for (std::size_t n = 0; n < pose.size(); ++n) {
    const float t = mask.empty() ? weight : weight * mask[n];
    if (t == 0.0f) continue;
    Transform& p = pose[n];
    const Transform& a = additive[n];
    const Transform& r = reference[n];

    // Each part whose additive value equals its reference is skipped, so an additive pose equal
    // to its reference leaves the pose bit for bit unchanged (the general formulas would only
    // nearly cancel: conj(r) * r is the identity up to rounding).
    if (!equal(a.translation, r.translation)) {
      const glm::vec3 dt = a.translation - r.translation;
      p.translation = glm::vec3(p.translation.x + dt.x * t, p.translation.y + dt.y * t,
                                p.translation.z + dt.z * t);
    }
    if (!equal(a.scale, r.scale)) {
      const auto ratio = [](float add, float ref) { return ref == 0.0f ? 1.0f : add / ref; };
      const glm::vec3 ds(ratio(a.scale.x, r.scale.x), ratio(a.scale.y, r.scale.y),
                         ratio(a.scale.z, r.scale.z));
      p.scale = glm::vec3(p.scale.x * (1.0f + t * (ds.x - 1.0f)),
                          p.scale.y * (1.0f + t * (ds.y - 1.0f)),
                          p.scale.z * (1.0f + t * (ds.z - 1.0f)));
    }
    if (!equal(a.rotation, r.rotation)) {
      const glm::quat r_conj(r.rotation.w, -r.rotation.x, -r.rotation.y, -r.rotation.z);
      glm::quat dq = det_mul(r_conj, a.rotation);
      if (t != 1.0f) dq = det_nlerp(identity, dq, t);
      p.rotation = det_normalize(det_mul(p.rotation, dq));
    }
  }
  return true;
}

}  // namespace posecast
