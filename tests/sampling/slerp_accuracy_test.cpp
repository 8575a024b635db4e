// Accuracy of the deterministic math the sampler uses (det_math.h), against double-precision
// references that only the TESTS may compute with libm (the pose path must not).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "hand_rigs.h"
#include "posecast/det_math.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct QuatD {
  double x, y, z, w;
};

QuatD to_double(float x, float y, float z, float w) {
  return {static_cast<double>(x), static_cast<double>(y), static_cast<double>(z),
          static_cast<double>(w)};
}
QuatD to_double(const std::vector<float>& xyzw) {
  return to_double(xyzw[0], xyzw[1], xyzw[2], xyzw[3]);
}
QuatD to_double(const glm::quat& q) { return to_double(q.x, q.y, q.z, q.w); }

// Textbook slerp in double along the shortest path.
QuatD slerp_reference(QuatD a, QuatD b, double t) {
  double d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
  if (d < 0.0) {
    b = {-b.x, -b.y, -b.z, -b.w};
    d = -d;
  }
  if (d > 1.0) d = 1.0;
  const double theta = std::acos(d);
  double wa = 1.0 - t, wb = t;
  if (theta > 1e-12) {
    wa = std::sin((1.0 - t) * theta) / std::sin(theta);
    wb = std::sin(t * theta) / std::sin(theta);
  }
  return {a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb, a.w * wa + b.w * wb};
}

void expect_quat_near(const glm::quat& q, const QuatD& r, double tol) {
  EXPECT_NEAR(q.x, r.x, tol);
  EXPECT_NEAR(q.y, r.y, tol);
  EXPECT_NEAR(q.z, r.z, tol);
  EXPECT_NEAR(q.w, r.w, tol);
}

glm::quat from_xyzw(const std::vector<float>& v) { return glm::quat(v[3], v[0], v[1], v[2]); }

TEST(DetAcosUnit, MatchesDoubleAcosOverZeroToOne) {
  double worst = 0.0, worst_at = 0.0;
  constexpr int kSteps = 200000;
  for (int i = 0; i <= kSteps; ++i) {
    const float x = static_cast<float>(i) / kSteps;
    const double err =
        std::fabs(static_cast<double>(det_acos_unit(x)) - std::acos(static_cast<double>(x)));
    if (err > worst) {
      worst = err;
      worst_at = static_cast<double>(x);
    }
  }
  // The polynomial's own error is below 3e-8; float rounding of a result near pi/2 adds up to
  // about one ulp there (1.2e-7).
  EXPECT_LT(worst, 2.5e-7) << "worst at x=" << worst_at;
  EXPECT_EQ(det_acos_unit(1.0f), 0.0f);
  EXPECT_EQ(det_acos_unit(2.0f), 0.0f);                  // clamped
  EXPECT_EQ(det_acos_unit(-1.0f), det_acos_unit(0.0f));  // clamped
}

TEST(DetSinHalfPi, MatchesDoubleSinOverZeroToHalfPi) {
  double worst = 0.0, worst_at = 0.0;
  constexpr int kSteps = 200000;
  for (int i = 0; i <= kSteps; ++i) {
    const float x = static_cast<float>(kPi / 2.0 * i / kSteps);
    const double err =
        std::fabs(static_cast<double>(det_sin_half_pi(x)) - std::sin(static_cast<double>(x)));
    if (err > worst) {
      worst = err;
      worst_at = static_cast<double>(x);
    }
  }
  // Truncation is below 1e-9; what remains is float rounding in the Horner steps, measured at
  // 1.6e-7 (under 3 ulp of 1) near x = 1.569. slerp's 2e-6 budget absorbs it.
  EXPECT_LT(worst, 2e-7) << "worst at x=" << worst_at;
  EXPECT_EQ(det_sin_half_pi(0.0f), 0.0f);
}

// 90 and 179 degree arcs, about an oblique axis, against the double reference.
TEST(DetSlerp, MatchesDoubleSlerpOnLargeArcs) {
  for (double degrees : {90.0, 179.0}) {
    const std::vector<float> a = test::axis_angle_xyzw(0.3, -0.2, 0.9, 10.0);
    // b = a rotated further by `degrees` about another axis: the arc between them is `degrees`.
    const std::vector<float> step = test::axis_angle_xyzw(1.0, 2.0, 3.0, degrees);
    const glm::quat b = det_mul(from_xyzw(step), from_xyzw(a));
    const QuatD ad = to_double(a);
    const QuatD bd = to_double(b);
    for (float t : {0.0f, 0.1f, 0.25f, 0.5f, 0.75f, 0.9f, 1.0f}) {
      SCOPED_TRACE(testing::Message() << degrees << " degrees, t=" << t);
      expect_quat_near(det_slerp(from_xyzw(a), b, t),
                       slerp_reference(ad, bd, static_cast<double>(t)), 2e-6);
    }
  }
}

// Keys whose dot product is negative describe rotations less than 180 degrees apart through
// the other hemisphere; glTF requires the shortest path.
TEST(DetSlerp, TakesTheShortestPathWhenKeysHaveNegativeDot) {
  const std::vector<float> a = {0.0f, 0.0f, 0.0f, 1.0f};
  std::vector<float> b = test::axis_angle_xyzw(0, 0, 1, 90.0);
  for (float& c : b) c = -c;  // same rotation, opposite hemisphere: dot(a, b) < 0
  const glm::quat mid = det_slerp(from_xyzw(a), from_xyzw(b), 0.5f);
  // 45 degrees about +z (not 135 degrees about -z, the long way round).
  expect_quat_near(mid, to_double(test::axis_angle_xyzw(0, 0, 1, 45.0)), 2e-6);
  for (float t : {0.2f, 0.6f}) {
    expect_quat_near(det_slerp(from_xyzw(a), from_xyzw(b), t),
                     slerp_reference(to_double(a), to_double(b), static_cast<double>(t)), 2e-6);
  }
}

// Under 1.8 degrees apart det_slerp switches to nlerp; the result must still be slerp's
// within float precision, and identical keys must give that key.
TEST(DetSlerp, NearlyIdenticalKeysStayAccurate) {
  const std::vector<float> a = test::axis_angle_xyzw(0.5, 0.5, -0.2, 40.0);
  for (double apart : {1.5, 0.5, 0.01}) {
    const std::vector<float> step = test::axis_angle_xyzw(-1.0, 0.3, 0.2, apart);
    const glm::quat b = det_mul(from_xyzw(step), from_xyzw(a));
    for (float t : {0.0f, 0.3f, 0.5f, 1.0f}) {
      SCOPED_TRACE(testing::Message() << apart << " degrees, t=" << t);
      expect_quat_near(det_slerp(from_xyzw(a), b, t),
                       slerp_reference(to_double(a), to_double(b), static_cast<double>(t)), 2e-6);
    }
  }
  const glm::quat q = from_xyzw(a);
  for (float t : {0.0f, 0.4f, 1.0f}) expect_quat_near(det_slerp(q, q, t), to_double(a), 1e-7);
}

// The same checks through SampleJob, so the sampler's rotation path is the accurate one.
TEST(SampleJobLinear, RotationMatchesDoubleSlerpIncludingNegativeDotKeys) {
  const Skeleton skeleton = test::chain_skeleton(1);
  const std::vector<float> k0 = test::axis_angle_xyzw(0, 1, 0, 20.0);
  std::vector<float> k1 = test::axis_angle_xyzw(1, 0, 1, 150.0);
  for (float& c : k1) c = -c;
  const Clip clip = test::ClipBuilder()
                        .track(0, TrackTarget::kRotation, Interpolation::kLinear, {0.0f, 1.0f},
                               test::concat({k0, k1}))
                        .build();
  for (int64_t us : {100'000, 500'000, 800'000}) {
    const glm::quat q = test::sample(skeleton, clip, us)[0].rotation;
    expect_quat_near(
        q, slerp_reference(to_double(k0), to_double(k1), static_cast<double>(us) / 1e6), 2e-6);
  }
}

// SampleJob slerps LINEAR rotations several tracks at a time (vector lanes, with a shortcut
// when every lane's keys are nearly equal); each result must still be det_slerp's, bit for
// bit, whatever mix of key pairs shares a batch and however many tracks there are.
TEST(SampleJobLinear, RotationsAreBitIdenticalToDetSlerp) {
  // Key pairs: nearly equal (nlerp branch), 90 and 179 degrees, opposite hemispheres,
  // identical, and exactly opposite quaternions (the same rotation).
  const auto pair_for = [](int kind, int i) -> std::pair<glm::quat, glm::quat> {
    const glm::quat a = from_xyzw(test::axis_angle_xyzw(0.2 + i, 1.0, -0.5, 10.0 + 7.0 * i));
    auto step = [&](double degrees) {
      return det_mul(from_xyzw(test::axis_angle_xyzw(1.0, -0.3 * i, 0.7, degrees)), a);
    };
    switch (kind) {
      case 0:
        return {a, step(0.7)};
      case 1:
        return {a, step(90.0)};
      case 2:
        return {a, step(179.0)};
      case 3:
        return {a, -step(60.0)};
      case 4:
        return {a, a};
      default:
        return {a, -a};
    }
  };
  // Mixed batches (37 tracks: not a multiple of the lane count), all nearly equal, all far.
  for (const std::vector<int>& kinds :
       {std::vector<int>{0, 1, 2, 3, 4, 5}, std::vector<int>{0}, std::vector<int>{1, 2}}) {
    const int tracks = 37;
    const Skeleton skeleton = test::chain_skeleton(tracks);
    test::ClipBuilder builder;
    std::vector<std::pair<glm::quat, glm::quat>> keys;
    for (int i = 0; i < tracks; ++i) {
      keys.push_back(pair_for(kinds[static_cast<std::size_t>(i) % kinds.size()], i));
      const glm::quat& a = keys.back().first;
      const glm::quat& b = keys.back().second;
      builder.track(static_cast<uint16_t>(i), TrackTarget::kRotation, Interpolation::kLinear,
                    {0.0f, 1.0f}, {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w});
    }
    // Both sampler paths: terms computed per sample, and the clip's precomputed table.
    const Clip computed = builder.build();
    Clip derived = computed;
    derived.derive_slerp_terms();
    ASSERT_TRUE(derived.validate(skeleton).ok());
    for (const Clip* clip : {&computed, static_cast<const Clip*>(&derived)}) {
      for (int64_t us : {0, 1, 250'000, 500'000, 777'777, 999'999}) {
        const std::vector<Transform> pose = test::sample(skeleton, *clip, us);
        ASSERT_EQ(pose.size(), static_cast<std::size_t>(tracks));
        const float s = (seconds_from_us(us) - 0.0f) / (1.0f - 0.0f);  // the sampler's formula
        for (int i = 0; i < tracks; ++i) {
          const glm::quat expected = det_slerp(keys[i].first, keys[i].second, s);
          const glm::quat got = pose[i].rotation;
          EXPECT_EQ(std::memcmp(&got, &expected, sizeof got), 0)
              << (clip == &derived ? "precomputed terms, " : "computed terms, ") << "track " << i
              << " at " << us << " us: " << got.x << " " << got.y << " " << got.z << " " << got.w
              << " vs " << expected.x << " " << expected.y << " " << expected.z << " "
              << expected.w;
        }
      }
    }
  }
}

}  // namespace
}  // namespace posecast
