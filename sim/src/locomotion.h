#pragma once
// Internal: locomotion (docs/movement.md, "Locomotion"): which clips a commanded speed plays on
// layer 0 and how fast, and the per-tick steering of move / move_to. Deterministic: float
// + - * / and det_math only.

#include <cstdint>

#include "posecast/model.h"
#include "posecast/result.h"
#include "posecast/sim/animation_state.h"
#include "posecast/sim/commands.h"

namespace posecast::sim {

// Crossfade into locomotion from what layer 0 played before (world microseconds).
inline constexpr int64_t kLocomotionFadeUs = 200000;

// Ok when the rig can be steered: it has a walk clip (Rig::motion_config) with a ground speed
// above 0; otherwise why not.
Status check_locomotion_rig(const Rig& rig);

// The locomotion blend for `speed` (0..kMaxMoveSpeed) on a rig check_locomotion_rig accepts:
// slots in the fixed order walk, idle (if the rig has one), run (if it has one and it is faster
// than walk); the walk alone, slowed, from its ground speed down to kSlowestWalkRate of it
// (locomotion.cpp), weights linear in speed below that (idle<->walk at that rate), walk<->run
// up to the run's, run alone above, so the blended ground speed is `speed`; `speed` the rate of
// slot 0 such that, phase-synced, the blend covers `speed` units a second (the idle alone at
// rate 1 when standing; walk at rate 0 when the rig has no idle). Start offset 0, loop.
MotionSpec locomotion_spec(const Rig& rig, float speed);

// Sets the weights and rate of `motion` (a locomotion motion of this rig, as locomotion_spec
// built it) for `speed`, keeping its phases: the blend follows a speed change without a jump
// in its clips' times.
void set_locomotion_speed(Motion& motion, const Rig& rig, float speed);

// One tick of steering after root motion moved the entity: layer 0's blend ramps towards the
// commanded speed (at most 4 x the rig's fastest gait's ground speed per second per second,
// weights and rate in place); move turns by turn_rate * dt;
// move_to turns towards its target (at most kMaxTurnRate * dt) and, within the arrival radius
// (twice the turning radius speed / kMaxTurnRate, at least one tick's travel), takes the next
// queued waypoint or stands (idle). No allocation.
void step_locomotion(EntityState& state, const Rig& rig, int64_t dt_us);

}  // namespace posecast::sim
