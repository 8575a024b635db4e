#include "posecast/render/orbit_camera.h"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

namespace posecast::render {

glm::vec3 OrbitCamera::position() const {
  const float cp = std::cos(pitch);
  return target + distance * glm::vec3(cp * std::sin(yaw), std::sin(pitch), cp * std::cos(yaw));
}

glm::mat4 OrbitCamera::view() const {
  return glm::lookAt(position(), target, glm::vec3(0.0f, 1.0f, 0.0f));
}

glm::mat4 OrbitCamera::projection(float aspect) const {
  const float near_plane = std::max(distance * 0.01f, 1e-4f);
  const float far_plane = distance * 100.0f;
  return glm::perspective(fov_y, aspect > 0.0f ? aspect : 1.0f, near_plane, far_plane);
}

void OrbitCamera::orbit(float delta_yaw, float delta_pitch) {
  yaw += delta_yaw;
  pitch = std::clamp(pitch + delta_pitch, -1.5f, 1.5f);
}

void OrbitCamera::pan(float dx, float dy) {
  const glm::vec3 forward = glm::normalize(target - position());
  const glm::vec3 right = glm::normalize(glm::cross(forward, glm::vec3(0.0f, 1.0f, 0.0f)));
  const glm::vec3 up = glm::cross(right, forward);
  target += (right * dx + up * dy) * distance;
}

void OrbitCamera::zoom(float factor) { distance = std::clamp(distance * factor, 1e-3f, 1e6f); }

void OrbitCamera::frame(const Aabb& box, float aspect) {
  if (box.empty()) return;
  target = box.center();
  // The bounding sphere always fits; a flat crowd seen from above fits much closer, so search
  // (bisection: corners only move towards the centre of the view as the camera backs away).
  const float radius = std::max(glm::length(box.size()) * 0.5f, 1e-3f);
  const float half_fov = fov_y * 0.5f;
  const float half_fov_x = std::atan(std::tan(half_fov) * std::max(aspect, 1e-3f));
  float far_enough = radius / std::sin(std::min(half_fov, half_fov_x)) * 1.05f;
  float too_close = 0.0f;
  auto fits = [&](float d) {
    distance = d;
    const glm::mat4 view_projection = projection(aspect) * view();
    for (int corner = 0; corner < 8; ++corner) {
      const glm::vec4 p((corner & 1) ? box.max.x : box.min.x, (corner & 2) ? box.max.y : box.min.y,
                        (corner & 4) ? box.max.z : box.min.z, 1.0f);
      const glm::vec4 clip = view_projection * p;
      if (clip.w <= 0.0f) return false;
      if (std::abs(clip.x) > 0.9f * clip.w || std::abs(clip.y) > 0.9f * clip.w) return false;
    }
    return true;
  };
  for (int i = 0; i < 32; ++i) {
    const float middle = 0.5f * (too_close + far_enough);
    if (fits(middle)) {
      far_enough = middle;
    } else {
      too_close = middle;
    }
  }
  distance = far_enough;
}

}  // namespace posecast::render
