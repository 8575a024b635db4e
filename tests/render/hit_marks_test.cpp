// The viewer's hit-query pieces without GL or a server: the highlight's wire capsule
// (client/viewer/hit_marks.h), its fade, the "fire" action, and the overlay's prediction
// section, which appears only for client statistics that carry prediction counters.
#include "hit_marks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <glm/geometric.hpp>

#include "prediction_panel.h"
#include "viewer_action.h"

namespace posecast::viewer {
namespace {

// The distance from `p` to the segment [a, b].
float segment_distance(const glm::vec3& p, const glm::vec3& a, const glm::vec3& b) {
  const glm::vec3 ab = b - a;
  const float len2 = glm::dot(ab, ab);
  const float t = len2 > 0.0f ? std::clamp(glm::dot(p - a, ab) / len2, 0.0f, 1.0f) : 0.0f;
  return glm::length(p - (a + t * ab));
}

TEST(HitMarks, CapsuleLinesLieOnTheCapsuleInTheirColour) {
  const float yellow[3] = {1.0f, 0.95f, 0.1f};
  for (const PosedCapsule& capsule : {PosedCapsule{{1, 2, 3}, {1.5f, 2.8f, 2.6f}, 0.07f},
                                      PosedCapsule{{0, 0, 0}, {0, 1, 0}, 0.2f},      // along +Y
                                      PosedCapsule{{-2, 1, 0}, {-2, 1, 0}, 0.1f}}) {  // a sphere
    std::vector<float> out;
    append_capsule_lines(capsule, yellow, out);
    const bool sphere = capsule.a == capsule.b;
    const std::size_t segments = sphere ? 3 * kCapsuleRingSegments : 3 * kCapsuleRingSegments + kCapsuleSides;
    ASSERT_EQ(out.size(), segments * 2 * 6);
    for (std::size_t v = 0; v < out.size(); v += 6) {
      const glm::vec3 p(out[v], out[v + 1], out[v + 2]);
      EXPECT_NEAR(segment_distance(p, capsule.a, capsule.b), capsule.radius, 1e-5f);
      EXPECT_EQ(out[v + 3], yellow[0]);
      EXPECT_EQ(out[v + 4], yellow[1]);
      EXPECT_EQ(out[v + 5], yellow[2]);
    }
  }
}

TEST(HitMarks, FullColourThenFadingOutOverTheLifetime) {
  EXPECT_EQ(hit_mark_fade(0), 0.0f);
  EXPECT_EQ(hit_mark_fade(kHitMarkLifetimeUs * 7 / 10), 0.0f);
  const float late = hit_mark_fade(kHitMarkLifetimeUs * 9 / 10);
  EXPECT_GT(late, 0.5f);
  EXPECT_LT(late, 1.0f);
  EXPECT_EQ(hit_mark_fade(kHitMarkLifetimeUs), 1.0f);
  EXPECT_EQ(hit_mark_fade(-1), 1.0f);
}

TEST(HitMarks, FireIsAScriptedAction) {
  const auto script = parse_action_script("30:fire,10:run");
  ASSERT_TRUE(script.ok()) << script.error().message;
  ASSERT_EQ(script->size(), 2u);
  EXPECT_EQ(script.value()[1].frame, 30u);
  EXPECT_EQ(script.value()[1].action, ViewerAction::kFire);
  EXPECT_EQ(to_string(ViewerAction::kFire), "fire");
}

struct StatsWithoutPrediction {
  uint64_t hit_queries_fired = 4;
};
struct StatsWithPrediction {
  uint64_t predicted_frames = 120;
  uint64_t prediction_corrections = 2;
  uint64_t prediction_confirmed = 9;
};

TEST(HitMarks, ThePredictionSectionExistsOnlyWithPredictionCounters) {
  EXPECT_FALSE(prediction_panel(StatsWithoutPrediction{}).has_value());
  const std::optional<PredictionPanel> shown = prediction_panel(StatsWithPrediction{});
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(shown->predicted_frames, 120u);
  EXPECT_EQ(shown->corrections, 2u);
  EXPECT_EQ(shown->confirmed, 9u);
}

}  // namespace
}  // namespace posecast::viewer
