// BlendJob, OverrideBlendJob and AdditiveBlendJob (blending.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "posecast/blending.h"
#include "test_rig.h"

namespace posecast {
namespace {

using test::axis_angle;

bool same_bits(const Transform& a, const Transform& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<Transform> pose_of(std::initializer_list<Transform> nodes) { return nodes; }

Transform trs(glm::vec3 t, glm::quat r, glm::vec3 s) {
  Transform x;
  x.translation = t;
  x.rotation = r;
  x.scale = s;
  return x;
}

TEST(BlendJob, SingleContributingInputIsCopiedBitForBit) {
  const auto a = pose_of({trs({1, 2, 3}, axis_angle(0, 1, 0, 33), {1, 1, 2})});
  const auto b = pose_of({trs({9, 9, 9}, axis_angle(1, 0, 0, 70), {3, 3, 3})});
  const auto rest = pose_of({Transform{}});
  std::vector<Transform> out(1);
  const BlendInput inputs[] = {{a, 0.0f}, {b, 0.25f}};
  BlendJob job{inputs, rest, out};
  ASSERT_TRUE(job.Run());
  EXPECT_TRUE(same_bits(out[0], b[0]));
}

TEST(BlendJob, NoWeightGivesTheRestPose) {
  const auto a = pose_of({trs({1, 2, 3}, axis_angle(0, 1, 0, 33), {1, 1, 2})});
  const auto rest = pose_of({trs({0, 1, 0}, axis_angle(0, 0, 1, 5), {1, 1, 1})});
  std::vector<Transform> out(1);
  const BlendInput inputs[] = {{a, 0.0f}};
  ASSERT_TRUE((BlendJob{inputs, rest, out}.Run()));
  EXPECT_TRUE(same_bits(out[0], rest[0]));
}

TEST(BlendJob, WeightsAreNormalised) {
  const auto a = pose_of({trs({0, 0, 0}, axis_angle(0, 0, 1, 0), {1, 1, 1})});
  const auto b = pose_of({trs({2, 4, 8}, axis_angle(0, 0, 1, 90), {3, 3, 3})});
  const auto rest = pose_of({Transform{}});
  std::vector<Transform> out(1);
  const BlendInput inputs[] = {{a, 3.0f}, {b, 3.0f}};  // same as 0.5 / 0.5
  ASSERT_TRUE((BlendJob{inputs, rest, out}.Run()));
  EXPECT_FLOAT_EQ(out[0].translation.x, 1.0f);
  EXPECT_FLOAT_EQ(out[0].translation.y, 2.0f);
  EXPECT_FLOAT_EQ(out[0].translation.z, 4.0f);
  EXPECT_FLOAT_EQ(out[0].scale.x, 2.0f);
  const glm::quat half = axis_angle(0, 0, 1, 45);
  EXPECT_NEAR(out[0].rotation.w, half.w, 1e-6f);
  EXPECT_NEAR(out[0].rotation.z, half.z, 1e-6f);
}

TEST(BlendJob, OppositeSignQuaternionsBlendAlongTheShortestPath) {
  const glm::quat q = axis_angle(0, 1, 0, 40);
  const auto a = pose_of({trs({0, 0, 0}, q, {1, 1, 1})});
  const auto b = pose_of({trs({0, 0, 0}, glm::quat(-q.w, -q.x, -q.y, -q.z), {1, 1, 1})});
  const auto rest = pose_of({Transform{}});
  std::vector<Transform> out(1);
  const BlendInput inputs[] = {{a, 0.5f}, {b, 0.5f}};
  ASSERT_TRUE((BlendJob{inputs, rest, out}.Run()));
  // -q is q: the blend is q, not a degenerate zero quaternion.
  EXPECT_NEAR(out[0].rotation.w, q.w, 1e-6f);
  EXPECT_NEAR(out[0].rotation.y, q.y, 1e-6f);
}

TEST(BlendJob, ValidateRejectsEveryBadSetup) {
  const auto a = pose_of({Transform{}, Transform{}});
  const auto one = pose_of({Transform{}});
  std::vector<Transform> out(2);
  const BlendInput good[] = {{a, 1.0f}};
  EXPECT_TRUE((BlendJob{good, a, out}.Validate()));
  const BlendInput short_pose[] = {{one, 1.0f}};
  EXPECT_FALSE((BlendJob{short_pose, a, out}.Validate()));
  EXPECT_FALSE((BlendJob{good, one, out}.Validate()));  // rest too short
  const BlendInput negative[] = {{a, -1.0f}};
  EXPECT_FALSE((BlendJob{negative, a, out}.Validate()));
  const BlendInput nan[] = {{a, std::numeric_limits<float>::quiet_NaN()}};
  EXPECT_FALSE((BlendJob{nan, a, out}.Validate()));
  const BlendInput inf[] = {{a, std::numeric_limits<float>::infinity()}};
  EXPECT_FALSE((BlendJob{inf, a, out}.Run()));
}

TEST(OverrideBlendJob, MaskedOutNodesAreUntouchedAndFullWeightNodesCopied) {
  std::vector<Transform> pose = {trs({1, 0, 0}, axis_angle(0, 0, 1, 10), {1, 1, 1}),
                                 trs({0, 1, 0}, axis_angle(0, 1, 0, 20), {1, 2, 1}),
                                 trs({0, 0, 1}, axis_angle(1, 0, 0, 30), {2, 1, 1})};
  const std::vector<Transform> before = pose;
  const std::vector<Transform> layer = {trs({5, 5, 5}, axis_angle(0, 0, 1, 80), {3, 3, 3}),
                                        trs({6, 6, 6}, axis_angle(0, 1, 0, 80), {3, 3, 3}),
                                        trs({7, 7, 7}, axis_angle(1, 0, 0, 80), {3, 3, 3})};
  const std::vector<float> mask = {0.0f, 1.0f, 0.5f};
  OverrideBlendJob job{pose, layer, 1.0f, mask};
  ASSERT_TRUE(job.Run());
  EXPECT_TRUE(same_bits(pose[0], before[0]));
  EXPECT_TRUE(same_bits(pose[1], layer[1]));
  EXPECT_FLOAT_EQ(pose[2].translation.z, 4.0f);  // halfway between 1 and 7
  EXPECT_FALSE((OverrideBlendJob{pose, layer, 1.0f, std::vector<float>{1.0f}}.Validate()));
  EXPECT_FALSE((OverrideBlendJob{pose, layer, std::nanf(""), {}}.Validate()));
}

TEST(AdditiveBlendJob, AdditiveEqualToReferenceLeavesThePoseUnchanged) {
  std::vector<Transform> pose = {trs({1, 2, 3}, axis_angle(0, 0, 1, 10), {1, 1, 1}),
                                 trs({0.5f, 1, 0}, axis_angle(0.6f, 0.8f, 0, 33), {1, 2, 1})};
  const std::vector<Transform> before = pose;
  const std::vector<Transform> additive = {trs({3, 1, 2}, axis_angle(0, 1, 0, 71), {1.5f, 1, 1}),
                                           trs({0, 0, 4}, axis_angle(0, 0.6f, 0.8f, 123), {2, 2, 2})};
  for (float weight : {1.0f, 0.5f, 0.3f}) {
    AdditiveBlendJob job{pose, additive, additive, weight, {}};
    ASSERT_TRUE(job.Run());
    for (std::size_t n = 0; n < pose.size(); ++n) {
      EXPECT_TRUE(same_bits(pose[n], before[n])) << "node " << n << " weight " << weight;
    }
  }
}

TEST(AdditiveBlendJob, AddsTheDifferenceScaledByWeight) {
  std::vector<Transform> pose = {trs({1, 0, 0}, axis_angle(0, 0, 1, 10), {2, 2, 2})};
  const std::vector<Transform> reference = {trs({0, 0, 0}, axis_angle(0, 0, 1, 0), {1, 1, 1})};
  const std::vector<Transform> additive = {trs({0, 2, 0}, axis_angle(0, 0, 1, 40), {2, 1, 1})};
  ASSERT_TRUE((AdditiveBlendJob{pose, additive, reference, 0.5f, {}}.Run()));
  EXPECT_FLOAT_EQ(pose[0].translation.y, 1.0f);
  EXPECT_FLOAT_EQ(pose[0].scale.x, 3.0f);  // 2 * (1 + 0.5 * (2 - 1))
  const glm::quat expected = axis_angle(0, 0, 1, 30);  // 10 + half of 40 (nlerp: near)
  EXPECT_NEAR(pose[0].rotation.z, expected.z, 2e-3f);
  EXPECT_NEAR(pose[0].rotation.w, expected.w, 2e-3f);
}

TEST(AdditiveBlendJob, ZeroMaskNodesAreUntouched) {
  std::vector<Transform> pose = {trs({1, 0, 0}, axis_angle(0, 0, 1, 10), {2, 2, 2}), Transform{}};
  const std::vector<Transform> before = pose;
  const std::vector<Transform> reference = {Transform{}, Transform{}};
  const std::vector<Transform> additive = {trs({0, 2, 0}, axis_angle(0, 0, 1, 40), {2, 1, 1}),
                                           trs({0, 2, 0}, axis_angle(0, 0, 1, 40), {2, 1, 1})};
  const std::vector<float> mask = {0.0f, 1.0f};
  ASSERT_TRUE((AdditiveBlendJob{pose, additive, reference, 1.0f, mask}.Run()));
  EXPECT_TRUE(same_bits(pose[0], before[0]));
  EXPECT_FLOAT_EQ(pose[1].translation.y, 2.0f);
}

}  // namespace
}  // namespace posecast
