#pragma once
// Skeleton: the immutable, shared description of one skin's node hierarchy.
//
// Layout (ozz-style, flat arrays): the *nodes* a palette depends on, in parent-before-child
// order whatever the glTF file's node order: the skin's joints, their non-joint ancestors, and
// the skinned mesh node with its ancestors. Evaluating them from the roots gives world matrices,
// and the palette follows the glTF 2.0 definition
//     palette[j] = inverse(world(mesh_node)) * world(joint_node[j]) * inverse_bind[j]
// with j in the skin's `joints` order (the order JOINTS_0 indexes).
//
// A Skeleton is built and validated by the importer (gltf_import.h) or the rig generator and
// never changes afterwards; any number of entities share one through Model.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/result.h"
#include "posecast/transform.h"

namespace posecast {

inline constexpr int kNoParent = -1;

struct Skeleton {
  // --- per node, node_count() entries, parents before children ---
  std::vector<int16_t> parents;       // kNoParent for roots, else an index < own index
  std::vector<Transform> rest;        // rest (bind-time) local TRS from the file
  std::vector<std::string> names;     // glTF node names; not unique in general, may be empty
  std::vector<int32_t> source_nodes;  // the glTF node index each node came from

  // --- per palette entry (skin joint), joint_count() entries, skin order ---
  std::vector<uint16_t> joint_nodes;      // node index of joint j
  std::vector<glm::mat4> inverse_bind;    // affine, last row exactly (0,0,0,1)

  // Node index of the skinned mesh node, or -1: the palette is then relative to the scene root.
  int32_t mesh_node = -1;

  int32_t source_skin = -1;  // glTF skin index, -1 for the "all nodes" rig of an unskinned file
  std::string skin_name;

  std::size_t node_count() const { return parents.size(); }
  std::size_t joint_count() const { return joint_nodes.size(); }

  // Checks every invariant above (sizes agree, parents precede children, indices in range,
  // inverse binds affine and finite, rest TRS finite). The importer calls it before returning.
  Status validate() const;
};

// Model-space matrix of every node in the rest pose (node order; parents first, so one pass).
// Deterministic (to_matrix, affine_mul). Load-time helper; allocates.
std::vector<glm::mat4> rest_model_matrices(const Skeleton& skeleton);

}  // namespace posecast
