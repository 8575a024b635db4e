#pragma once
// SkinnedMesh: immutable vertex data for GPU (or CPU reference) linear-blend skinning.

#include <glm/gtc/type_precision.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace posecast {

// One glTF primitive: a range of SkinnedMesh::indices.
struct SubMesh {
  uint32_t first_index = 0;
  uint32_t index_count = 0;
  glm::vec4 base_color{1.0f, 1.0f, 1.0f, 1.0f};  // material baseColorFactor
  int32_t base_color_image = -1;  // index into Model::images, -1 when untextured
  // material.doubleSided (glTF default, and no material: false). False: back faces are culled
  // (counter-clockwise front faces, clockwise under a transform with a negative determinant);
  // true: both faces drawn and lit, a back face with its normal reversed.
  bool double_sided = false;
};

struct SkinnedMesh {
  std::string name;
  int32_t source_mesh = -1;  // glTF mesh index
  // Per vertex (all the same length). Normals are zero where the file has none; uvs (0,0).
  std::vector<glm::vec3> positions;
  std::vector<glm::vec3> normals;
  std::vector<glm::vec2> uvs;
  // Up to four influences: palette indices and weights summing to 1. JOINTS_1/WEIGHTS_1 are
  // folded in keeping the four largest; a vertex with no weight is bound fully to the skin's
  // root joint (the first joint in skin order whose parent is not a joint).
  std::vector<glm::u16vec4> joints;
  std::vector<glm::vec4> weights;
  std::vector<uint32_t> indices;  // triangles; non-indexed primitives get 0..n-1
  std::vector<SubMesh> submeshes;
};

}  // namespace posecast
