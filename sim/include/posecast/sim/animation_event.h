#pragma once
// Animation events (docs/events.md): a playing clip crossing one of its markers (Clip::markers).
// The World emits them as it advances each entity's clips (World::last_tick_events); the server
// streams them to clients, recordings hold them, and they are folded into the world hash.

#include <cstdint>

#include "posecast/sim/animation_state.h"

namespace posecast::sim {

// A clip's markers fire only while the clip's share of the pose is at least this: layer weight
// x crossfade weight (alpha for the fade's target, 1 - alpha for its source) x the clip's share
// of its blend (its weight over the blend's total). A walk/run blend at 0.6/0.4 fires the walk's
// footsteps only; a crossfade hands the markers over at its midpoint. Masks are not counted.
inline constexpr float kEventWeightThreshold = 0.5f;

struct AnimationEvent {
  uint64_t tick = 0;      // the World tick whose advance crossed the marker (the tick's pose
                          // shows the clip at or before it, the next tick's past it)
  EntityId entity = 0;
  uint16_t clip = 0;      // index into the entity's Rig::clips
  uint16_t marker = 0;    // index into that clip's Clip::markers
  uint8_t layer = 0;
  uint8_t reserved[3] = {0, 0, 0};
  float weight = 0.0f;    // the clip's share of the pose (>= kEventWeightThreshold)
  float x = 0.0f, z = 0.0f;  // the entity's root on the ground at that tick (its shown pose)
  bool operator==(const AnimationEvent&) const = default;
};

}  // namespace posecast::sim
