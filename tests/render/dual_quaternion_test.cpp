// Palette matrix -> unit dual quaternion (dual_quaternion.h), the CPU dual-quaternion skinning
// reference (skin_vertices_cpu_dq) and the per-rig scale check (rigid_rig.h). No GL.

#include <gtest/gtest.h>

#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>

#include <random>
#include <vector>

#include "posecast/render/cpu_skinning.h"
#include "posecast/render/dual_quaternion.h"
#include "posecast/render/rigid_rig.h"
#include "posecast/rig/model_source.h"
#include "one_vertex_mesh.h"

namespace posecast::render {
namespace {

// Rotation by `degrees` about unit `axis` then translation `t`, built from a quaternion so the
// matrix is orthonormal to float precision.
glm::mat4 rigid(float degrees, glm::vec3 axis, glm::vec3 t) {
  glm::mat4 m = glm::mat4_cast(glm::angleAxis(glm::radians(degrees), glm::normalize(axis)));
  m[3] = glm::vec4(t, 1.0f);
  return m;
}

TEST(DualQuaternion, OneInfluenceEqualsTheMatrixForRandomRigidTransforms) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < 1000; ++i) {
    const glm::vec3 axis(u(rng), u(rng), u(rng) + 1.5f);
    const glm::mat4 m = rigid(180.0f * u(rng), axis, {3 * u(rng), 3 * u(rng), 3 * u(rng)});
    DualQuaternion dq;
    ASSERT_TRUE(to_dual_quaternion(m, dq));
    EXPECT_NEAR(glm::length(dq.real), 1.0f, 1e-6f);
    EXPECT_GE(dq.real.w, 0.0f);
    const glm::vec3 p(u(rng), u(rng), u(rng));
    const glm::vec3 n = glm::normalize(glm::vec3(u(rng), u(rng), u(rng) + 2.0f));
    const SkinnedMesh mesh = one_vertex_mesh(p, n, {0, 0, 0, 0}, {1, 0, 0, 0});
    std::vector<SkinnedVertex> out(1);
    ASSERT_TRUE(skin_vertices_cpu_dq(mesh, std::span(&dq, 1), out));
    const glm::vec3 expected = glm::vec3(m * glm::vec4(p, 1.0f));
    EXPECT_LE(glm::length(out[0].position - expected), 2e-6f) << "case " << i;
    EXPECT_LE(glm::length(out[0].normal - glm::mat3(m) * n), 2e-6f) << "case " << i;
  }
}

TEST(DualQuaternion, RefusesScaleShearMirrorAndNonAffineMatrices) {
  DualQuaternion dq;
  const glm::mat4 base = rigid(30.0f, {0, 1, 0}, {1, 2, 3});
  EXPECT_TRUE(is_rigid(base));
  EXPECT_FALSE(to_dual_quaternion(glm::scale(base, glm::vec3(1.01f)), dq));      // uniform
  EXPECT_FALSE(to_dual_quaternion(glm::scale(base, glm::vec3(1, 2, 1)), dq));    // non-uniform
  EXPECT_FALSE(to_dual_quaternion(glm::scale(base, glm::vec3(-1, 1, 1)), dq));   // mirror
  glm::mat4 shear = base;
  shear[1] += 0.1f * shear[0];
  EXPECT_FALSE(to_dual_quaternion(shear, dq));
  glm::mat4 projective = base;
  projective[0][3] = 0.5f;
  EXPECT_FALSE(to_dual_quaternion(projective, dq));
  glm::mat4 nan = base;
  nan[3][0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(to_dual_quaternion(nan, dq));
  // Float noise on a rotation is not scale.
  EXPECT_TRUE(to_dual_quaternion(glm::scale(base, glm::vec3(1.0f + 1e-6f)), dq));
}

TEST(DualQuaternion, AntipodalInfluencesBlendTheShortWay) {
  // 179 and 181 degrees about Z: with w >= 0 the two quaternions point almost opposite ways.
  // Blended half and half without the sign flip their real parts would cancel; with it the
  // result is the 180 degree rotation: (1, 0, 0) -> (-1, 0, 0).
  DualQuaternion dq[2];
  ASSERT_TRUE(to_dual_quaternion(rigid(179.0f, {0, 0, 1}, {0, 0, 0}), dq[0]));
  ASSERT_TRUE(to_dual_quaternion(rigid(181.0f, {0, 0, 1}, {0, 0, 0}), dq[1]));
  ASSERT_LT(glm::dot(dq[0].real, dq[1].real), -0.99f);
  const SkinnedMesh mesh = one_vertex_mesh({1, 0, 0}, {0, 1, 0}, {0, 1, 0, 0}, {0.5f, 0.5f, 0, 0});
  std::vector<SkinnedVertex> out(1);
  ASSERT_TRUE(skin_vertices_cpu_dq(mesh, dq, out));
  EXPECT_LE(glm::length(out[0].position - glm::vec3(-1, 0, 0)), 1e-6f);
  EXPECT_LE(glm::length(out[0].normal - glm::vec3(0, -1, 0)), 1e-6f);
}

TEST(DualQuaternion, TheLargestWeightIsThePivotWhateverItsSlot) {
  // The pivot decides the signs; a heavier influence in slot 1 must win over slot 0.
  DualQuaternion dq[3];
  ASSERT_TRUE(to_dual_quaternion(rigid(0.0f, {0, 0, 1}, {0, 0, 0}), dq[0]));
  ASSERT_TRUE(to_dual_quaternion(rigid(179.0f, {0, 0, 1}, {0, 0, 0}), dq[1]));
  ASSERT_TRUE(to_dual_quaternion(rigid(181.0f, {0, 0, 1}, {0, 0, 0}), dq[2]));
  const SkinnedMesh a =
      one_vertex_mesh({1, 0, 0}, {0, 1, 0}, {0, 1, 2, 0}, {0.125f, 0.4375f, 0.4375f, 0});
  const SkinnedMesh b =
      one_vertex_mesh({1, 0, 0}, {0, 1, 0}, {1, 2, 0, 0}, {0.4375f, 0.4375f, 0.125f, 0});
  std::vector<SkinnedVertex> out_a(1), out_b(1);
  ASSERT_TRUE(skin_vertices_cpu_dq(a, dq, out_a));
  ASSERT_TRUE(skin_vertices_cpu_dq(b, dq, out_b));
  EXPECT_LE(glm::length(out_a[0].position - out_b[0].position), 1e-6f);
  EXPECT_NEAR(glm::length(out_a[0].position), 1.0f, 1e-6f);  // a rotation keeps the radius
}

TEST(DualQuaternion, PaletteConversionFailsOnSizeOrAnyScaledJoint) {
  std::vector<glm::mat4> palette(3, rigid(45.0f, {1, 0, 0}, {0, 1, 0}));
  std::vector<DualQuaternion> out(3);
  EXPECT_TRUE(palette_to_dual_quaternions(palette, out));
  EXPECT_FALSE(palette_to_dual_quaternions(palette, std::span(out).first(2)));
  palette[2] = glm::scale(palette[2], glm::vec3(2.0f));
  EXPECT_FALSE(palette_to_dual_quaternions(palette, out));
}

TEST(RigidRig, GeneratedRigHasNoScaleAndAScaledJointIsNamed) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(rig_scale_problem(model.value().rigs[0]), "");

  Rig scaled_rest = model.value().rigs[0];
  const uint16_t node = scaled_rest.skeleton.joint_nodes[3];
  scaled_rest.skeleton.rest[node].scale = glm::vec3(1.0f, 1.5f, 1.0f);
  const std::string rest_problem = rig_scale_problem(scaled_rest);
  EXPECT_NE(rest_problem.find(scaled_rest.skeleton.names[node]), std::string::npos) << rest_problem;

  // A clip that animates a scale away from the rest scale.
  Rig scaled_clip = model.value().rigs[0];
  Clip& clip = scaled_clip.clips.at(0);
  Track track;
  track.node = node;
  track.target = TrackTarget::kScale;
  track.interpolation = Interpolation::kLinear;
  track.key_count = 1;
  track.times_offset = 0;
  track.values_offset = static_cast<uint32_t>(clip.values.size());
  clip.values.insert(clip.values.end(), {1.0f, 1.0f, 1.2f});
  clip.tracks.push_back(track);
  const std::string key_problem = rig_scale_problem(scaled_clip);
  EXPECT_NE(key_problem.find("scale key 0 of clip '" + clip.name + "'"), std::string::npos)
      << key_problem;
}

}  // namespace
}  // namespace posecast::render
