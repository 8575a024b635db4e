// The viewer's footstep rings (client/viewer/event_marks.h): which events get one, where, in
// which colour, and how they fade.
#include "event_marks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace posecast::viewer {
namespace {

constexpr std::size_t kFloatsPerRing = 24 * 2 * 6;  // segments x vertices x (xyz rgb)
const float kBlack[3] = {0.0f, 0.0f, 0.0f};

ViewerEvent event_at(int64_t fired_us, const char* marker, float x, float z) {
  ViewerEvent e;
  e.fired_us = fired_us;
  e.marker = marker;
  e.x = x;
  e.z = z;
  return e;
}

TEST(EventMarks, OnlyEventsYoungerThanTheLifetimeGetARing) {
  const std::vector<ViewerEvent> events = {event_at(0, "foot_l", 0, 0), event_at(900'000, "foot_r", 0, 0),
                                           event_at(3'000'000, "future", 0, 0)};
  std::vector<float> out;
  append_event_rings(events, kEventMarkLifetimeUs + 500'000, 1.0f, kBlack, out);
  // The first is older than the lifetime and the third not fired yet: one ring.
  EXPECT_EQ(out.size(), kFloatsPerRing);
}

TEST(EventMarks, RingsLieOnTheGroundAroundTheEventAndWidenAsTheyAge) {
  std::vector<float> young, old;
  const std::vector<ViewerEvent> events = {event_at(0, "step", 3.0f, -2.0f)};
  append_event_rings(events, 0, 0.5f, kBlack, young);
  append_event_rings(events, kEventMarkLifetimeUs - 1, 0.5f, kBlack, old);
  ASSERT_EQ(young.size(), kFloatsPerRing);
  const auto radius = [](const std::vector<float>& v) { return std::hypot(v[0] - 3.0f, v[2] + 2.0f); };
  EXPECT_NEAR(radius(young), 0.5f * 0.6f, 1e-5f);
  EXPECT_NEAR(radius(old), 0.5f * 1.2f, 1e-4f);
  for (std::size_t i = 0; i < young.size(); i += 6) EXPECT_NEAR(young[i + 1], 0.01f, 1e-6f);
}

TEST(EventMarks, LeftAndRightFootstepsHaveTheirColoursAndFadeIntoTheBackground) {
  std::vector<float> left, right, other, faded;
  append_event_rings(std::vector<ViewerEvent>{event_at(0, "foot_l", 0, 0)}, 0, 1.0f, kBlack, left);
  append_event_rings(std::vector<ViewerEvent>{event_at(0, "right_step", 0, 0)}, 0, 1.0f, kBlack, right);
  append_event_rings(std::vector<ViewerEvent>{event_at(0, "swing", 0, 0)}, 0, 1.0f, kBlack, other);
  const float background[3] = {0.1f, 0.2f, 0.3f};
  append_event_rings(std::vector<ViewerEvent>{event_at(0, "foot_l", 0, 0)}, kEventMarkLifetimeUs - 1, 1.0f,
                     background, faded);
  EXPECT_FLOAT_EQ(left[3], 1.0f);
  EXPECT_FLOAT_EQ(left[5], 0.15f);
  EXPECT_FLOAT_EQ(right[3], 0.2f);
  EXPECT_FLOAT_EQ(right[5], 1.0f);
  EXPECT_FLOAT_EQ(other[3], 0.95f);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(faded[3 + i], background[i], 1e-5f);
}

}  // namespace
}  // namespace posecast::viewer
