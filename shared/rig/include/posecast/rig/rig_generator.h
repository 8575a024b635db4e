#pragma once
// The project's own generated rig: a skinned glTF 2.0 creature built from simple shapes, used as
// the demo's default model and as the scale test for benchmarks (any joint count 2..512).
// Output is deterministic: the same options give the same bytes on every machine.

#include <cstdint>
#include <vector>

#include "posecast/result.h"

namespace posecast::rig {

inline constexpr uint32_t kMinJoints = 2;
inline constexpr uint32_t kMaxJoints = 512;

struct RigOptions {
  uint32_t joints = 24;  // kMinJoints..kMaxJoints, exactly this many skin joints
  // True: "walk" and "run" travel forwards (+Z), their hips carried so the stance toe stays
  // planted (root motion, docs/movement.md). False: they walk in place.
  bool travelling_gaits = false;
};

// A binary glTF (.glb) holding one skinned mesh with a base colour, one skin of
// `options.joints` joints, and the clips: "idle", "walk", "run" (walk and run share cycle phase:
// same normalised foot-contact times, so they blend and crossfade by normalised time),
// "wave" (upper body only, for additive/masked layers), "step_pose" (STEP interpolation) and
// "sway_cubic" (CUBICSPLINE). Fails only for a joint count out of range.
Result<std::vector<uint8_t>> generate_rig_glb(const RigOptions& options);


}  // namespace posecast::rig
