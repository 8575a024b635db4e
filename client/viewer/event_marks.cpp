#include "event_marks.h"

#include <algorithm>
#include <cmath>

namespace posecast::viewer {
namespace {

bool ends_with(const std::string& text, const char* suffix) {
  const std::string s(suffix);
  return text.size() >= s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0;
}

}  // namespace

void append_event_rings(std::span<const ViewerEvent> events, int64_t now_us, float fallback_radius,
                        const float background[3], std::vector<float>& out) {
  constexpr int kSegments = 24;
  constexpr float kTwoPi = 6.28318530718f;
  for (const ViewerEvent& e : events) {
    const int64_t age = now_us - e.fired_us;
    if (age < 0 || age >= kEventMarkLifetimeUs) continue;
    const float t = static_cast<float>(age) / static_cast<float>(kEventMarkLifetimeUs);
    float color[3] = {0.95f, 0.95f, 0.95f};
    if (ends_with(e.marker, "_l") || e.marker.find("left") != std::string::npos) {
      color[0] = 1.0f, color[1] = 0.55f, color[2] = 0.15f;
    } else if (ends_with(e.marker, "_r") || e.marker.find("right") != std::string::npos) {
      color[0] = 0.2f, color[1] = 0.85f, color[2] = 1.0f;
    }
    for (int i = 0; i < 3; ++i) color[i] += (background[i] - color[i]) * t;
    const float radius = e.size > 0.0f ? e.size : fallback_radius;
    const float r = radius * (0.6f + 0.6f * t);
    const float y = radius * 0.02f;  // just above the grid
    for (int k = 0; k < kSegments; ++k) {
      for (int end = 0; end < 2; ++end) {
        const float angle = kTwoPi * static_cast<float>(k + end) / kSegments;
        out.insert(out.end(), {e.x + r * std::cos(angle), y, e.z + r * std::sin(angle), color[0], color[1], color[2]});
      }
    }
  }
}

}  // namespace posecast::viewer
