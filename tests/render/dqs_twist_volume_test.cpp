// Candy wrapper: a joint of the generated rig (gen-rig:24, its mesh as the importer loads it)
// twisted about its bone axis by 90 and 170 degrees. The volume of the two capsules that meet
// at the joint, skinned on the CPU reference with linear blend (LBS) and with dual quaternions
// (DQS), against their rest volume: LBS collapses the blend zone, DQS keeps the volume within
// 5 %. Prints the figures.

#include <gtest/gtest.h>

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "posecast/render/cpu_skinning.h"
#include "posecast/render/dual_quaternion.h"
#include "posecast/rig/model_source.h"
#include "twist_pose.h"

namespace posecast::render {
namespace {

using testing::joint_of_node;
using testing::node_named;
using testing::twisted_palette;

// Connected components of the triangle mesh (vertices joined by sharing a triangle): the
// generated rig's capsules. Returns a component id per vertex.
std::vector<uint32_t> triangle_components(const SkinnedMesh& mesh) {
  std::vector<uint32_t> parent(mesh.positions.size());
  std::iota(parent.begin(), parent.end(), 0u);
  const auto find = [&parent](uint32_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (std::size_t t = 0; t + 2 < mesh.indices.size(); t += 3) {
    const uint32_t a = find(mesh.indices[t]);
    parent[find(mesh.indices[t + 1])] = a;
    parent[find(mesh.indices[t + 2])] = a;
  }
  std::vector<uint32_t> component(parent.size());
  for (uint32_t v = 0; v < parent.size(); ++v) component[v] = find(v);
  return component;
}

bool influenced_by(const SkinnedMesh& mesh, std::size_t v, int joint) {
  for (int k = 0; k < 4; ++k)
    if (mesh.weights[v][k] > 0.0f && mesh.joints[v][k] == joint) return true;
  return false;
}

// Signed volume enclosed by the triangles whose first vertex is in `components`
// (divergence theorem: sum of a . (b x c) / 6; the capsules are closed, outward-wound).
double enclosed_volume(const SkinnedMesh& mesh, const std::vector<SkinnedVertex>& skinned,
                       const std::vector<uint32_t>& component, const std::set<uint32_t>& keep) {
  double volume = 0.0;
  for (std::size_t t = 0; t + 2 < mesh.indices.size(); t += 3) {
    if (!keep.count(component[mesh.indices[t]])) continue;
    const glm::dvec3 a(skinned[mesh.indices[t]].position);
    const glm::dvec3 b(skinned[mesh.indices[t + 1]].position);
    const glm::dvec3 c(skinned[mesh.indices[t + 2]].position);
    volume += glm::dot(a, glm::cross(b, c)) / 6.0;
  }
  return volume;
}

// One latitude ring of a capsule: kRingVertices consecutive vertices, the last a copy of the
// first (the UV seam), as build_rig_mesh lays them out.
constexpr uint32_t kRingVertices = 9;  // kBodyPart: 8 around + the seam copy

// The rings of the capsule whose triangles form component `id`: its lowest vertex is the
// capsule's first, and its last ring's seam copy (in no triangle) is one past its highest.
std::vector<uint32_t> capsule_rings(const SkinnedMesh& mesh, const std::vector<uint32_t>& component,
                                    uint32_t id) {
  uint32_t first = UINT32_MAX;
  uint32_t last = 0;
  for (uint32_t v : mesh.indices) {
    if (component[v] != id) continue;
    first = std::min(first, v);
    last = std::max(last, v);
  }
  std::vector<uint32_t> rings;
  for (uint32_t start = first; start + kRingVertices <= last + 2; start += kRingVertices) {
    rings.push_back(start);
  }
  return rings;
}

glm::dvec3 ring_centroid(const std::vector<SkinnedVertex>& skinned, uint32_t start) {
  glm::dvec3 sum(0.0);
  for (uint32_t k = 0; k + 1 < kRingVertices; ++k) sum += glm::dvec3(skinned[start + k].position);
  return sum / static_cast<double>(kRingVertices - 1);
}

// The area of a ring's polygon: |sum of p_k x p_k+1| / 2 (its vector area, for a planar ring the
// area; a ring moved rigidly keeps it).
double ring_area(const std::vector<SkinnedVertex>& skinned, uint32_t start) {
  glm::dvec3 twice(0.0);
  for (uint32_t k = 0; k + 1 < kRingVertices; ++k) {
    const uint32_t next = start + (k + 1) % (kRingVertices - 1);
    twice += glm::cross(glm::dvec3(skinned[start + k].position),
                        glm::dvec3(skinned[next].position));
  }
  return 0.5 * glm::length(twice);
}

struct Measures {
  double mesh_volume = 0.0;   // enclosed by the triangles
  double slice_volume = 0.0;  // frustums between consecutive rings: the rings' areas and spacing
  std::vector<double> ring_areas;
};

Measures measure(const SkinnedMesh& mesh, const std::vector<SkinnedVertex>& skinned,
                 const std::vector<uint32_t>& component, const std::set<uint32_t>& capsules) {
  Measures out;
  out.mesh_volume = enclosed_volume(mesh, skinned, component, capsules);
  for (uint32_t id : capsules) {
    const std::vector<uint32_t> rings = capsule_rings(mesh, component, id);
    for (std::size_t i = 0; i < rings.size(); ++i) {
      out.ring_areas.push_back(ring_area(skinned, rings[i]));
      if (i == 0) continue;
      const double a = ring_area(skinned, rings[i - 1]);
      const double b = out.ring_areas.back();
      const double h =
          glm::length(ring_centroid(skinned, rings[i]) - ring_centroid(skinned, rings[i - 1]));
      out.slice_volume += h * (a + b + std::sqrt(a * b)) / 3.0;
    }
  }
  return out;
}

// The smallest ratio of a ring's area to its rest area (rings of non-zero rest area).
double smallest_area_ratio(const Measures& m, const Measures& rest) {
  double smallest = 1e30;
  for (std::size_t i = 0; i < rest.ring_areas.size(); ++i) {
    if (rest.ring_areas[i] > 1e-9) smallest = std::min(smallest, m.ring_areas[i] / rest.ring_areas[i]);
  }
  return smallest;
}

class TwistVolume : public ::testing::TestWithParam<const char*> {};

TEST_P(TwistVolume, DualQuaternionsKeepTheJointsVolumeWhereLinearBlendCollapses) {
  const std::string joint_name = GetParam();
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model.value().rigs.at(0);
  const Skeleton& skeleton = rig.skeleton;
  const SkinnedMesh& mesh = rig.meshes.at(0);
  const int node = node_named(skeleton, joint_name);
  ASSERT_GE(node, 0) << joint_name;
  const int parent_node = skeleton.parents[static_cast<std::size_t>(node)];
  const int child_node = testing::first_child(skeleton, node);
  ASSERT_GE(parent_node, 0);
  ASSERT_GE(child_node, 0);
  const int joint = joint_of_node(skeleton, node);
  const int parent_joint = joint_of_node(skeleton, parent_node);

  // The capsules skinned to both the joint and its parent: the two that meet at the joint.
  const std::vector<uint32_t> component = triangle_components(mesh);
  std::set<uint32_t> near_joint;
  // Vertices of triangles only: a pole's seam copy is in no triangle (a component of its own).
  for (uint32_t v : mesh.indices) {
    if (influenced_by(mesh, v, joint) && influenced_by(mesh, v, parent_joint)) {
      near_joint.insert(component[v]);
    }
  }
  ASSERT_EQ(near_joint.size(), 2u) << joint_name;

  std::vector<SkinnedVertex> skinned(mesh.positions.size());
  const std::vector<glm::mat4> rest_palette = twisted_palette(skeleton, node, child_node, 0.0f);
  ASSERT_TRUE(skin_vertices_cpu(mesh, rest_palette, skinned));
  const Measures rest = measure(mesh, skinned, component, near_joint);
  // The ring layout is as assumed: every ring is a circle (or a pole) whose seam copy
  // coincides with its first vertex.
  for (uint32_t id : near_joint) {
    const std::vector<uint32_t> rings = capsule_rings(mesh, component, id);
    ASSERT_EQ(rings.size(), 8u);
    for (uint32_t start : rings) {
      const glm::dvec3 c = ring_centroid(skinned, start);
      const double radius = glm::length(glm::dvec3(skinned[start].position) - c);
      for (uint32_t k = 0; k < kRingVertices; ++k) {
        ASSERT_NEAR(glm::length(glm::dvec3(skinned[start + k].position) - c), radius, 1e-5);
      }
      ASSERT_EQ(skinned[start].position, skinned[start + kRingVertices - 1].position);
    }
  }
  ASSERT_GT(rest.mesh_volume, 0.0);
  ASSERT_GT(rest.slice_volume, 0.0);
  std::printf("[ info ] gen-rig:24 %s twisted about its bone; the two capsules meeting there "
              "(%zu rings): rest mesh volume %.4g m^3, slice volume %.4g m^3\n",
              joint_name.c_str(), rest.ring_areas.size(), rest.mesh_volume, rest.slice_volume);

  for (float degrees : {90.0f, 170.0f}) {
    const std::vector<glm::mat4> palette = twisted_palette(skeleton, node, child_node, degrees);
    ASSERT_TRUE(skin_vertices_cpu(mesh, palette, skinned));
    const Measures lbs = measure(mesh, skinned, component, near_joint);
    std::vector<DualQuaternion> dual(palette.size());
    ASSERT_TRUE(palette_to_dual_quaternions(palette, dual));
    ASSERT_TRUE(skin_vertices_cpu_dq(mesh, dual, skinned));
    const Measures dqs = measure(mesh, skinned, component, near_joint);
    const double lbs_area = smallest_area_ratio(lbs, rest);
    const double dqs_area = smallest_area_ratio(dqs, rest);
    std::printf("[ info ]   %5.1f deg, kept of rest: slice volume LBS %6.2f %%  DQS %6.2f %% | "
                "smallest cross-section LBS %6.2f %%  DQS %6.2f %% | mesh volume LBS %6.2f %%  "
                "DQS %6.2f %%\n",
                static_cast<double>(degrees), 100.0 * lbs.slice_volume / rest.slice_volume,
                100.0 * dqs.slice_volume / rest.slice_volume, 100.0 * lbs_area, 100.0 * dqs_area,
                100.0 * lbs.mesh_volume / rest.mesh_volume, 100.0 * dqs.mesh_volume / rest.mesh_volume);
    const std::string where = joint_name + " " + std::to_string(degrees) + " deg";
    EXPECT_NEAR(dqs.slice_volume / rest.slice_volume, 1.0, 0.05) << where;
    EXPECT_NEAR(dqs_area, 1.0, 0.05) << where;
    // The test sees the candy wrapper: LBS pinches the joint's cross-section and loses volume.
    EXPECT_LT(lbs_area, 0.95) << where;
    EXPECT_LT(lbs.slice_volume, dqs.slice_volume) << where;
    EXPECT_LT(lbs.mesh_volume, dqs.mesh_volume) << where;
  }
}

INSTANTIATE_TEST_SUITE_P(GenRig24, TwistVolume,
                         ::testing::Values("forearm_l", "shin_l", "chest"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param);
                         });

}  // namespace
}  // namespace posecast::render
