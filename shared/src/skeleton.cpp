#include "posecast/skeleton.h"

#include <cmath>

namespace posecast {
namespace {

Error invalid(const Skeleton& s, const std::string& what) {
  return Error{"skeleton '" + s.skin_name + "': " + what};
}

bool finite3(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

Status Skeleton::validate() const {
  const std::size_t n = parents.size();
  if (n == 0) return invalid(*this, "no nodes");
  if (n > 32767) return invalid(*this, std::to_string(n) + " nodes, more than int16 parents can index");
  if (rest.size() != n || names.size() != n || source_nodes.size() != n)
    return invalid(*this, "per-node arrays differ in size (parents " + std::to_string(n) + ", rest " +
                              std::to_string(rest.size()) + ", names " + std::to_string(names.size()) +
                              ", source_nodes " + std::to_string(source_nodes.size()) + ")");
  for (std::size_t i = 0; i < n; ++i) {
    const int p = parents[i];
    if (p != kNoParent && (p < 0 || static_cast<std::size_t>(p) >= i))
      return invalid(*this, "parents[" + std::to_string(i) + "] = " + std::to_string(p) +
                                " does not come before the node");
    const Transform& t = rest[i];
    const glm::quat& q = t.rotation;
    if (!finite3(t.translation) || !finite3(t.scale) || !std::isfinite(q.x) || !std::isfinite(q.y) ||
        !std::isfinite(q.z) || !std::isfinite(q.w))
      return invalid(*this, "rest[" + std::to_string(i) + "] is not finite");
    const float len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    if (std::fabs(len2 - 1.0f) > 1e-3f)
      return invalid(*this, "rest[" + std::to_string(i) + "].rotation is not unit length");
  }
  const std::size_t joints = joint_nodes.size();
  if (joints == 0) return invalid(*this, "no joints");
  if (inverse_bind.size() != joints)
    return invalid(*this, std::to_string(inverse_bind.size()) + " inverse bind matrices for " +
                              std::to_string(joints) + " joints");
  std::vector<bool> used(n, false);
  for (std::size_t j = 0; j < joints; ++j) {
    const std::size_t node = joint_nodes[j];
    if (node >= n)
      return invalid(*this, "joint_nodes[" + std::to_string(j) + "] = " + std::to_string(node) + " out of range");
    if (used[node]) return invalid(*this, "joint_nodes[" + std::to_string(j) + "] repeats node " + std::to_string(node));
    used[node] = true;
    const glm::mat4& m = inverse_bind[j];
    if (!is_affine(m, 0.0f))
      return invalid(*this, "inverse_bind[" + std::to_string(j) + "] is not affine with last row exactly (0,0,0,1)");
  }
  if (mesh_node < -1 || (mesh_node >= 0 && static_cast<std::size_t>(mesh_node) >= n))
    return invalid(*this, "mesh_node " + std::to_string(mesh_node) + " out of range");
  return {};
}

std::vector<glm::mat4> rest_model_matrices(const Skeleton& skeleton) {
  std::vector<glm::mat4> models(skeleton.node_count());
  for (std::size_t i = 0; i < skeleton.node_count(); ++i) {
    const glm::mat4 local = to_matrix(skeleton.rest[i]);
    const int parent = skeleton.parents[i];
    models[i] = parent == kNoParent ? local : affine_mul(models[static_cast<std::size_t>(parent)], local);
  }
  return models;
}

}  // namespace posecast
