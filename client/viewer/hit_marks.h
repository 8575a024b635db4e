#pragma once
// The viewer's hit queries (docs/viewer.md, "Hit queries"): the joint a shot hit, drawn as its
// capsules in wire lines in a bright colour for about kHitMarkLifetimeUs (fading out at the
// end), following the entity's presented pose.

#include <cstdint>
#include <vector>

#include "posecast/hit_geometry.h"

namespace posecast::viewer {

// One hit to highlight: the server's answer (entity, skin joint) and when it arrived.
struct HitMark {
  uint32_t entity = 0;
  uint16_t joint = 0;
  int64_t answered_us = 0;  // the viewer's clock
};

inline constexpr int64_t kHitMarkLifetimeUs = 1'000'000;

// How far a mark of `age_us` has faded: 0 (full colour) for the first 70 % of
// kHitMarkLifetimeUs, then linearly to 1 (gone; also for a negative age: not yet).
float hit_mark_fade(int64_t age_us);

// Appends to `out` (x y z r g b per vertex, two a segment: render::DrawOptions::ground_lines) a
// wire capsule: a ring of kCapsuleRingSegments segments around each end and the middle, and
// kCapsuleSides lines along it, all at `capsule.radius` from its segment, in `color`. A
// capsule of zero length is drawn as three great circles of its sphere.
inline constexpr int kCapsuleRingSegments = 16;
inline constexpr int kCapsuleSides = 8;
void append_capsule_lines(const PosedCapsule& capsule, const float color[3], std::vector<float>& out);

}  // namespace posecast::viewer
