#pragma once
// Root-motion extraction at load: turns each clip's horizontal root translation and yaw into a
// RootMotionTrack (root_motion.h) and, for clips that travel, rewrites the root's keys so the
// pose keeps the root in place (docs/movement.md). The importer runs it for every rig; tests
// and tools may run it on rigs they build. Load-time only: allocates, samples the clips.

#include <cstddef>
#include <string>
#include <vector>

#include "posecast/model.h"

namespace posecast {

// A foot is in contact (planted) while its height is within this fraction of its height range
// over the clip above its lowest point.
inline constexpr float kFootContactBand = 0.1f;
// Samples per loop when a clip's feet are measured (foot_ground_speed).
inline constexpr int kFootSamplesPerLoop = 240;

// Fills rig.root_motion (one track per clip) from rig.motion_config, rewriting the root
// translation and rotation keys of travelling clips: horizontal position and yaw held at their
// clip-time-0 values, vertical motion and the other rotation axes kept. With the config's
// foot_lock, the locomotion's in-place walk and run clips whose feet cover at least the travel
// distance over a loop are foot-locked (lock_planted_feet) and their ground speed is the
// stride's. Call after the clips
// are bound and before their derived data (Clip::derive_*) is built. A clip stays in place
// (travels = false, pose untouched, ground speed from the feet) when it does not move its root
// past the travel threshold, or with a warning ("<file>: animations[c] '<name>': ...") when its
// root keys are CUBICSPLINE or an ancestor of the root joint is animated.
void extract_root_motion(Rig& rig, const std::string& file, std::vector<std::string>& warnings);

// An in-place clip's stride as its planted feet (rig.motion_config.foot_nodes) measure it, at
// kFootSamplesPerLoop + 1 evenly spaced times of one loop (kFootContactBand says planted).
// `forward`: the unit model-space XZ direction the character walks, against the planted feet's
// summed motion. advance[i]: how far along it the character must have moved since time 0 at
// sample i for the planted foot to stay still: per step, the mean of the feet planted at both
// ends; a step with none (a run's flight) at the mean planted step. sideways[i]: the same to
// the character's side (+X when forward is +Z), a step with no foot planted adding nothing.
// Empty when the rig has no feet, the clip has no length, or no foot plants and moves.
// Deterministic.
struct FootStride {
  float planted_speed = 0.0f;  // foot_ground_speed
  double forward_x = 0.0, forward_z = 0.0;
  std::vector<double> advance;   // kFootSamplesPerLoop + 1 values, advance[0] = 0; or empty
  std::vector<double> sideways;  // as many, sideways[0] = 0
};
FootStride foot_stride(const Rig& rig, std::size_t clip_index);

// The ground speed of clip `clip_index` from its feet, at playback speed 1: the length of the
// feet's mean horizontal model-space velocity while planted (both ends of a step). 0 when the
// stride is empty. A foot-locked clip's ground speed is its stride's advance over one loop
// divided by the loop's length, which its locked feet then move back at.
float foot_ground_speed(const Rig& rig, std::size_t clip_index);

// Foot locking. A commanded velocity moves the character at a steady speed, but a clip's
// planted foot moves back unevenly (a quadruped's hind foot pauses, then sweeps), so at any
// steady speed it slides. This rewrites the keys of the root-motion joint's translation track
// of in-place clip `clip_index` so the root moves by the stride's uneven part, forward
// advance(t) - ground_speed * t and sideways the same of the sideways track (periodic, zero at
// the loop's ends): the planted foot then moves straight back at exactly the ground speed, and a character moved at the commanded speed with the clip
// at rate speed / ground_speed keeps it still. The track becomes kFootSamplesPerLoop + 1
// LINEAR keys over the loop (the root's other motion resampled there). Nothing is rewritten
// (false) when the rig has no root-motion joint, the clip has no LINEAR translation track on
// it or animates an ancestor of it, or no key would move by more than `tolerance` units.
// Call before the clip's derived data is built. Deterministic.
bool lock_planted_feet(Rig& rig, std::size_t clip_index, const FootStride& stride, float tolerance);

// Leg locking, after lock_planted_feet: the hips' surge keeps the planted feet's mean still, but
// two feet down at once (a quadruped's hind pair) still slide against each other. This holds
// each planted foot (rig.motion_config.foot_nodes, kFootContactBand) where it touched down
// while the character advances +Z at `ground_speed` (units per second of clip time): per
// sample of the loop, a two-bone bend of the foot's upper and lower leg moves its ankle by the
// foot's drift, the ankle keeping its model-space rotation; in the air the correction fades
// linearly from the lift-off's to none at the next touch-down. The upper leg, lower leg and
// ankle rotation tracks become kFootSamplesPerLoop + 1 LINEAR keys. A foot is left alone when
// those three joints lack a LINEAR rotation track or the foot never lifts. Returns whether any
// leg was rewritten. Call before the clip's derived data is built. Deterministic (square roots
// only).
bool lock_planted_legs(Rig& rig, std::size_t clip_index, float ground_speed);

}  // namespace posecast
