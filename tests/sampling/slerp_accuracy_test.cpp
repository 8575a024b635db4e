// Accuracy of the deterministic math the sampler uses (det_math.h), against double-precision
// references that only the TESTS may compute with libm (the pose path must not).

#include <gtest/gtest.h>

#include <algorithm>
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

QuatD unit(const QuatD& q) {
  const double n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  return {q.x / n, q.y / n, q.z / n, q.w / n};
}

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

// The worst |f(x) - reference(x)| over 200,001 evenly spaced floats x in [0, pi/2], and where.
struct WorstError {
  double error = 0.0, at = 0.0;
};
template <class F, class Reference>
WorstError worst_over_half_pi(F f, Reference reference) {
  WorstError worst;
  constexpr int kSteps = 200000;
  for (int i = 0; i <= kSteps; ++i) {
    const float x = static_cast<float>(kPi / 2.0 * i / kSteps);
    const double err = std::fabs(static_cast<double>(f(x)) - reference(static_cast<double>(x)));
    if (err > worst.error) worst = {err, static_cast<double>(x)};
  }
  return worst;
}

TEST(DetSinHalfPi, MatchesDoubleSinOverZeroToHalfPi) {
  const WorstError worst =
      worst_over_half_pi([](float x) { return det_sin_half_pi(x); }, [](double x) { return std::sin(x); });
  // Truncation is below 1e-9; what remains is float rounding in the Horner steps, measured at
  // 1.6e-7 (under 3 ulp of 1) near x = 1.569. slerp's 2e-6 budget absorbs it.
  EXPECT_LT(worst.error, 2e-7) << "worst at x=" << worst.at;
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

TEST(DetCosHalfPi, MatchesDoubleCosOverZeroToHalfPi) {
  const WorstError worst = worst_over_half_pi([](float x) { return det_cos_half_pi_of_square(x * x); },
                                              [](double x) { return std::cos(x); });
  // Truncation is below 7e-9; the rest is float rounding of x * x and the Horner steps.
  EXPECT_LT(worst.error, 2e-7) << "worst at x=" << worst.at;
  EXPECT_EQ(det_cos_half_pi_of_square(0.0f), 1.0f);
}

// The key-pair terms in double: theta against libm's atan2 (in double, tests only), c unit and
// orthogonal to a, for arcs from a thousandth of a degree to 179 degrees, either hemisphere.
TEST(DetKeySlerpTerms, ThetaAndCAreAccurate) {
  const glm::quat a = from_xyzw(test::axis_angle_xyzw(0.3, -0.2, 0.9, 10.0));
  for (double degrees : {0.001, 0.01, 0.5, 1.5, 30.0, 90.0, 150.0, 179.0}) {
    for (double hemisphere : {1.0, -1.0}) {
      SCOPED_TRACE(testing::Message() << degrees << " degrees, hemisphere " << hemisphere);
      glm::quat b = det_mul(from_xyzw(test::axis_angle_xyzw(1.0, 2.0, 3.0, degrees)), a);
      if (hemisphere < 0) b = glm::quat(-b.w, -b.x, -b.y, -b.z);
      const KeySlerpTerms terms = det_key_slerp_terms(a, b);
      const QuatD ad = unit(to_double(a)), bd = unit(to_double(b));
      const double d = ad.x * bd.x + ad.y * bd.y + ad.z * bd.z + ad.w * bd.w;
      const double s = d < 0 ? -1.0 : 1.0;  // b on a's side
      const double dx = s * bd.x - ad.x, dy = s * bd.y - ad.y, dz = s * bd.z - ad.z,
                   dw = s * bd.w - ad.w, px = s * bd.x + ad.x, py = s * bd.y + ad.y,
                   pz = s * bd.z + ad.z, pw = s * bd.w + ad.w;
      // The quaternions' angle (half the rotation's), by the formula that stays accurate for
      // tiny arcs: 2 atan2(|b - a|, |b + a|).
      const double theta = 2.0 * std::atan2(std::sqrt(dx * dx + dy * dy + dz * dz + dw * dw),
                                            std::sqrt(px * px + py * py + pz * pz + pw * pw));
      EXPECT_NEAR(terms.theta, theta, 1e-7 * std::max(theta, 1e-3));
      const QuatD c = to_double(terms.c[0], terms.c[1], terms.c[2], terms.c[3]);
      EXPECT_NEAR(c.x * c.x + c.y * c.y + c.z * c.z + c.w * c.w, 1.0, 1e-6);
      EXPECT_NEAR(ad.x * c.x + ad.y * c.y + ad.z * c.z + ad.w * c.w, 0.0, 1e-6);
    }
  }
  const KeySlerpTerms equal = det_key_slerp_terms(a, a);
  EXPECT_EQ(equal.theta, 0.0f);
  EXPECT_EQ(equal.c[0], 0.0f);
  EXPECT_EQ(equal.c[3], 0.0f);
}

// det_key_slerp against the double reference: large arcs, the other hemisphere, nearly equal
// keys (where det_slerp needs its nlerp branch), equal keys (a exactly), and unit results
// although nothing normalises them.
TEST(DetKeySlerp, MatchesDoubleSlerpFromNearlyEqualKeysTo179Degrees) {
  const glm::quat a = from_xyzw(test::axis_angle_xyzw(0.5, 0.5, -0.2, 40.0));
  for (double degrees : {0.001, 0.01, 0.5, 1.5, 45.0, 90.0, 179.0}) {
    for (double hemisphere : {1.0, -1.0}) {
      glm::quat b = det_mul(from_xyzw(test::axis_angle_xyzw(-1.0, 0.3, 0.2, degrees)), a);
      if (hemisphere < 0) b = glm::quat(-b.w, -b.x, -b.y, -b.z);
      const KeySlerpTerms terms = det_key_slerp_terms(a, b);
      for (float t : {0.0f, 0.1f, 0.3f, 0.5f, 0.75f, 0.9f, 1.0f}) {
        SCOPED_TRACE(testing::Message() << degrees << " degrees, hemisphere " << hemisphere
                                        << ", t=" << t);
        const glm::quat q = det_key_slerp(a, terms, t);
        expect_quat_near(q, slerp_reference(to_double(a), to_double(b), static_cast<double>(t)),
                         2e-6);
        const QuatD qd = to_double(q);
        const double len2 = qd.x * qd.x + qd.y * qd.y + qd.z * qd.z + qd.w * qd.w;
        EXPECT_NEAR(len2, 1.0, 1e-6);
      }
    }
  }
  const KeySlerpTerms equal = det_key_slerp_terms(a, a);
  for (float t : {0.0f, 0.4f, 1.0f}) {
    const glm::quat q = det_key_slerp(a, equal, t);
    EXPECT_EQ(std::memcmp(&q, &a, sizeof q), 0);
  }
  // t = 0 gives the first key exactly (cos 0 = 1, sin 0 = 0).
  const glm::quat b = det_mul(from_xyzw(test::axis_angle_xyzw(1, 0, 0, 60.0)), a);
  const glm::quat q = det_key_slerp(a, det_key_slerp_terms(a, b), 0.0f);
  EXPECT_EQ(std::memcmp(&q, &a, sizeof q), 0);
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

// SampleJob slerps LINEAR rotations several tracks at a time (vector lanes); each result must
// be det_key_slerp's, bit for bit, whatever mix of key pairs shares a batch and however many
// tracks there are.
TEST(SampleJobLinear, RotationsAreBitIdenticalToDetKeySlerp) {
  // Key pairs: nearly equal, 90 and 179 degrees, opposite hemispheres,
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
          const glm::quat& a = keys[i].first;
          const glm::quat expected =
              det_key_slerp(a, det_key_slerp_terms(a, keys[i].second), s);
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
