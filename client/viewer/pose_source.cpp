#include "pose_source.h"

#include <glm/geometric.hpp>

namespace posecast::viewer {

std::string perform(PoseSource& source, ViewerAction action, const render::OrbitCamera& camera) {
  if (action != ViewerAction::kFire) return source.act(action);
  const glm::vec3 eye = camera.position();
  const glm::vec3 sight = camera.target - eye;
  if (glm::length(sight) <= 0.0f) return "fire: the camera has no line of sight";
  return source.fire(eye, glm::normalize(sight));
}

}  // namespace posecast::viewer
