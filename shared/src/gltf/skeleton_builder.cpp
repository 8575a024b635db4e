#include "gltf/skeleton_builder.h"

#include <cmath>

#include "gltf/accessor_reader.h"

namespace posecast::gltf {
namespace {

// Fills the per-node arrays of `out` for the nodes in `order` (glTF indices, parents first).
void fill_nodes(const ImportContext& ctx, const NodeGraph& graph, const std::vector<int>& order,
                BuiltSkeleton& out) {
  Skeleton& s = out.skeleton;
  out.node_to_index.assign(graph.parent.size(), -1);
  for (std::size_t k = 0; k < order.size(); ++k)
    out.node_to_index[static_cast<std::size_t>(order[k])] = static_cast<int>(k);
  for (int node : order) {
    const auto n = static_cast<std::size_t>(node);
    const int parent = graph.parent[n];
    s.parents.push_back(static_cast<int16_t>(
        parent == -1 ? kNoParent : out.node_to_index[static_cast<std::size_t>(parent)]));
    s.rest.push_back(graph.rest[n]);
    s.names.push_back(ctx.gltf().nodes[n].name);
    s.source_nodes.push_back(node);
  }
}

Result<std::vector<glm::mat4>> inverse_binds(const ImportContext& ctx, const tinygltf::Skin& skin,
                                             const std::string& path) {
  const std::size_t joints = skin.joints.size();
  std::vector<glm::mat4> result(joints, glm::mat4(1.0f));
  if (skin.inverseBindMatrices == -1) return result;  // the spec: identity matrices
  const AccessorUse use{path + ".inverseBindMatrices", skin.inverseBindMatrices,
                        TINYGLTF_TYPE_MAT4, kFloat};
  Result<std::vector<float>> data = read_floats(ctx, use);
  if (!data) return data.error();
  const std::vector<float>& f = data.value();
  if (f.size() / 16 < joints)
    return ctx.error(use.path, std::to_string(f.size() / 16) + " matrices for " +
                                   std::to_string(joints) + " joints");
  for (std::size_t j = 0; j < joints; ++j) {
    glm::mat4 m;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) m[c][r] = f[j * 16 + static_cast<std::size_t>(c * 4 + r)];
    if (!is_affine(m, 1e-4f))
      return ctx.error(use.path, "matrix " + std::to_string(j) +
                                     " is not affine (last row not (0,0,0,1) within 1e-4, or "
                                     "not finite)");
    m[0].w = 0.0f;
    m[1].w = 0.0f;
    m[2].w = 0.0f;
    m[3].w = 1.0f;
    result[j] = m;
  }
  return result;
}

}  // namespace

Result<BuiltSkeleton> build_skin_skeleton(const ImportContext& ctx, const NodeGraph& graph,
                                          std::size_t skin_index) {
  const tinygltf::Model& m = ctx.gltf();
  const tinygltf::Skin& skin = m.skins[skin_index];
  const std::string path = at("skins", skin_index);
  const std::size_t node_count = m.nodes.size();

  if (skin.joints.empty()) return ctx.error(path + ".joints", "a skin needs at least one joint");
  if (skin.joints.size() > ctx.options.max_joints)
    return ctx.error(path + ".joints", std::to_string(skin.joints.size()) +
                                           " joints, more than max_joints " +
                                           std::to_string(ctx.options.max_joints));
  std::vector<bool> is_joint(node_count, false);
  for (std::size_t k = 0; k < skin.joints.size(); ++k) {
    const int j = skin.joints[k];
    const std::string jpath = path + "." + at("joints", k);
    if (j < 0 || static_cast<std::size_t>(j) >= node_count)
      return ctx.error(jpath, "node index " + std::to_string(j) + " out of range");
    if (is_joint[static_cast<std::size_t>(j)])
      return ctx.error(jpath, at("nodes", static_cast<std::size_t>(j)) + " is listed twice");
    is_joint[static_cast<std::size_t>(j)] = true;
  }
  if (skin.skeleton != -1 && (skin.skeleton < 0 || static_cast<std::size_t>(skin.skeleton) >= node_count))
    return ctx.error(path + ".skeleton", "node index " + std::to_string(skin.skeleton) + " out of range");

  int mesh_node = -1;
  for (std::size_t n = 0; n < node_count && mesh_node == -1; ++n)
    if (m.nodes[n].skin == static_cast<int>(skin_index)) mesh_node = static_cast<int>(n);

  // Members: joints, the mesh node, and every ancestor of those.
  std::vector<bool> member(node_count, false);
  auto add_with_ancestors = [&](int v) {
    for (; v != -1 && !member[static_cast<std::size_t>(v)]; v = graph.parent[static_cast<std::size_t>(v)])
      member[static_cast<std::size_t>(v)] = true;
  };
  for (int j : skin.joints) add_with_ancestors(j);
  if (mesh_node != -1) add_with_ancestors(mesh_node);

  Result<std::vector<glm::mat4>> ibm = inverse_binds(ctx, skin, path);
  if (!ibm) return ibm.error();

  BuiltSkeleton out;
  fill_nodes(ctx, graph, parent_first_order(graph, member), out);
  Skeleton& s = out.skeleton;
  for (int j : skin.joints)
    s.joint_nodes.push_back(static_cast<uint16_t>(out.node_to_index[static_cast<std::size_t>(j)]));
  s.inverse_bind = std::move(ibm).value();
  s.mesh_node = mesh_node == -1 ? -1 : out.node_to_index[static_cast<std::size_t>(mesh_node)];
  s.source_skin = static_cast<int32_t>(skin_index);
  s.skin_name = skin.name;
  return out;
}

Result<BuiltSkeleton> build_all_nodes_skeleton(const ImportContext& ctx, const NodeGraph& graph) {
  const std::size_t node_count = graph.parent.size();
  if (node_count == 0) return ctx.error("nodes", "the file has no nodes to animate");
  if (node_count > ctx.options.max_joints)
    return ctx.error("nodes", std::to_string(node_count) +
                                  " nodes in a file without skins (one palette entry each), "
                                  "more than max_joints " +
                                  std::to_string(ctx.options.max_joints));
  BuiltSkeleton out;
  fill_nodes(ctx, graph, parent_first_order(graph, std::vector<bool>(node_count, true)), out);
  Skeleton& s = out.skeleton;
  for (std::size_t n = 0; n < node_count; ++n)
    s.joint_nodes.push_back(static_cast<uint16_t>(out.node_to_index[n]));
  s.inverse_bind.assign(node_count, glm::mat4(1.0f));
  s.mesh_node = -1;
  s.source_skin = -1;
  return out;
}

}  // namespace posecast::gltf
