// SampleJob against hand-worked values for each glTF interpolation mode, clamping and rest
// fallback. Times in the job are integer microseconds; key times are float seconds.

#include <gtest/gtest.h>

#include <cmath>

#include "hand_rigs.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

using test::ClipBuilder;
using test::sample;

constexpr int64_t kSecond = 1'000'000;

void expect_vec3_eq(const glm::vec3& v, float x, float y, float z) {
  EXPECT_EQ(v.x, x);
  EXPECT_EQ(v.y, y);
  EXPECT_EQ(v.z, z);
}

// LINEAR translation, two keys:
//
//   key        0                       1
//   time   ----+-----------+-----------+------> t (s)
//             1.0         2.0         3.0
//   value   (0,0,0)    (2,-1,4)     (4,-2,8)
//              ^ s = (t - 1) / 2: t = 1.5 -> s = 0.25, t = 2.0 -> s = 0.5
TEST(SampleJobLinear, TranslationIsLerpOfTheSurroundingKeys) {
  const Skeleton skeleton = test::chain_skeleton(2);
  const Clip clip = ClipBuilder()
                        .track(1, TrackTarget::kTranslation, Interpolation::kLinear, {1.0f, 3.0f},
                               {0.0f, 0.0f, 0.0f, 4.0f, -2.0f, 8.0f})
                        .build();
  expect_vec3_eq(sample(skeleton, clip, 2 * kSecond)[1].translation, 2.0f, -1.0f, 4.0f);
  expect_vec3_eq(sample(skeleton, clip, 3 * kSecond / 2)[1].translation, 1.0f, -0.5f, 2.0f);
  // On a key exactly: that key.
  expect_vec3_eq(sample(skeleton, clip, 1 * kSecond)[1].translation, 0.0f, 0.0f, 0.0f);
}

// Same timeline for scale, three keys, uneven spacing:
//
//   key       0          1                    2
//   time  ----+----------+--------------------+---> t (s)
//            0.0        1.0                  5.0
//   value   (1,1,1)    (3,5,9)              (7,5,1)
//   t = 0.5 -> s = 0.5 of [0,1];  t = 2.0 -> s = 0.25 of [1,5]
TEST(SampleJobLinear, ScaleUsesTheKeyIntervalContainingT) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const Clip clip = ClipBuilder()
                        .track(0, TrackTarget::kScale, Interpolation::kLinear, {0.0f, 1.0f, 5.0f},
                               {1.0f, 1.0f, 1.0f, 3.0f, 5.0f, 9.0f, 7.0f, 5.0f, 1.0f})
                        .build();
  expect_vec3_eq(sample(skeleton, clip, kSecond / 2)[0].scale, 2.0f, 3.0f, 5.0f);
  expect_vec3_eq(sample(skeleton, clip, 2 * kSecond)[0].scale, 4.0f, 5.0f, 7.0f);
}

// LINEAR rotation: identity -> 90 degrees about z, at s = 0.5 gives 45 degrees about z.
//
//   key       0 (identity)          1 (90 deg about z)
//   time  ----+----------+----------+----> t (s)
//            0.0        0.5        1.0
TEST(SampleJobLinear, RotationIsSlerp) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const Clip clip =
      ClipBuilder()
          .track(0, TrackTarget::kRotation, Interpolation::kLinear, {0.0f, 1.0f},
                 test::concat({{0.0f, 0.0f, 0.0f, 1.0f}, test::axis_angle_xyzw(0, 0, 1, 90.0)}))
          .build();
  const glm::quat q = sample(skeleton, clip, kSecond / 2)[0].rotation;
  const std::vector<float> expected = test::axis_angle_xyzw(0, 0, 1, 45.0);
  EXPECT_NEAR(q.x, expected[0], 2e-6);
  EXPECT_NEAR(q.y, expected[1], 2e-6);
  EXPECT_NEAR(q.z, expected[2], 2e-6);
  EXPECT_NEAR(q.w, expected[3], 2e-6);
}

// STEP holds key k for times[k] <= t < times[k+1]:
//
//   key       0            1            2
//   time  ----+------------+------------+------> t (s)
//            0.0          1.0          2.0
//   value  [ 10 ........ )[ 20 ...... )[ 30 (held after the last key)
TEST(SampleJobStep, HoldsThePreviousKeyUntilTheNextKeyTime) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const Clip clip =
      ClipBuilder()
          .track(0, TrackTarget::kTranslation, Interpolation::kStep, {0.0f, 1.0f, 2.0f},
                 {10.0f, 11.0f, 12.0f, 20.0f, 21.0f, 22.0f, 30.0f, 31.0f, 32.0f})
          .build();
  expect_vec3_eq(sample(skeleton, clip, 0)[0].translation, 10.0f, 11.0f, 12.0f);
  expect_vec3_eq(sample(skeleton, clip, kSecond - 1)[0].translation, 10.0f, 11.0f, 12.0f);
  expect_vec3_eq(sample(skeleton, clip, kSecond)[0].translation, 20.0f, 21.0f, 22.0f);
  expect_vec3_eq(sample(skeleton, clip, 5 * kSecond / 2)[0].translation, 30.0f, 31.0f, 32.0f);
}

TEST(SampleJobStep, RotationKeysAreCopiedUnchanged) {
  const Skeleton skeleton = test::chain_skeleton(1);
  // Deliberately not normalised: STEP must copy the key, not re-normalise it.
  const Clip clip = ClipBuilder()
                        .track(0, TrackTarget::kRotation, Interpolation::kStep, {0.0f, 1.0f},
                               {0.1f, 0.2f, 0.3f, 0.9f, 0.0f, 0.0f, 0.6f, 0.8f})
                        .build();
  const glm::quat q = sample(skeleton, clip, kSecond / 2)[0].rotation;
  EXPECT_EQ(q.x, 0.1f);
  EXPECT_EQ(q.y, 0.2f);
  EXPECT_EQ(q.z, 0.3f);
  EXPECT_EQ(q.w, 0.9f);
}

// CUBICSPLINE translation, two keys two seconds apart (dt = 2), tangents per second:
//
//   key          0                              1
//   time     ----+--------------+---------------+----> t (s)
//               0.0            1.0             2.0
//   in-tangent (9,9,9) unused                 (3,-2,0)  -> m1 = dt * in1  = (6,-4,0)
//   value      (0,0,0)                        (4,0,2)
//   out-tangent (1,2,0)  -> m0 = dt * out0 = (2,4,0)     (9,9,9) unused
//
// Hermite: p = h00 p0 + h10 m0 + h01 p1 + h11 m1.
//   s = 0.5:  h = (0.5, 0.125, 0.5, -0.125)            -> (1.5, 1.0, 1.0)
//   s = 0.25: h = (0.84375, 0.140625, 0.15625, -0.046875) -> (0.625, 0.75, 0.3125)
// All exact in binary floating point. Without the dt scaling of the tangents the results
// would differ (e.g. x at s = 0.5 would be 1.875).
TEST(SampleJobCubicSpline, TranslationFollowsHermiteWithTangentsScaledByKeyInterval) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const Clip clip =
      ClipBuilder()
          .track(0, TrackTarget::kTranslation, Interpolation::kCubicSpline, {0.0f, 2.0f},
                 {9.0f, 9.0f, 9.0f, 0.0f, 0.0f, 0.0f, 1.0f, 2.0f, 0.0f,    // key 0
                  3.0f, -2.0f, 0.0f, 4.0f, 0.0f, 2.0f, 9.0f, 9.0f, 9.0f})  // key 1
          .build();
  expect_vec3_eq(sample(skeleton, clip, kSecond)[0].translation, 1.5f, 1.0f, 1.0f);
  expect_vec3_eq(sample(skeleton, clip, kSecond / 2)[0].translation, 0.625f, 0.75f, 0.3125f);
  // Clamped ends give the key's value element, never a tangent.
  expect_vec3_eq(sample(skeleton, clip, -kSecond)[0].translation, 0.0f, 0.0f, 0.0f);
  expect_vec3_eq(sample(skeleton, clip, 2 * kSecond)[0].translation, 4.0f, 0.0f, 2.0f);
  expect_vec3_eq(sample(skeleton, clip, 9 * kSecond)[0].translation, 4.0f, 0.0f, 2.0f);
}

// CUBICSPLINE rotation with zero tangents between identity and 90 degrees about z: at s = 0.5
// the Hermite weights are (0.5, -, 0.5, -), so the normalised result is 45 degrees about z.
// With non-zero tangents the spline leaves the unit sphere; the sampler must normalise.
TEST(SampleJobCubicSpline, RotationIsNormalisedAfterHermite) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const std::vector<float> zero = {0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> q0 = {0.0f, 0.0f, 0.0f, 1.0f};
  const std::vector<float> q1 = test::axis_angle_xyzw(0, 0, 1, 90.0);
  const Clip flat = ClipBuilder()
                        .track(0, TrackTarget::kRotation, Interpolation::kCubicSpline, {0.0f, 1.0f},
                               test::concat({zero, q0, zero, zero, q1, zero}))
                        .build();
  const glm::quat half = sample(skeleton, flat, kSecond / 2)[0].rotation;
  const std::vector<float> expected = test::axis_angle_xyzw(0, 0, 1, 45.0);
  EXPECT_NEAR(half.x, expected[0], 1e-6);
  EXPECT_NEAR(half.y, expected[1], 1e-6);
  EXPECT_NEAR(half.z, expected[2], 1e-6);
  EXPECT_NEAR(half.w, expected[3], 1e-6);

  const std::vector<float> tangent = {0.5f, -1.0f, 2.0f, 0.25f};
  const Clip bent = ClipBuilder()
                        .track(0, TrackTarget::kRotation, Interpolation::kCubicSpline, {0.0f, 1.0f},
                               test::concat({zero, q0, tangent, tangent, q1, zero}))
                        .build();
  const glm::quat r = sample(skeleton, bent, kSecond / 4)[0].rotation;
  // Hand formula in double: s = 0.25, dt = 1.
  const double h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875;
  double p[4];
  double len2 = 0.0;
  for (int c = 0; c < 4; ++c) {
    p[c] = h00 * static_cast<double>(q0[c]) + h10 * static_cast<double>(tangent[c]) +
           h01 * static_cast<double>(q1[c]) + h11 * static_cast<double>(tangent[c]);
    len2 += p[c] * p[c];
  }
  const double len = std::sqrt(len2);
  EXPECT_NEAR(r.x, p[0] / len, 1e-6);
  EXPECT_NEAR(r.y, p[1] / len, 1e-6);
  EXPECT_NEAR(r.z, p[2] / len, 1e-6);
  EXPECT_NEAR(r.w, p[3] / len, 1e-6);
}

// Clamping: before the first key -> first key's value; at/after the last -> last key's value.
//
//   key            0                1
//   time  ...  ----+----------------+---- ...
//                 1.0              2.0
//   t = -3 s, 0 s, 0.999999 s -> key 0;   t = 2 s, 2.5 s, 1000 s -> key 1
TEST(SampleJobClamping, TimesOutsideTheKeysGiveTheEndKeysExactly) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const std::vector<float> q1 = test::axis_angle_xyzw(1, 2, 3, 70.0);
  for (Interpolation mode : {Interpolation::kStep, Interpolation::kLinear}) {
    const Clip clip = ClipBuilder()
                          .track(0, TrackTarget::kTranslation, mode, {1.0f, 2.0f},
                                 {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f})
                          .track(0, TrackTarget::kRotation, mode, {1.0f, 2.0f},
                                 test::concat({{0.0f, 0.0f, 0.0f, 1.0f}, q1}))
                          .build();
    for (int64_t t : {-3 * kSecond, int64_t{0}, kSecond - 1}) {
      const Transform n = sample(skeleton, clip, t)[0];
      expect_vec3_eq(n.translation, 1.0f, 2.0f, 3.0f);
      EXPECT_EQ(n.rotation, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)) << "t=" << t;
    }
    for (int64_t t : {2 * kSecond, 5 * kSecond / 2, 1000 * kSecond}) {
      const Transform n = sample(skeleton, clip, t)[0];
      expect_vec3_eq(n.translation, 4.0f, 5.0f, 6.0f);
      EXPECT_EQ(n.rotation, glm::quat(q1[3], q1[0], q1[1], q1[2])) << "t=" << t;
    }
  }
}

TEST(SampleJobSingleKey, EveryModeGivesTheKeyValueAtAnyTime) {
  const Skeleton skeleton = test::chain_skeleton(1);
  for (Interpolation mode :
       {Interpolation::kStep, Interpolation::kLinear, Interpolation::kCubicSpline}) {
    const bool cubic = mode == Interpolation::kCubicSpline;
    const std::vector<float> t3 = {-1.0f, 2.5f, 3.0f};
    const std::vector<float> junk = {99.0f, 98.0f, 97.0f};
    const Clip clip = ClipBuilder()
                          .track(0, TrackTarget::kScale, mode, {0.5f},
                                 cubic ? test::concat({junk, t3, junk}) : t3)
                          .build();
    for (int64_t t : {-kSecond, int64_t{0}, kSecond / 2, 7 * kSecond}) {
      expect_vec3_eq(sample(skeleton, clip, t)[0].scale, -1.0f, 2.5f, 3.0f);
    }
  }
}

// Nodes and components without a track keep the skeleton's rest TRS, bit for bit.
TEST(SampleJobRest, UnanimatedNodesAndComponentsKeepRestValues) {
  const Skeleton skeleton = test::chain_skeleton(3);
  const Clip clip =
      ClipBuilder()
          .track(1, TrackTarget::kRotation, Interpolation::kLinear, {0.0f, 1.0f},
                 test::concat({{0.0f, 0.0f, 0.0f, 1.0f}, test::axis_angle_xyzw(0, 1, 0, 30.0)}))
          .build();
  const std::vector<Transform> pose = sample(skeleton, clip, kSecond / 3);
  ASSERT_EQ(pose.size(), 3u);
  for (int i : {0, 2}) {
    EXPECT_EQ(pose[i].translation, skeleton.rest[i].translation);
    EXPECT_EQ(pose[i].rotation, skeleton.rest[i].rotation);
    EXPECT_EQ(pose[i].scale, skeleton.rest[i].scale);
  }
  EXPECT_EQ(pose[1].translation, skeleton.rest[1].translation);
  EXPECT_EQ(pose[1].scale, skeleton.rest[1].scale);
  EXPECT_NE(pose[1].rotation, skeleton.rest[1].rotation);
}

TEST(SampleJobRest, EmptyClipGivesTheRestPose) {
  const Skeleton skeleton = test::chain_skeleton(4);
  const Clip clip = ClipBuilder().build();
  const std::vector<Transform> pose = sample(skeleton, clip, 123);
  ASSERT_EQ(pose.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pose[i].translation, skeleton.rest[i].translation);
    EXPECT_EQ(pose[i].rotation, skeleton.rest[i].rotation);
    EXPECT_EQ(pose[i].scale, skeleton.rest[i].scale);
  }
}

TEST(SecondsFromUs, ConvertsWithOneRounding) {
  EXPECT_EQ(seconds_from_us(0), 0.0f);
  EXPECT_EQ(seconds_from_us(1'000'000), 1.0f);
  EXPECT_EQ(seconds_from_us(-500'000), -0.5f);
  EXPECT_EQ(seconds_from_us(16'667), static_cast<float>(0.016667));
}

}  // namespace
}  // namespace posecast
