// BlendJob, OverrideBlendJob and AdditiveBlendJob (blending.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "posecast/blending.h"
#include "posecast/det_math.h"
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

// The scalar formulas blending.h documents, written with det_math.h, one node at a time.
Transform scalar_blend(const std::vector<std::vector<Transform>>& poses, const std::vector<float>& w, std::size_t n) {
  float total = 0.0f;
  std::size_t first = poses.size();
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] > 0.0f) {
      total += w[i];
      if (first == poses.size()) first = i;
    }
  }
  const float inv = 1.0f / total;
  const Transform& f = poses[first][n];
  const float k0 = w[first] * inv;
  glm::vec3 t(f.translation.x * k0, f.translation.y * k0, f.translation.z * k0);
  glm::vec3 s(f.scale.x * k0, f.scale.y * k0, f.scale.z * k0);
  glm::quat q(f.rotation.w * k0, f.rotation.x * k0, f.rotation.y * k0, f.rotation.z * k0);
  for (std::size_t i = first + 1; i < poses.size(); ++i) {
    if (!(w[i] > 0.0f)) continue;
    const float k = w[i] * inv;
    const Transform& x = poses[i][n];
    t = glm::vec3(t.x + x.translation.x * k, t.y + x.translation.y * k, t.z + x.translation.z * k);
    s = glm::vec3(s.x + x.scale.x * k, s.y + x.scale.y * k, s.z + x.scale.z * k);
    const float kq = det_dot(f.rotation, x.rotation) < 0.0f ? -k : k;
    q = glm::quat(q.w + x.rotation.w * kq, q.x + x.rotation.x * kq, q.y + x.rotation.y * kq, q.z + x.rotation.z * kq);
  }
  return trs(t, det_normalize(q), s);
}

std::vector<Transform> random_pose(std::size_t nodes, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1u;
  const auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return static_cast<float>(x % 20001u) / 10000.0f - 1.0f;  // [-1, 1]
  };
  std::vector<Transform> pose(nodes);
  for (Transform& t : pose) {
    t.translation = glm::vec3(next(), next(), next());
    t.rotation = det_normalize(glm::quat(next(), next(), next(), next()));
    t.scale = glm::vec3(1.0f + next() * 0.5f, 1.0f, 1.0f - next() * 0.25f);
  }
  return pose;
}

TEST(BlendJob, MatchesTheDocumentedScalarFormulasBitForBit) {
  const std::size_t nodes = 33;
  const auto rest = random_pose(nodes, 99);
  // 2 contributing (the straight-line path), 3, and 12 (more than one chunk of 8).
  for (const std::vector<float>& weights : {std::vector<float>{0.3f, 0.0f, 1.7f},
                                            std::vector<float>{0.25f, 0.5f, 2.0f},
                                            std::vector<float>{1, 2, 0, 3, 4, 5, 6, 7, 8, 9, 10, 0.5f, 0.25f}}) {
    std::vector<std::vector<Transform>> poses;
    std::vector<BlendInput> inputs;
    for (std::size_t i = 0; i < weights.size(); ++i) poses.push_back(random_pose(nodes, static_cast<uint32_t>(i)));
    for (std::size_t i = 0; i < weights.size(); ++i) inputs.push_back({poses[i], weights[i]});
    std::vector<Transform> out(nodes);
    ASSERT_TRUE((BlendJob{inputs, rest, out}.Run()));
    for (std::size_t n = 0; n < nodes; ++n) {
      EXPECT_TRUE(same_bits(out[n], scalar_blend(poses, weights, n))) << weights.size() << " inputs, node " << n;
    }
  }
}

TEST(OverrideBlendJob, MatchesDetLerpAndDetNlerpBitForBit) {
  const std::size_t nodes = 40;
  std::vector<Transform> pose = random_pose(nodes, 1);
  const std::vector<Transform> before = pose;
  const std::vector<Transform> layer = random_pose(nodes, 2);
  std::vector<float> mask(nodes);
  for (std::size_t n = 0; n < nodes; ++n) mask[n] = static_cast<float>(n % 7) / 6.0f;
  ASSERT_TRUE((OverrideBlendJob{pose, layer, 0.8f, mask}.Run()));
  for (std::size_t n = 0; n < nodes; ++n) {
    const float t = 0.8f * mask[n];
    Transform expected = before[n];
    if (t > 0.0f) {
      expected.translation = det_lerp(before[n].translation, layer[n].translation, t);
      expected.rotation = det_nlerp(before[n].rotation, layer[n].rotation, t);
      expected.scale = det_lerp(before[n].scale, layer[n].scale, t);
    }
    EXPECT_TRUE(same_bits(pose[n], expected)) << "node " << n;
  }
}

// Without a mask and with 0 < weight < 1 (a crossfade's mix) the job runs the two-input
// blend's lanes in place: still det_lerp / det_nlerp per node, bit for bit, for whole groups
// of eight nodes and for the shorter last group.
TEST(OverrideBlendJob, UnmaskedMixMatchesDetLerpAndDetNlerpBitForBit) {
  for (const std::size_t nodes : {1u, 7u, 8u, 26u, 40u}) {
    for (const float weight : {0.3f, 0.999f}) {
      std::vector<Transform> pose = random_pose(nodes, 3);
      const std::vector<Transform> before = pose;
      const std::vector<Transform> layer = random_pose(nodes, 4);
      ASSERT_TRUE((OverrideBlendJob{pose, layer, weight, {}}.Run()));
      for (std::size_t n = 0; n < nodes; ++n) {
        Transform expected;
        expected.translation = det_lerp(before[n].translation, layer[n].translation, weight);
        expected.rotation = det_nlerp(before[n].rotation, layer[n].rotation, weight);
        expected.scale = det_lerp(before[n].scale, layer[n].scale, weight);
        EXPECT_TRUE(same_bits(pose[n], expected))
            << nodes << " nodes, weight " << weight << ", node " << n;
      }
    }
  }
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
