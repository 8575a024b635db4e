// Vertex welding (vertex_welding.h): identical vertices merge, the remapped triangles keep
// every corner's values, and bytewise-different values (including -0.0 vs 0.0) stay apart.

#include <gtest/gtest.h>

#include <cmath>

#include "posecast/render/vertex_welding.h"

namespace posecast::render {
namespace {

// Corner v of a mesh: its five attributes.
struct Corner {
  glm::vec3 position, normal;
  glm::vec2 uv;
  glm::u16vec4 joints;
  glm::vec4 weights;
};

SkinnedMesh mesh_of(const std::vector<Corner>& corners) {
  SkinnedMesh mesh;
  for (const Corner& c : corners) {
    mesh.positions.push_back(c.position);
    mesh.normals.push_back(c.normal);
    mesh.uvs.push_back(c.uv);
    mesh.joints.push_back(c.joints);
    mesh.weights.push_back(c.weights);
  }
  for (uint32_t v = 0; v < corners.size(); ++v) mesh.indices.push_back(v);  // non-indexed
  return mesh;
}

TEST(VertexWelding, TrianglesKeepEveryCornerWhileIdenticalVerticesMerge) {
  const Corner a{{0, 0, 0}, {0, 0, 1}, {0, 0}, {0, 1, 0, 0}, {0.5f, 0.5f, 0, 0}};
  const Corner b{{1, 0, 0}, {0, 0, 1}, {1, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}};
  const Corner c{{0, 1, 0}, {0, 0, 1}, {0, 1}, {1, 0, 0, 0}, {1, 0, 0, 0}};
  const Corner d{{1, 1, 0}, {0, 0, 1}, {1, 1}, {1, 0, 0, 0}, {1, 0, 0, 0}};
  Corner c_other_uv = c;
  c_other_uv.uv.x = 0.5f;  // same position, another uv: a seam, kept apart
  Corner a_negative_zero = a;
  a_negative_zero.position.x = -0.0f;  // equal as a number, not as bits: kept apart
  // Two triangles sharing an edge (b, c), stored one vertex per corner, then one more.
  const SkinnedMesh mesh = mesh_of({a, b, c, b, d, c, c_other_uv, a_negative_zero, d});
  const std::vector<glm::u16vec4> joints = mesh.joints;
  const WeldedVertices w = weld_vertices(mesh, joints);

  EXPECT_EQ(w.positions.size(), 6u);  // a b c d c' a-0
  ASSERT_EQ(w.welded_of_source.size(), 9u);
  EXPECT_EQ(w.welded_of_source, (std::vector<uint32_t>{0, 1, 2, 1, 3, 2, 4, 5, 3}));
  ASSERT_EQ(w.indices.size(), mesh.indices.size());
  for (std::size_t k = 0; k < mesh.indices.size(); ++k) {
    const uint32_t source = mesh.indices[k];
    const uint32_t welded = w.indices[k];
    EXPECT_EQ(welded, w.welded_of_source[source]);
    EXPECT_EQ(w.positions[welded], mesh.positions[source]);
    EXPECT_EQ(std::signbit(w.positions[welded].x), std::signbit(mesh.positions[source].x));
    EXPECT_EQ(w.normals[welded], mesh.normals[source]);
    EXPECT_EQ(w.uvs[welded], mesh.uvs[source]);
    EXPECT_EQ(w.joints[welded], mesh.joints[source]);
    EXPECT_EQ(w.weights[welded], mesh.weights[source]);
  }
}

TEST(VertexWelding, UsesTheSanitisedJointsItIsGiven) {
  // Two vertices differing only in an unused influence's joint: once the uploader has mapped
  // that joint to 0, they are the same vertex.
  const Corner a{{0, 0, 0}, {0, 0, 1}, {0, 0}, {0, 7, 0, 0}, {1, 0, 0, 0}};
  Corner b = a;
  b.joints.y = 9;
  const SkinnedMesh mesh = mesh_of({a, b});
  EXPECT_EQ(weld_vertices(mesh, mesh.joints).positions.size(), 2u);
  const std::vector<glm::u16vec4> sanitised(2, glm::u16vec4(0, 0, 0, 0));
  const WeldedVertices w = weld_vertices(mesh, sanitised);
  EXPECT_EQ(w.positions.size(), 1u);
  EXPECT_EQ(w.joints[0], glm::u16vec4(0, 0, 0, 0));
}

TEST(VertexWelding, EmptyMeshGivesNothing) {
  const WeldedVertices w = weld_vertices(SkinnedMesh{}, {});
  EXPECT_TRUE(w.positions.empty());
  EXPECT_TRUE(w.indices.empty());
  EXPECT_TRUE(w.welded_of_source.empty());
}

}  // namespace
}  // namespace posecast::render
