#include "posecast/palette.h"

#include "affine_kernels.h"
#include "posecast/transform.h"

namespace posecast {

bool PaletteJob::Validate() const {
  if (skeleton == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  const std::size_t joints = skeleton->joint_count();
  if (models.size() != nodes || palette.size() != joints) return false;
  if (skeleton->inverse_bind.size() != joints) return false;
  if (skeleton->mesh_node < -1 || skeleton->mesh_node >= static_cast<int64_t>(nodes)) return false;
  if (assets_validated) return true;  // Skeleton::validate checked the joint nodes below
  for (const uint16_t node : skeleton->joint_nodes)
    if (node >= nodes) return false;
  return true;
}

namespace {

// palette[j] = affine_mul(affine_mul(mesh_inverse, models[joint j]), inverse_bind[j]), or
// without the first product when there is no mesh node, with the same bits, via the inline
// vector twins (affine_kernels.h). Left to right, one fixed order.
POSECAST_HOT_CLONES
void palette_from_models(const glm::mat4* mesh_inverse, const glm::mat4* models,
                         const uint16_t* joint_nodes, const glm::mat4* inverse_bind,
                         glm::mat4* palette, std::size_t joints) {
  if (mesh_inverse == nullptr) {
    for (std::size_t j = 0; j < joints; ++j) {
      const detail::LeftFactor world = detail::left_factor(models[joint_nodes[j]]);
      detail::store_affine(palette[j],
                           detail::affine_mul8(world, detail::load_affine(inverse_bind[j])));
    }
    return;
  }
  const detail::LeftFactor mesh = detail::left_factor(*mesh_inverse);
  for (std::size_t j = 0; j < joints; ++j) {
    const detail::Affine8 joint_in_mesh =
        detail::affine_mul8(mesh, detail::load_affine(models[joint_nodes[j]]));
    detail::store_affine(palette[j], detail::affine_mul8(detail::left_factor(joint_in_mesh),
                                                         detail::load_affine(inverse_bind[j])));
  }
}

}  // namespace

bool PaletteJob::Run() const {
  if (!Validate()) return false;
  glm::mat4 mesh_inverse;
  // A mesh node whose world matrix is exactly the identity (the usual case: glTF ignores the
  // skinned mesh node's transform, and exporters leave it at the scene root untransformed)
  // takes the no-mesh path: the product with its inverse is skipped. Multiplying by the
  // identity changes no nonzero float, only, rarely, the sign of a zero entry; the choice is a
  // pure function of the matrix bits, so every platform takes the same path.
  const bool has_mesh =
      skeleton->mesh_node != -1 &&
      !is_exact_identity(models[static_cast<std::size_t>(skeleton->mesh_node)]);
  if (has_mesh &&
      !affine_inverse(models[static_cast<std::size_t>(skeleton->mesh_node)], mesh_inverse))
    return false;
  palette_from_models(has_mesh ? &mesh_inverse : nullptr, models.data(),
                      skeleton->joint_nodes.data(), skeleton->inverse_bind.data(), palette.data(),
                      skeleton->joint_count());
  return true;
}

}  // namespace posecast
