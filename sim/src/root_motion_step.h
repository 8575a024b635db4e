#pragma once
// Internal: advancing a motion's clip phases by one tick, and the root motion that advance
// carries (docs/movement.md, "The World"). Pure functions of the motion and the shared rig:
// safe on the evaluation threads, allocation-free, deterministic (+ - * / and det_math only).

#include <cstdint>

#include "posecast/model.h"
#include "posecast/root_motion.h"
#include "posecast/sim/animation_state.h"

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
// is noise) times `weight` * its share of the motion's slot weights.
void advance_motion(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionSum* sum,
                    float weight);

// Moves state.root by `sum` along the heading root.yaw - state.sway (the sway applied last
// tick), keeps |x|, |z| within kWorldHalfExtent, turns the heading by sum.turn and sets the
// facing to the heading plus the new sway (stored back into state.sway), wrapped. The same bits
// as rotate_by_yaw(heading, ...) (its sine and cosine are cached in the state).
void apply_root_motion(EntityState& state, const RootMotionSum& sum);

}  // namespace posecast::sim
