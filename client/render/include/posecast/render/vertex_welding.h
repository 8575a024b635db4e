#pragma once
// Vertex welding for the GPU upload: vertices of a SkinnedMesh whose attributes are all equal
// (bit for bit) become one vertex, and the index buffer is remapped. The triangles and every
// vertex value stay the same, so the image does not change; what changes is how many vertices
// the vertex shader runs on. GPUs (and Mesa's llvmpipe, which splits a draw into batches and
// shades each distinct index of a batch once) cache shaded vertices by index, and many files
// store one vertex per triangle corner: Fox.glb has 1728 vertices, 434 of them distinct.
//
// No GL here: GpuModel::upload calls it, and it is unit-tested without a context.

#include <glm/gtc/type_precision.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/skinned_mesh.h"

namespace posecast::render {

struct WeldedVertices {
  // Per welded vertex, in order of first use by a source vertex.
  std::vector<glm::vec3> positions;
  std::vector<glm::vec3> normals;
  std::vector<glm::vec2> uvs;
  std::vector<glm::u16vec4> joints;
  std::vector<glm::vec4> weights;
  std::vector<uint32_t> indices;           // the mesh's indices, remapped to welded vertices
  std::vector<uint32_t> welded_of_source;  // per source vertex: its welded vertex
};

// Welds `mesh`, with `joints` in place of mesh.joints (the uploader's sanitised copy: the same
// length). Attributes compare bytewise: -0.0 and 0.0, or two NaNs with different bits, stay
// apart. Preconditions (GpuModel's check_mesh): the attribute arrays have one entry per vertex
// and every index is below the vertex count.
WeldedVertices weld_vertices(const SkinnedMesh& mesh, std::span<const glm::u16vec4> joints);

}  // namespace posecast::render
