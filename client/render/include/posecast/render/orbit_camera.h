#pragma once
// An orbit camera around a target point: yaw/pitch/distance, with pan and zoom, and framing of
// a bounding box. Y is up (glTF). Not part of the pose path (uses libm freely).

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include "posecast/render/gpu_model.h"

namespace posecast::render {

class OrbitCamera {
 public:
  glm::vec3 target{0.0f};
  float yaw = 0.6f;        // radians about +Y; 0 looks along -Z from +Z
  float pitch = 0.35f;     // radians above the horizon, clamped to +-1.5
  float distance = 5.0f;   // > 0
  float fov_y = 0.7854f;   // radians (45 degrees)

  glm::vec3 position() const;
  glm::mat4 view() const;
  // Near and far planes follow the distance, so any model scale stays in range.
  glm::mat4 projection(float aspect) const;

  void orbit(float delta_yaw, float delta_pitch);
  // Moves the target in the view plane by a fraction of the distance (dx right, dy up).
  void pan(float dx, float dy);
  // factor > 1 moves away.
  void zoom(float factor);
  // Keeps yaw/pitch; puts the box's centre at the target and moves in as close as the box's
  // eight corners allow, staying inside 90% of the view at this aspect (width / height).
  void frame(const Aabb& box, float aspect);
};

}  // namespace posecast::render
