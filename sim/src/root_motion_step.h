#pragma once
// Internal: advancing a motion's clip phases by one tick, and the root motion that advance
// carries (docs/movement.md, "The World"). Pure functions of the motion and the shared rig:
// safe on the evaluation threads, allocation-free, deterministic (+ - * / and det_math only).

#include <cstdint>

#include "posecast/model.h"
#include "posecast/root_motion.h"
#include "posecast/sim/animation_state.h"

namespace posecast::sim {

// Advances every slot of `motion` by dt_us of world time at its speed (a synced motion: slot 0
// so, the others to slot 0's normalised phase). When `delta` is not null and the motion's
// root_motion is on, adds to it the motion's root motion over this advance, in the frame the
// character faced at the start of it: each slot's (root_motion_between for a travelling clip,
// straight forward at ground_speed * clip-time advance for an in-place one) times `weight` *
// its share of the motion's slot weights.
void advance_motion(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionDelta* delta,
                    float weight);

// Moves `root` by `delta` (a clip-frame delta, turned by root.yaw), turns it by delta.dyaw
// (wrapped) and keeps |x|, |z| within kWorldHalfExtent.
void apply_root_delta(RootTransform& root, const RootMotionDelta& delta);

}  // namespace posecast::sim
