#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "posecast/hit_geometry.h"
#include "posecast/pose_evaluation.h"
#include "posecast/rig/model_source.h"

namespace posecast {
namespace {

HitRay ray(glm::vec3 origin, glm::vec3 direction, float length) {
  HitRay r{origin, direction, length};
  EXPECT_EQ(check_ray(r, 1000.0f), RayCheck::kOk);
  return r;
}

TEST(RaySphere, EntersAtTheNearSurfaceAndMissesWhatIsBehindOrOutOfReach) {
  float t = -1.0f;
  ASSERT_TRUE(ray_sphere(ray({0, 0, -5}, {0, 0, 1}, 10), {0, 0, 0}, 1.0f, t));
  EXPECT_FLOAT_EQ(t, 4.0f);
  EXPECT_FALSE(ray_sphere(ray({0, 0, -5}, {0, 0, -1}, 10), {0, 0, 0}, 1.0f, t));  // behind
  EXPECT_FALSE(ray_sphere(ray({0, 0, -5}, {0, 0, 1}, 3.9f), {0, 0, 0}, 1.0f, t));  // short
  EXPECT_FALSE(ray_sphere(ray({0, 2, -5}, {0, 0, 1}, 10), {0, 0, 0}, 1.0f, t));    // passes by
  ASSERT_TRUE(ray_sphere(ray({0, 0.5f, 0}, {1, 0, 0}, 10), {0, 0, 0}, 1.0f, t));   // inside
  EXPECT_EQ(t, 0.0f);
}

TEST(RayCapsule, HitsTheSideAndTheCapsAtTheirSurfaces) {
  const glm::vec3 a{0, 0, 0}, b{0, 2, 0};
  float t = -1.0f;
  ASSERT_TRUE(ray_capsule(ray({-3, 1, 0}, {1, 0, 0}, 10), a, b, 0.5f, t));
  EXPECT_FLOAT_EQ(t, 2.5f);
  ASSERT_TRUE(ray_capsule(ray({0, 5, 0}, {0, -1, 0}, 10), a, b, 0.5f, t));  // top cap
  EXPECT_FLOAT_EQ(t, 2.5f);
  ASSERT_TRUE(ray_capsule(ray({0, -4, 0}, {0, 1, 0}, 10), a, b, 0.5f, t));  // bottom cap
  EXPECT_FLOAT_EQ(t, 3.5f);
  // Beside a cap, at a slant: the sphere there, not the cylinder's extension.
  ASSERT_TRUE(ray_capsule(ray({-3, 2.3f, 0}, {1, 0, 0}, 10), a, b, 0.5f, t));
  EXPECT_NEAR(t, 3.0f - std::sqrt(0.25f - 0.09f), 1e-5f);
  EXPECT_FALSE(ray_capsule(ray({-3, 2.6f, 0}, {1, 0, 0}, 10), a, b, 0.5f, t));  // over the top
  EXPECT_FALSE(ray_capsule(ray({0.6f, -4, 0}, {0, 1, 0}, 10), a, b, 0.5f, t));   // parallel, outside
  EXPECT_FALSE(ray_capsule(ray({-3, 1, 0}, {1, 0, 0}, 2.4f), a, b, 0.5f, t));    // ends short
  ASSERT_TRUE(ray_capsule(ray({0.2f, 1, 0}, {1, 0, 0}, 1), a, b, 0.5f, t));      // starts inside
  EXPECT_EQ(t, 0.0f);
  ASSERT_TRUE(ray_capsule(ray({-3, 0, 0}, {1, 0, 0}, 10), a, a, 0.5f, t));  // degenerate: a sphere
  EXPECT_FLOAT_EQ(t, 2.5f);
}

TEST(CheckRay, RefusesNanZeroAndAbsurdRaysAndNormalises) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HitRay r{{0, nan, 0}, {1, 0, 0}, 1};
  EXPECT_EQ(check_ray(r, 100), RayCheck::kNotFinite);
  r = HitRay{{0, 0, 0}, {1, 0, 0}, std::numeric_limits<float>::infinity()};
  EXPECT_EQ(check_ray(r, 100), RayCheck::kNotFinite);
  r = HitRay{{0, 0, 0}, {1, 0, 0}, 0};
  EXPECT_EQ(check_ray(r, 100), RayCheck::kZeroLength);
  r = HitRay{{0, 0, 0}, {1, 0, 0}, 101};
  EXPECT_EQ(check_ray(r, 100), RayCheck::kTooLong);
  r = HitRay{{0, 0, 0}, {0, 0, 0}, 1};
  EXPECT_EQ(check_ray(r, 100), RayCheck::kZeroDirection);
  r = HitRay{{0, 0, 0}, {0, 3, 4}, 1};
  ASSERT_EQ(check_ray(r, 100), RayCheck::kOk);
  EXPECT_FLOAT_EQ(r.direction.y, 0.6f);
  EXPECT_FLOAT_EQ(r.direction.z, 0.8f);
}

// Two joints: a bone from the origin up to (0, 1, 0), and a leaf above it; three vertices.
Rig two_bone_rig() {
  Rig rig;
  Skeleton& s = rig.skeleton;
  s.parents = {kNoParent, 0};
  s.rest.resize(2);
  s.rest[1].translation = glm::vec3(0, 1, 0);
  s.names = {"hips", "head"};
  s.source_nodes = {0, 1};
  s.joint_nodes = {0, 1};
  s.inverse_bind = {glm::mat4(1.0f), glm::mat4(1.0f)};
  s.inverse_bind[1][3] = glm::vec4(0, -1, 0, 1);
  SkinnedMesh mesh;
  mesh.positions = {{0.3f, 0.5f, 0}, {0, 1.2f, 0.2f}, {0, 1.6f, 0}};
  mesh.joints = {{0, 1, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}};
  mesh.weights = {{0.9f, 0.1f, 0, 0}, {0.8f, 0.2f, 0, 0}, {0.4f, 0.6f, 0, 0}};
  rig.meshes.push_back(mesh);
  return rig;
}

TEST(BuildHitRig, BonesRunToChildJointsAndRadiiReachTheDominantVertices) {
  const Rig rig = two_bone_rig();
  Result<HitRig> built = build_hit_rig(rig);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const HitRig& hit = built.value();
  ASSERT_EQ(hit.capsules.size(), 2u);
  EXPECT_EQ(hit.capsules[0].joint, 0);
  EXPECT_EQ(hit.capsules[0].tip, glm::vec3(0, 1, 0));
  EXPECT_FLOAT_EQ(hit.capsules[0].radius, 0.3f);
  // The leaf: to the centre of its vertices (bind-local (0, .2, .2) and (0, .6, 0)); the radius
  // is the second vertex's distance past the tip, |(0, .2, -.1)|.
  EXPECT_EQ(hit.capsules[1].joint, 1);
  EXPECT_NEAR(hit.capsules[1].tip.y, 0.4f, 1e-6f);
  EXPECT_NEAR(hit.capsules[1].tip.z, 0.1f, 1e-6f);
  EXPECT_NEAR(hit.capsules[1].radius, std::sqrt(0.05f), 1e-6f);
  // No clips: the bound covers the rest pose (the head capsule's far point) with 25 % margin.
  EXPECT_NEAR(hit.bound_radius, 1.25f * (std::sqrt(1.4f * 1.4f + 0.01f) + std::sqrt(0.05f)), 1e-5f);
}

TEST(BuildHitRig, ConfiguredRadiiWinAndBadOptionsAreRefused) {
  const Rig rig = two_bone_rig();
  HitRigOptions options;
  options.radius_by_name = {{"head", 0.15f}};
  Result<HitRig> built = build_hit_rig(rig, options);
  ASSERT_TRUE(built.ok());
  EXPECT_FLOAT_EQ(built.value().capsules[1].radius, 0.15f);
  EXPECT_FLOAT_EQ(built.value().capsules[0].radius, 0.3f);
  options.radius_by_name = {{"head", std::numeric_limits<float>::quiet_NaN()}};
  EXPECT_FALSE(build_hit_rig(rig, options).ok());
  EXPECT_FALSE(build_hit_rig(Rig{}).ok());
}

TEST(BuildHitRig, WithoutVerticesTheRadiusIsAFractionOfTheBone) {
  Rig rig = two_bone_rig();
  rig.meshes.clear();
  Result<HitRig> built = build_hit_rig(rig);
  ASSERT_TRUE(built.ok());
  EXPECT_FLOAT_EQ(built.value().capsules[0].radius, 0.2f);
  EXPECT_FLOAT_EQ(built.value().capsules[1].radius, HitRigOptions{}.min_radius);
}

TEST(EntityMatrix, YawTurnsPlusZTowardsPlusXAndTranslates) {
  const float half_pi = 1.5707964f;
  const glm::mat4 m = entity_matrix(10, 0, -2, half_pi);
  const glm::vec4 p = m * glm::vec4(0, 0, 1, 1);
  EXPECT_NEAR(p.x, 11.0f, 1e-6f);
  EXPECT_NEAR(p.z, -2.0f, 1e-6f);
}

// The generated rig: every joint gets a capsule; a ray at any posed capsule's middle hits it
// (or a capsule in front of it) and one past the bound misses all.
TEST(BuildHitRig, GeneratedRigCapsulesAreHitWhereTheyArePosed) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model.value().rigs[0];
  Result<HitRig> built = build_hit_rig(rig);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const HitRig& hit = built.value();
  std::vector<bool> covered(rig.skeleton.joint_count(), false);
  for (const JointCapsule& c : hit.capsules) {
    covered[c.joint] = true;
    EXPECT_GT(c.radius, 0.0f);
  }
  for (std::size_t j = 0; j < covered.size(); ++j) EXPECT_TRUE(covered[j]) << "joint " << j;
  PoseBuffers buffers;
  SamplingCursor cursor;
  ASSERT_TRUE(evaluate_pose(rig, model.value().find_clip("walk"), 250'000, cursor, buffers));
  const glm::mat4 entity = entity_matrix(3, 0, 4, 0.5f);
  std::vector<PosedCapsule> posed(hit.capsules.size());
  ASSERT_TRUE(pose_capsules(hit, buffers.models, entity, posed));
  for (std::size_t i = 0; i < posed.size(); ++i) {
    const glm::vec3 mid = (posed[i].a + posed[i].b) * 0.5f;
    const glm::vec3 from = mid + glm::vec3(0, 0, -50);
    std::size_t index = 0;
    float t = 0.0f;
    ASSERT_TRUE(ray_capsules(ray(from, {0, 0, 1}, 100), posed, index, t)) << "capsule " << i;
    EXPECT_LE(t, 50.0f);
    EXPECT_LE(glm::length(posed[i].a - glm::vec3(3, 0, 4)) + posed[i].radius, hit.bound_radius);
  }
  std::size_t index = 0;
  float t = 0.0f;
  const glm::vec3 beside(3 + hit.bound_radius + 0.01f, 0, -50);
  EXPECT_FALSE(ray_capsules(ray(beside, {0, 0, 1}, 100), posed, index, t));
}

}  // namespace
}  // namespace posecast
