#pragma once
// The viewer's animation events (docs/events.md): the recent ones a source fired, drawn as
// rings on the ground where each happened (fading as they age) and listed in the overlay.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace posecast::viewer {

struct ViewerEvent {
  int64_t fired_us = 0;  // the viewer's clock when it fired
  uint32_t tick = 0;     // the server tick it belongs to
  uint32_t entity = 0;
  std::string clip, marker;  // "#n" when the model does not name it
  float x = 0.0f, z = 0.0f;  // where the entity stood
  float size = 0.0f;         // the ring's radius: a fraction of the character's rest height
};

// How long a ring stays on the ground, and how many recent events a source keeps.
inline constexpr int64_t kEventMarkLifetimeUs = 2'000'000;
inline constexpr std::size_t kMaxRecentEvents = 64;

// Appends to `out` (x y z r g b per vertex, two a segment: render::DrawOptions::ground_lines) a
// ring for every event younger than kEventMarkLifetimeUs at `now_us`, on the ground, of radius
// ViewerEvent::size (`fallback_radius` when 0): a footstep ("left" / "_l" in the marker's name)
// orange, a right one cyan, others white, each fading into `background` and widening as it ages.
void append_event_rings(std::span<const ViewerEvent> events, int64_t now_us, float fallback_radius,
                        const float background[3], std::vector<float>& out);

}  // namespace posecast::viewer
