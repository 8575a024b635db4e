#pragma once
// The glTF node hierarchy, checked: every child index in range, no node with two parents, no
// cycles; and each node's rest transform as TRS (a `matrix` decomposed, refused when it is not
// a translation * rotation * scale).

#include <cstdint>
#include <vector>

#include "gltf/import_context.h"
#include "posecast/transform.h"

namespace posecast::gltf {

// Skeleton::parents is int16_t, so a file may hold at most this many nodes.
inline constexpr std::size_t kMaxNodes = 32767;

struct NodeGraph {
  std::vector<int> parent;      // per glTF node: parent node index, -1 for roots
  std::vector<Transform> rest;  // per glTF node: rest TRS
  std::vector<bool> has_matrix;  // per glTF node: given as `matrix` (may not be animated)
};

// Also checks each node's `skin` and `mesh` index and that a node with a skin has a mesh.
Result<NodeGraph> build_node_graph(const ImportContext& ctx);

// Parent-before-child order of the nodes marked in `member` (glTF node indices), stable: file
// order, except that a node whose parent comes later in the file is preceded by that parent.
// Precondition: every ancestor of a member is a member.
std::vector<int> parent_first_order(const NodeGraph& graph, const std::vector<bool>& member);

}  // namespace posecast::gltf
