// det_sin_cos, det_atan2 and det_wrap_angle against double-precision libm (the reference is
// used here only, never in the pose path).

#include <gtest/gtest.h>

#include <cmath>

#include "posecast/det_math.h"

namespace posecast {
namespace {

TEST(DetAngles, SinAndCosMatchLibmOverManyTurns) {
  float worst = 0.0f;
  for (int i = -20000; i <= 20000; ++i) {
    const float x = static_cast<float>(i) * 0.00157f;  // about +-31 rad, 5 turns each way
    float s, c;
    det_sin_cos(x, s, c);
    worst = std::max(worst, static_cast<float>(std::fabs(static_cast<double>(s) - std::sin(static_cast<double>(x)))));
    worst = std::max(worst, static_cast<float>(std::fabs(static_cast<double>(c) - std::cos(static_cast<double>(x)))));
    EXPECT_EQ(det_sin(x), s);
    EXPECT_EQ(det_cos(x), c);
  }
  EXPECT_LT(worst, 1e-6f);
}

TEST(DetAngles, Atan2MatchesLibmInEveryQuadrant) {
  float worst = 0.0f;
  for (int i = 0; i < 3600; ++i) {
    const double a = -3.14159265358979 + 2.0 * 3.14159265358979 * i / 3600.0;
    for (double r : {1e-3, 0.5, 1.0, 250.0}) {
      const float y = static_cast<float>(r * std::sin(a)), x = static_cast<float>(r * std::cos(a));
      const double reference = std::atan2(static_cast<double>(y), static_cast<double>(x));
      worst = std::max(worst, static_cast<float>(std::fabs(static_cast<double>(det_atan2(y, x)) - reference)));
    }
  }
  EXPECT_LT(worst, 3e-7f);
  EXPECT_EQ(det_atan2(0.0f, 0.0f), 0.0f);
  EXPECT_FLOAT_EQ(det_atan2(1.0f, 0.0f), kDetPi / 2.0f);
  EXPECT_FLOAT_EQ(det_atan2(0.0f, -1.0f), kDetPi);
  EXPECT_TRUE(std::isnan(det_atan2(std::nanf(""), 1.0f)));
}

TEST(DetAngles, WrapAngleLandsInMinusPiToPi) {
  for (float x : {0.0f, 3.0f, 3.1416f, -3.1416f, 7.0f, -7.0f, 100.0f, -1000.0f, kDetPi, -kDetPi}) {
    const float w = det_wrap_angle(x);
    EXPECT_GE(w, -kDetPi) << x;
    EXPECT_LT(w, kDetPi) << x;
    EXPECT_NEAR(std::sin(static_cast<double>(w)), std::sin(static_cast<double>(x)), 1e-4) << x;
    EXPECT_NEAR(std::cos(static_cast<double>(w)), std::cos(static_cast<double>(x)), 1e-4) << x;
  }
  EXPECT_EQ(det_wrap_angle(1.0f), 1.0f);
  EXPECT_NEAR(det_wrap_angle(kDetPi), -kDetPi, 1e-6f);
}

}  // namespace
}  // namespace posecast
