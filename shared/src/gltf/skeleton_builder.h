#pragma once
// Skeletons from glTF skins (one per skin), or the single "all nodes" skeleton of a file with
// no skin. See posecast/skeleton.h for the layout the result follows.

#include <vector>

#include "gltf/import_context.h"
#include "gltf/node_graph.h"
#include "posecast/skeleton.h"

namespace posecast::gltf {

struct BuiltSkeleton {
  Skeleton skeleton;
  std::vector<int> node_to_index;  // per glTF node: its skeleton node index, or -1
};

// Skin `skin`: its joints, their non-joint ancestors, and the skinned mesh node (the first
// node in file order whose `skin` is this skin) with its ancestors; parents before children.
// Refuses out-of-range or duplicate joints, more joints than options.max_joints, and inverse
// bind matrices that are not affine (a last row within 1e-4 of (0,0,0,1) is made exact).
Result<BuiltSkeleton> build_skin_skeleton(const ImportContext& ctx, const NodeGraph& graph,
                                          std::size_t skin);

// Every node of the file; joint j is glTF node j (so palettes follow node order), identity
// inverse binds, no mesh node: the palette is each node's world matrix.
Result<BuiltSkeleton> build_all_nodes_skeleton(const ImportContext& ctx, const NodeGraph& graph);

}  // namespace posecast::gltf
