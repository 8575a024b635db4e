#pragma once
// A mesh of one vertex (and one degenerate triangle) with the given attributes: the smallest
// input of the CPU skinning references.

#include <glm/vec2.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>
#include <glm/gtc/type_precision.hpp>

#include "posecast/skinned_mesh.h"

namespace posecast::render {

inline SkinnedMesh one_vertex_mesh(glm::vec3 position, glm::vec3 normal, glm::u16vec4 joints, glm::vec4 weights) {
  SkinnedMesh mesh;
  mesh.positions = {position};
  mesh.normals = {normal};
  mesh.uvs = {glm::vec2(0.0f)};
  mesh.joints = {joints};
  mesh.weights = {weights};
  mesh.indices = {0, 0, 0};
  return mesh;
}

}  // namespace posecast::render
