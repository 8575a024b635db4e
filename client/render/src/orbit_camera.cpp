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

void OrbitCamera::frame(const Aabb& box) {
  if (box.empty()) return;
  target = box.center();
  const float radius = std::max(glm::length(box.size()) * 0.5f, 1e-3f);
  distance = radius / std::sin(fov_y * 0.5f) * 1.05f;
}

}  // namespace posecast::render
