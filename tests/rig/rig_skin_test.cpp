// The generated rig's skinned mesh: weights, joint indices, normals and winding, and inverse
// bind matrices that undo the rest pose (checked from the file alone, without the importer).

#include <gtest/gtest.h>

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "glb_test_reader.h"
#include "posecast/transform.h"

namespace posecast::rig {
namespace {

using test::rig_file;

struct MeshData {
  std::vector<float> positions, normals, uvs, weights;
  std::vector<uint32_t> joints, indices;
  std::size_t vertex_count = 0;
};

MeshData read_mesh(const test::GlbFile& file) {
  const auto& meshes = file.json.at("meshes");
  EXPECT_EQ(meshes.size(), 1u);
  const auto& primitives = meshes[0].at("primitives");
  EXPECT_EQ(primitives.size(), 1u);
  const auto& p = primitives[0];
  EXPECT_EQ(test::size_or(p, "mode", 4), 4u);
  const auto& a = p.at("attributes");
  MeshData m;
  m.positions = test::read_floats(file, a.at("POSITION").get<int>());
  m.normals = test::read_floats(file, a.at("NORMAL").get<int>());
  m.uvs = test::read_floats(file, a.at("TEXCOORD_0").get<int>());
  m.weights = test::read_floats(file, a.at("WEIGHTS_0").get<int>());
  m.joints = test::read_uints(file, a.at("JOINTS_0").get<int>());
  m.indices = test::read_uints(file, p.at("indices").get<int>());
  m.vertex_count = m.positions.size() / 3;
  return m;
}

TEST(RigSkin, EveryVertexHasAtMostFourWeightsSummingToOneOnJointsBelowN) {
  for (uint32_t n : {2u, 5u, 24u, 128u, 300u, 512u}) {
    SCOPED_TRACE(n);
    const MeshData m = read_mesh(rig_file(n));
    ASSERT_GT(m.vertex_count, 0u);
    ASSERT_EQ(m.weights.size(), 4 * m.vertex_count);
    ASSERT_EQ(m.joints.size(), 4 * m.vertex_count);
    ASSERT_EQ(m.normals.size(), 3 * m.vertex_count);
    ASSERT_EQ(m.uvs.size(), 2 * m.vertex_count);
    for (std::size_t v = 0; v < m.vertex_count; ++v) {
      float sum = 0.0f;
      for (std::size_t i = 0; i < 4; ++i) {
        const float w = m.weights[4 * v + i];
        EXPECT_GE(w, 0.0f);
        EXPECT_LT(m.joints[4 * v + i], n);
        sum += w;
      }
      ASSERT_EQ(sum, 1.0f) << "vertex " << v;  // weights are multiples of 1/256: exact
    }
  }
}

TEST(RigSkin, EveryJointInfluencesSomeVertices) {
  for (uint32_t n : {2u, 3u, 13u, 22u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    const MeshData m = read_mesh(rig_file(n));
    std::vector<bool> used(n, false);
    for (std::size_t i = 0; i < m.joints.size(); ++i)
      if (m.weights[i] > 0.0f) used.at(m.joints[i]) = true;
    for (uint32_t j = 0; j < n; ++j) EXPECT_TRUE(used[j]) << "joint " << j;
  }
}

TEST(RigSkin, WeightsBlendAcrossJointBoundaries) {
  const test::GlbFile& file = rig_file(24);
  const MeshData m = read_mesh(file);
  const auto joints = file.json.at("skins")[0].at("joints").get<std::vector<int>>();
  const auto joint_index = [&](const char* name) {
    const int node = test::find_node(file, name);
    for (std::size_t j = 0; j < joints.size(); ++j)
      if (joints[j] == node) return static_cast<uint32_t>(j);
    ADD_FAILURE() << name;
    return 0u;
  };
  const uint32_t thigh = joint_index("thigh_l"), shin = joint_index("shin_l");
  int blended = 0, knee = 0;
  for (std::size_t v = 0; v < m.vertex_count; ++v) {
    int influences = 0;
    bool has_thigh = false, has_shin = false;
    for (std::size_t i = 0; i < 4; ++i) {
      if (m.weights[4 * v + i] <= 0.0f) continue;
      ++influences;
      has_thigh |= m.joints[4 * v + i] == thigh;
      has_shin |= m.joints[4 * v + i] == shin;
    }
    blended += influences >= 2;
    knee += has_thigh && has_shin;
  }
  EXPECT_GT(blended, static_cast<int>(m.vertex_count / 4)) << "most joints blend into their neighbours";
  EXPECT_GT(knee, 0) << "the knee blends thigh and shin";
}

TEST(RigSkin, NormalsAreUnitAndTrianglesWindOutwards) {
  for (uint32_t n : {24u, 512u}) {
    SCOPED_TRACE(n);
    const MeshData m = read_mesh(rig_file(n));
    ASSERT_EQ(m.indices.size() % 3, 0u);
    for (std::size_t v = 0; v < m.vertex_count; ++v) {
      const glm::vec3 nrm(m.normals[3 * v], m.normals[3 * v + 1], m.normals[3 * v + 2]);
      ASSERT_NEAR(glm::length(nrm), 1.0f, 1e-5f) << "vertex " << v;
    }
    const auto at = [&](uint32_t i) { return glm::vec3(m.positions[3 * i], m.positions[3 * i + 1], m.positions[3 * i + 2]); };
    const auto normal = [&](uint32_t i) { return glm::vec3(m.normals[3 * i], m.normals[3 * i + 1], m.normals[3 * i + 2]); };
    std::size_t inward = 0;
    for (std::size_t t = 0; t < m.indices.size(); t += 3) {
      const uint32_t a = m.indices[t], b = m.indices[t + 1], c = m.indices[t + 2];
      ASSERT_LT(std::max({a, b, c}), m.vertex_count);
      const glm::vec3 face = glm::cross(at(b) - at(a), at(c) - at(a));
      ASSERT_GT(glm::length(face), 0.0f) << "degenerate triangle " << t / 3;
      if (glm::dot(face, normal(a) + normal(b) + normal(c)) <= 0.0f) ++inward;
    }
    EXPECT_EQ(inward, 0u) << "triangles must be counter-clockwise seen from outside";
  }
}

TEST(RigSkin, PositionBoundsMatchTheData) {
  const test::GlbFile& file = rig_file(24);
  const int position = file.json.at("meshes")[0].at("primitives")[0].at("attributes").at("POSITION").get<int>();
  const auto& accessor = file.json.at("accessors").at(static_cast<std::size_t>(position));
  const auto lo = accessor.at("min").get<std::vector<float>>(), hi = accessor.at("max").get<std::vector<float>>();
  const MeshData m = read_mesh(file);
  std::vector<float> data_lo(3, 1e30f), data_hi(3, -1e30f);
  for (std::size_t i = 0; i < m.positions.size(); ++i) {
    data_lo[i % 3] = std::min(data_lo[i % 3], m.positions[i]);
    data_hi[i % 3] = std::max(data_hi[i % 3], m.positions[i]);
  }
  EXPECT_EQ(lo, data_lo);
  EXPECT_EQ(hi, data_hi);
  EXPECT_NEAR(lo[1], 0.0f, 0.01f) << "the feet stand on y = 0";
  EXPECT_GT(hi[1], 1.7f) << "about human height";
}

// world(joint) * inverse_bind = identity in the rest pose, composing the file's node TRS.
TEST(RigSkin, InverseBindMatricesUndoTheRestPose) {
  for (uint32_t n : {2u, 17u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    const auto& nodes = file.json.at("nodes");
    const std::vector<int> parents = test::node_parents(file);
    std::vector<glm::mat4> world(nodes.size());
    std::vector<bool> done(nodes.size(), false);
    const std::function<glm::mat4(int)> world_of = [&](int i) -> glm::mat4 {
      const auto u = static_cast<std::size_t>(i);
      if (done[u]) return world[u];
      Transform t;
      if (nodes[u].contains("translation")) {
        const auto v = nodes[u].at("translation").get<std::vector<float>>();
        t.translation = glm::vec3(v.at(0), v.at(1), v.at(2));
      }
      if (nodes[u].contains("rotation")) {
        const auto q = nodes[u].at("rotation").get<std::vector<float>>();
        t.rotation = glm::quat(q.at(3), q.at(0), q.at(1), q.at(2));
      }
      if (nodes[u].contains("scale")) {
        const auto s = nodes[u].at("scale").get<std::vector<float>>();
        t.scale = glm::vec3(s.at(0), s.at(1), s.at(2));
      }
      const glm::mat4 local = to_matrix(t);
      world[u] = parents[u] < 0 ? local : affine_mul(world_of(parents[u]), local);
      done[u] = true;
      return world[u];
    };
    const auto& skin = file.json.at("skins")[0];
    const auto joints = skin.at("joints").get<std::vector<int>>();
    const std::vector<float> ibm = test::read_floats(file, skin.at("inverseBindMatrices").get<int>());
    ASSERT_EQ(ibm.size(), 16 * joints.size());
    for (std::size_t j = 0; j < joints.size(); ++j) {
      const glm::mat4 palette = affine_mul(world_of(joints[j]), glm::make_mat4(&ibm[16 * j]));
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
          ASSERT_NEAR(palette[c][r], c == r ? 1.0f : 0.0f, 1e-5f) << "joint " << j << " [" << c << "][" << r << "]";
    }
  }
}

}  // namespace
}  // namespace posecast::rig
