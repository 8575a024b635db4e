#pragma once
// The generated rig's animation clips as key arrays ready to write (private to shared/rig).
//
// Every clip loops seamlessly: its last key repeats its first (values and, for CUBICSPLINE,
// tangents). Key times start at 0, are strictly increasing and are shared by all tracks of a
// clip. Rotations are unit quaternions (x, y, z, w).

#include <cstdint>
#include <string>
#include <vector>

#include "rig_layout.h"

namespace posecast::rig::detail {

enum class ClipInterpolation : uint8_t { kLinear, kStep, kCubicSpline };
enum class ClipPath : uint8_t { kTranslation, kRotation };

struct ClipTrack {
  uint16_t joint = 0;  // index into RigLayout::joints (= skin joint index)
  ClipPath path = ClipPath::kRotation;
  // Per key: 3 floats (translation) or 4 (rotation x, y, z, w). CUBICSPLINE: three elements per
  // key in glTF order (in-tangent, value, out-tangent), tangents per second.
  std::vector<float> values;
};

// A named moment of a clip, written to the animation's extras.posecast_events (docs/events.md).
struct RigMarker {
  std::string name;
  float time_seconds = 0.0f;
};

struct RigClip {
  std::string name;
  std::vector<RigMarker> markers;
  ClipInterpolation interpolation = ClipInterpolation::kLinear;
  float duration_seconds = 0.0f;  // == times.back()
  std::vector<float> times;
  std::vector<ClipTrack> tracks;  // sorted by joint, translation before rotation
};

// The clips in file order: idle, walk, run, wave, step_pose, sway_cubic.
//  - walk (1.0 s) and run (0.7 s) walk in place or, with travelling gaits, travel forwards
//    (+Z) with their root, the hips, carried so the stance toe stays planted
//    (rig_gait_travel.h); they share their phase: the left foot
//    strikes at normalised time 0
//    and the right at 0.5, so they blend by normalised time; every joint is animated in both.
//    Both mark those footsteps: "footstep_l" at 0 and "footstep_r" at half the cycle.
//  - wave animates only upper-body joints (the spine and what hangs from it): the right arm.
//  - step_pose holds four poses (STEP); sway_cubic is CUBICSPLINE with non-zero tangents.
// `travelling_gaits`: walk and run carry their hips forwards (gait_root_travel).
std::vector<RigClip> build_rig_clips(const RigLayout& layout, bool travelling_gaits);

}  // namespace posecast::rig::detail
