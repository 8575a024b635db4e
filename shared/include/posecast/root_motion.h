#pragma once
// Root motion: how a clip moves the character over the ground, taken out of the clip's pose at
// load (root_motion_extraction.h) and applied to the entity's root transform by the World.
//
// Conventions (glTF): Y up, the ground is the XZ plane, yaw is a rotation about +Y in radians
// (positive yaw turns +Z towards +X), distances in model units. A track is expressed in the
// clip's frame at clip time 0: the model's own axes. All of it is deterministic (+ - * / and
// det_math polynomials only), so every peer computes the same bits.

#include <cstdint>
#include <vector>

#include "posecast/rig_config.h"

namespace posecast {

// Motion of the character between two clip times, in the character's frame at the first time
// (x to its right-hand +X, z forward +Z), and the turn (radians, not wrapped).
struct RootMotionDelta {
  float dx = 0.0f;
  float dz = 0.0f;
  float dyaw = 0.0f;
};

// One clip's root motion (Rig::root_motion[c] belongs to Rig::clips[c]).
//
// For a travelling clip, samples at the root's key times: where the model origin must be (x, z)
// and how it must be turned (yaw, unwrapped) relative to clip time 0 so that the pose, whose
// root now stays where it was at time 0 horizontally and keeps its time-0 yaw, draws the root
// where the clip put it. Sample 0 is at time 0 with (0, 0, 0); the last is at duration_us.
// Between samples, linear interpolation. An in-place clip has no samples: zero motion.
struct RootMotionTrack {
  std::vector<int64_t> times_us;  // strictly increasing, first 0, last duration_us
  std::vector<float> x, z, yaw;   // one per time
  int64_t duration_us = 0;        // the clip's
  // True when the clip moves the root (its pose was rewritten); false for in-place clips.
  bool travels = false;
  bool turns = false;  // some yaw sample is not 0 (deltas are rotated only then)
  // Units per second at playback speed 1: the root's net displacement over one loop divided by
  // the loop's length for a travelling clip; for an in-place clip, the speed at which its
  // planted foot moves backwards (0 when it has no feet or they never plant).
  float ground_speed = 0.0f;
};

// The root's motion from clip time `from_us` to `to_us` (each clamped to [0, duration_us]).
// `looping` and to_us < from_us: through the loop's end, the tail (from_us .. end) then the
// head (0 .. to_us), never a jump back. Otherwise straight from one time to the other
// (backwards when to_us < from_us). At most one wrap per call: callers advance a clip by less
// than one loop per step (a call per step otherwise). Exact at the sample times; zero for an
// in-place clip. No allocation; two binary searches over the samples and, for a turning clip,
// one det_sin_cos.
RootMotionDelta root_motion_between(const RootMotionTrack& track, int64_t from_us, int64_t to_us,
                                    bool looping);

// `delta` rotated by `yaw` (radians) into the frame that yaw faces: how the World turns a
// clip-frame delta into world axes. Deterministic (det_sin_cos).
void rotate_by_yaw(float yaw, float dx, float dz, float& out_x, float& out_z);

// The same rotation from the yaw's sine and cosine (det_sin_cos of it), for a caller that keeps
// them while the yaw holds: rotate_by_yaw's bits exactly.
inline void rotate_by_sin_cos(float s, float c, float dx, float dz, float& out_x, float& out_z) {
  out_x = dx * c + dz * s;
  out_z = dz * c - dx * s;
}

}  // namespace posecast
