#include "hit_marks.h"

#include <algorithm>
#include <cmath>

#include <glm/geometric.hpp>

namespace posecast::viewer {
namespace {

constexpr float kTwoPi = 6.28318530718f;

void push(std::vector<float>& out, const glm::vec3& p, const float color[3]) {
  out.insert(out.end(), {p.x, p.y, p.z, color[0], color[1], color[2]});
}

// A circle of `radius` about `centre` in the plane of the unit vectors u, v.
void append_circle(const glm::vec3& centre, const glm::vec3& u, const glm::vec3& v, float radius, const float color[3],
                   std::vector<float>& out) {
  for (int k = 0; k < kCapsuleRingSegments; ++k) {
    for (int end = 0; end < 2; ++end) {
      const float angle = kTwoPi * static_cast<float>(k + end) / kCapsuleRingSegments;
      push(out, centre + radius * (std::cos(angle) * u + std::sin(angle) * v), color);
    }
  }
}

}  // namespace

float hit_mark_fade(int64_t age_us) {
  if (age_us < 0 || age_us >= kHitMarkLifetimeUs) return 1.0f;
  // Full colour for the first 70 % of the lifetime, then a linear fade.
  const int64_t steady = kHitMarkLifetimeUs * 7 / 10;
  if (age_us <= steady) return 0.0f;
  return static_cast<float>(age_us - steady) / static_cast<float>(kHitMarkLifetimeUs - steady);
}

void append_capsule_lines(const PosedCapsule& capsule, const float color[3], std::vector<float>& out) {
  const glm::vec3 axis = capsule.b - capsule.a;
  const float length = glm::length(axis);
  const glm::vec3 w = length > 1e-6f ? axis / length : glm::vec3(0.0f, 1.0f, 0.0f);
  // Two unit vectors across the axis.
  const glm::vec3 helper = std::fabs(w.y) < 0.9f ? glm::vec3(0.0f, 1.0f, 0.0f) : glm::vec3(1.0f, 0.0f, 0.0f);
  const glm::vec3 u = glm::normalize(glm::cross(w, helper));
  const glm::vec3 v = glm::cross(w, u);
  const float r = capsule.radius;
  if (length <= 1e-6f) {
    append_circle(capsule.a, u, v, r, color, out);
    append_circle(capsule.a, u, w, r, color, out);
    append_circle(capsule.a, v, w, r, color, out);
    return;
  }
  for (const glm::vec3& centre : {capsule.a, 0.5f * (capsule.a + capsule.b), capsule.b}) {
    append_circle(centre, u, v, r, color, out);
  }
  for (int k = 0; k < kCapsuleSides; ++k) {
    const float angle = kTwoPi * static_cast<float>(k) / kCapsuleSides;
    const glm::vec3 offset = r * (std::cos(angle) * u + std::sin(angle) * v);
    push(out, capsule.a + offset, color);
    push(out, capsule.b + offset, color);
  }
}

}  // namespace posecast::viewer
