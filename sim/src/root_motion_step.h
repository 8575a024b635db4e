#pragma once
// Internal: advancing a motion's clip phases by one tick, and the root motion that advance
// carries (docs/movement.md, "The World"). Pure functions of the motion and the shared rig:
// safe on the evaluation threads, allocation-free, deterministic (+ - * / and det_math only).

#include <algorithm>
#include <bit>
#include <cstdint>

#include "posecast/model.h"
#include "posecast/det_math.h"
#include "posecast/root_motion.h"
#include "posecast/sim/animation_state.h"
#include "posecast/sim/root_transform.h"

namespace posecast::sim {

// The root motion of one tick's advance of layer 0, weighted over its clips. A travelling clip
// sways the facing over a stride (its track's yaw); the entity keeps a heading (its facing
// minus the blended sway, EntityState::sway) and each clip's displacement is taken in its loop
// frame (the character's frame at clip time 0) and turned by that heading. So a blend that
// scales the sway and the steps (walk at weight 0.5, a crossfade's ramp) still walks straight
// along the heading, where composing per-tick deltas in the swaying frame walks off at an angle.
struct RootMotionSum {
  float x = 0.0f, z = 0.0f;  // weighted displacement in the clips' loop frames
  float turn = 0.0f;         // weighted net turn of the heading (a turning clip's loop wraps)
  float sway = 0.0f;         // weighted yaw of the clips after the advance
};

// Advances every slot of `motion` by dt_us of world time at its speed (a synced motion: slot 0
// so, the others to slot 0's normalised phase). When `sum` is not null and the motion's
// root_motion is on, adds to it the motion's root motion over this advance: each slot's
// (root_motion_between for a travelling clip, straight forward at ground_speed * clip-time
// advance for an in-place one; nothing for the rig's in-place idle, whose foot-derived speed
// is noise) times `weight` * its share of the motion's slot weights. Precondition: rig.root_motion
// is empty (nothing moves) or holds one track per clip (validate_model checks it).
void advance_motion(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionSum* sum,
                    float weight);

// The advance of an entity whose only layer plays without a crossfade (the common case):
// advance_motion of layer 0's target with its root motion at weight 1, then
// apply_root_motion. Precondition: state.layers.size() == 1, no fade.
void advance_plain_motion(EntityState& state, const Rig& rig, int64_t dt_us);

// Moves state.root by `sum` along the heading root.yaw - state.sway (the sway applied last
// tick), keeps |x|, |z| within kWorldHalfExtent, turns the heading by sum.turn and sets the
// facing to the heading plus the new sway (stored back into state.sway), wrapped. The same bits
// as rotate_by_yaw(heading, ...) (its sine and cosine are cached in the state).
// Inline, its rare paths out of line: it runs for every entity each tick and is a few
// operations while the heading holds and nothing turns.
void cache_heading(EntityState& state, float heading);  // det_sin_cos into the state's cache
void turn_heading(EntityState& state, float heading, const RootMotionSum& sum);
[[gnu::always_inline]] inline void apply_root_motion(EntityState& state, const RootMotionSum& sum) {
  RootTransform& root = state.root;
  const float heading = root.yaw - state.sway;
  if (sum.x != 0.0f || sum.z != 0.0f) {
    // rotate_by_yaw(heading, sum.x, sum.z), its det_sin_cos cached while the heading holds.
    if (std::bit_cast<uint32_t>(heading) != state.heading_bits) cache_heading(state, heading);
    float wx = 0.0f, wz = 0.0f;
    rotate_by_sin_cos(state.heading_sin, state.heading_cos, sum.x, sum.z, wx, wz);
    root.x = std::clamp(root.x + wx, -kWorldHalfExtent, kWorldHalfExtent);
    root.z = std::clamp(root.z + wz, -kWorldHalfExtent, kWorldHalfExtent);
  }
  if (state.sway == 0.0f && sum.turn == 0.0f && sum.sway == 0.0f) return;  // no turning clip
  turn_heading(state, heading, sum);
}

}  // namespace posecast::sim
