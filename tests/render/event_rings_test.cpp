// The viewer's footstep rings (client/viewer/event_marks.h; docs/events.md): one ring per
// recent event on the ground at its place, coloured by foot, fading out, gone after its
// lifetime.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "event_marks.h"

namespace posecast::viewer {
namespace {

ViewerEvent event(int64_t fired_us, const char* marker, float x, float z, float size = 0.0f) {
  ViewerEvent e;
  e.fired_us = fired_us;
  e.marker = marker;
  e.x = x;
  e.z = z;
  e.size = size;
  return e;
}

TEST(EventRings, OneRingPerRecentEventOnTheGroundAroundItsPlace) {
  const float background[3] = {0.1f, 0.1f, 0.1f};
  const std::vector<ViewerEvent> events = {event(0, "footstep_l", 2.0f, -3.0f, 0.5f),
                                           event(1'000'000, "footstep_r", -1.0f, 4.0f),
                                           event(-3'000'000, "old", 0.0f, 0.0f)};
  std::vector<float> lines;
  append_event_rings(events, 1'000'000, 0.25f, background, lines);
  ASSERT_EQ(lines.size() % 12, 0u);  // whole segments of two x y z r g b vertices
  const std::size_t per_ring = lines.size() / 2;  // the old one has expired
  ASSERT_GT(per_ring, 0u);
  for (std::size_t v = 0; v < lines.size() / 6; ++v) {
    const float* p = &lines[6 * v];
    const bool first = v < per_ring / 6;
    const float cx = first ? 2.0f : -1.0f, cz = first ? -3.0f : 4.0f;
    const float r = std::hypot(p[0] - cx, p[2] - cz);
    // Half way through its life the first widened from 0.6 to 0.9 of its size; the second is new.
    EXPECT_NEAR(r, first ? 0.5f * 0.9f : 0.25f * 0.6f, 1e-4f);
    EXPECT_GT(p[1], 0.0f);  // just above the grid
    if (first) {
      EXPECT_GT(p[3], p[5]);  // left: orange, half faded
      EXPECT_LT(p[3], 1.0f);
    } else {
      EXPECT_LT(p[3], p[5]);  // right: cyan, fresh
    }
  }
  lines.clear();
  append_event_rings(events, 5'000'000, 0.25f, background, lines);
  EXPECT_TRUE(lines.empty());
}

}  // namespace
}  // namespace posecast::viewer
