#include "gltf/node_graph.h"

#include <algorithm>
#include <cmath>

#include "posecast/det_math.h"

namespace posecast::gltf {
namespace {

bool all_finite(const std::vector<double>& v) {
  for (double d : v)
    if (!std::isfinite(d)) return false;
  return true;
}

// The rest TRS of one node. A `matrix` must decompose into T * R * S: we recompose it and
// compare, which catches shear and projective parts that decompose() alone would not.
Status rest_transform(const ImportContext& ctx, std::size_t n, Transform& out) {
  const tinygltf::Node& node = ctx.gltf().nodes[n];
  const std::string path = at("nodes", n);
  out = Transform::identity();
  if (!node.matrix.empty()) {
    if (node.matrix.size() != 16) return ctx.error(path + ".matrix", "expected 16 numbers");
    if (!all_finite(node.matrix)) return ctx.error(path + ".matrix", "holds NaN or infinity");
    glm::mat4 m;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) m[c][r] = static_cast<float>(node.matrix[static_cast<std::size_t>(c * 4 + r)]);
    Transform t;
    if (!decompose(m, t))
      return ctx.error(path + ".matrix", "not decomposable into translation, rotation and scale");
    const glm::mat4 back = to_matrix(t);
    float largest = 1.0f;
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r) largest = std::max(largest, std::fabs(m[c][r]));
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r)
        if (std::fabs(back[c][r] - m[c][r]) > 1e-4f * largest)
          return ctx.error(path + ".matrix",
                           "has shear: not decomposable into translation, rotation and scale");
    out = t;
    return {};
  }
  if (!node.translation.empty()) {
    if (node.translation.size() != 3) return ctx.error(path + ".translation", "expected 3 numbers");
    if (!all_finite(node.translation)) return ctx.error(path + ".translation", "holds NaN or infinity");
    out.translation = glm::vec3(static_cast<float>(node.translation[0]),
                                static_cast<float>(node.translation[1]),
                                static_cast<float>(node.translation[2]));
  }
  if (!node.rotation.empty()) {
    if (node.rotation.size() != 4) return ctx.error(path + ".rotation", "expected 4 numbers");
    if (!all_finite(node.rotation)) return ctx.error(path + ".rotation", "holds NaN or infinity");
    const glm::quat q(static_cast<float>(node.rotation[3]), static_cast<float>(node.rotation[0]),
                      static_cast<float>(node.rotation[1]), static_cast<float>(node.rotation[2]));
    if (!(det_dot(q, q) > 0.0f)) return ctx.error(path + ".rotation", "zero-length quaternion");
    out.rotation = det_normalize(q);
  }
  if (!node.scale.empty()) {
    if (node.scale.size() != 3) return ctx.error(path + ".scale", "expected 3 numbers");
    if (!all_finite(node.scale)) return ctx.error(path + ".scale", "holds NaN or infinity");
    out.scale = glm::vec3(static_cast<float>(node.scale[0]), static_cast<float>(node.scale[1]),
                          static_cast<float>(node.scale[2]));
  }
  return {};
}

}  // namespace

Result<NodeGraph> build_node_graph(const ImportContext& ctx) {
  const tinygltf::Model& m = ctx.gltf();
  const std::size_t n = m.nodes.size();
  if (n > kMaxNodes)
    return ctx.error("nodes", std::to_string(n) + " nodes, more than the " +
                                  std::to_string(kMaxNodes) + " supported");
  NodeGraph g;
  g.parent.assign(n, -1);
  g.rest.resize(n);
  g.has_matrix.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const tinygltf::Node& node = m.nodes[i];
    const std::string path = at("nodes", i);
    for (std::size_t k = 0; k < node.children.size(); ++k) {
      const int c = node.children[k];
      const std::string cpath = path + "." + at("children", k);
      if (c < 0 || static_cast<std::size_t>(c) >= n)
        return ctx.error(cpath, "node index " + std::to_string(c) + " out of range");
      if (static_cast<std::size_t>(c) == i)
        return ctx.error(cpath, "node hierarchy has a cycle: the node is its own child");
      int& p = g.parent[static_cast<std::size_t>(c)];
      if (p != -1)
        return ctx.error(cpath, at("nodes", static_cast<std::size_t>(c)) + " has two parents, " +
                                    at("nodes", static_cast<std::size_t>(p)) + " and " + path);
      p = static_cast<int>(i);
    }
    if (node.skin != -1 && (node.skin < 0 || static_cast<std::size_t>(node.skin) >= m.skins.size()))
      return ctx.error(path + ".skin", "skin index " + std::to_string(node.skin) + " out of range");
    if (node.mesh != -1 && (node.mesh < 0 || static_cast<std::size_t>(node.mesh) >= m.meshes.size()))
      return ctx.error(path + ".mesh", "mesh index " + std::to_string(node.mesh) + " out of range");
    if (node.skin != -1 && node.mesh == -1)
      return ctx.error(path + ".skin", "a node with a skin must also have a mesh");
    if (Status s = rest_transform(ctx, i, g.rest[i]); !s) return s.error();
    g.has_matrix[i] = !node.matrix.empty();
  }
  // With at most one parent per node, a cycle is a parent chain that never reaches a root.
  // state: 0 unvisited, 1 on the chain being walked, 2 known to reach a root.
  std::vector<uint8_t> state(n, 0);
  std::vector<int> chain;
  for (std::size_t i = 0; i < n; ++i) {
    chain.clear();
    int v = static_cast<int>(i);
    while (v != -1 && state[static_cast<std::size_t>(v)] == 0) {
      state[static_cast<std::size_t>(v)] = 1;
      chain.push_back(v);
      v = g.parent[static_cast<std::size_t>(v)];
    }
    if (v != -1 && state[static_cast<std::size_t>(v)] == 1)
      return ctx.error(at("nodes", static_cast<std::size_t>(v)) + ".children",
                       "node hierarchy has a cycle through this node");
    for (int c : chain) state[static_cast<std::size_t>(c)] = 2;
  }
  return g;
}

std::vector<int> parent_first_order(const NodeGraph& graph, const std::vector<bool>& member) {
  std::vector<int> order;
  std::vector<bool> emitted(member.size(), false);
  std::vector<int> pending;
  for (std::size_t i = 0; i < member.size(); ++i) {
    if (!member[i] || emitted[i]) continue;
    // Emit the not-yet-emitted ancestors from the top down, then the node.
    pending.clear();
    for (int v = static_cast<int>(i); v != -1 && !emitted[static_cast<std::size_t>(v)];
         v = graph.parent[static_cast<std::size_t>(v)])
      pending.push_back(v);
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
      emitted[static_cast<std::size_t>(*it)] = true;
      order.push_back(*it);
    }
  }
  return order;
}

}  // namespace posecast::gltf
