#include "posecast/palette.h"

#include "posecast/transform.h"

namespace posecast {

bool PaletteJob::Validate() const {
  if (skeleton == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  const std::size_t joints = skeleton->joint_count();
  if (models.size() != nodes || palette.size() != joints) return false;
  if (skeleton->inverse_bind.size() != joints) return false;
  if (skeleton->mesh_node < -1 || skeleton->mesh_node >= static_cast<int64_t>(nodes)) return false;
  for (const uint16_t node : skeleton->joint_nodes)
    if (node >= nodes) return false;
  return true;
}

bool PaletteJob::Run() const {
  if (!Validate()) return false;
  const std::size_t joints = skeleton->joint_count();
  if (skeleton->mesh_node == -1) {
    for (std::size_t j = 0; j < joints; ++j)
      palette[j] = affine_mul(models[skeleton->joint_nodes[j]], skeleton->inverse_bind[j]);
    return true;
  }
  glm::mat4 mesh_inverse;
  if (!affine_inverse(models[static_cast<std::size_t>(skeleton->mesh_node)], mesh_inverse))
    return false;
  // Left to right, one fixed order: (inverse(mesh) * world(joint)) * inverse_bind.
  for (std::size_t j = 0; j < joints; ++j) {
    const glm::mat4 joint_in_mesh = affine_mul(mesh_inverse, models[skeleton->joint_nodes[j]]);
    palette[j] = affine_mul(joint_in_mesh, skeleton->inverse_bind[j]);
  }
  return true;
}

}  // namespace posecast
