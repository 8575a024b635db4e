#pragma once
// What each clip does to each joint, as functions of the clip's phase in [0, 1) (private to
// shared/rig). rig_clips.cpp samples them into keys. Angles in degrees (see euler_degrees for
// the signs), offsets in metres added to the rest translation.

#include "rig_layout.h"
#include "rig_math.h"

namespace posecast::rig::detail {

struct Euler {
  double pitch = 0.0, yaw = 0.0, roll = 0.0;
};

// The motion of one joint at one phase. Whether a joint rotates or translates must not depend
// on the phase (it decides which tracks the clip has).
struct JointMotion {
  bool rotates = false;
  Euler euler;
  bool translates = false;
  Vec3 offset;
};

// base + amplitude * sin(2 pi (frequency * phase + shift)), with its derivative per unit phase.
// Integer frequencies keep a clip periodic in its phase.
struct Wave {
  double base = 0.0, amplitude = 0.0, frequency = 1.0, shift = 0.0;
  double value(double phase) const { return base + amplitude * sin_turns(frequency * phase + shift); }
  double derivative(double phase) const {
    return amplitude * (2.0 * kPi) * frequency * cos_turns(frequency * phase + shift);
  }
};

// For CUBICSPLINE: one rotation about a fixed axis, and a translation offset, each a Wave, so
// exact tangents follow.
struct CubicMotion {
  bool rotates = false;
  Vec3 axis{0.0, 0.0, 1.0};
  Wave angle;  // degrees
  bool translates = false;
  Wave offset_x, offset_y, offset_z;
};

enum class Gait : uint8_t { kWalk, kRun };

JointMotion idle_motion(const RigJoint& joint, double phase);
// Left foot contact at phase 0, right at 0.5, for both gaits.
JointMotion gait_motion(const RigJoint& joint, double phase, Gait gait);
// Only upper-body joints (RigJoint::upper_body) move.
JointMotion wave_motion(const RigJoint& joint, double phase);
// Pose `pose` in 0..kStepPoseCount-1 (pose 0 is the rest pose).
inline constexpr int kStepPoseCount = 4;
JointMotion step_pose_motion(const RigJoint& joint, int pose);
CubicMotion sway_motion(const RigJoint& joint);

}  // namespace posecast::rig::detail
