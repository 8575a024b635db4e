#pragma once
// Skinned meshes: for every node with both `mesh` and `skin`, that mesh's primitives become
// the SubMeshes of one SkinnedMesh of the skin's rig (a mesh used by several nodes with the
// same skin is built once).
//
// Primitives must be TRIANGLES (mode 4): any other mode is an error naming the primitive
// (points and lines have no use in a skinned character, and strips/fans are rare enough that
// refusing them beats a silent skip). Vertex influences: every JOINTS_n/WEIGHTS_n set is read,
// equal joints merged, the four largest weights kept (ties: lower joint first) and
// renormalised to sum 1; a vertex whose weights sum to 0, or a primitive without JOINTS_0,
// is bound fully to the skin's root joint.

#include <vector>

#include "gltf/import_context.h"
#include "gltf/node_graph.h"
#include "posecast/skinned_mesh.h"

namespace posecast::gltf {

// `image_count` is Model::images.size() (0 when images are not loaded: textures are then
// dropped, base_color_image -1).
Result<std::vector<SkinnedMesh>> build_skin_meshes(const ImportContext& ctx, const NodeGraph& graph,
                                                   std::size_t skin, std::size_t image_count);

}  // namespace posecast::gltf
