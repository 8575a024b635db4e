#pragma once
// Per-joint blending of local poses (node_count TRS each) for interpolation, extrapolation
// and the correction that hides a jump. Only + - * / sqrt (det_math.h): the same inputs give
// the same bits on every machine. Spans must all have the same size (callers guarantee it).

#include <span>

#include "posecast/transform.h"

namespace posecast::client {

enum class RotationBlend : uint8_t {
  kSlerp,  // det_slerp: constant angular speed (glTF LINEAR)
  kNlerp,  // det_nlerp: cheaper; differs from slerp by < 0.5 % of the angle for gaps < 30 deg
};

// out = a + (b - a) * t per joint (translation and scale lerp, rotation slerp/nlerp along the
// shortest path); t in [0, 1]. t == 0 copies `a` and t == 1 copies `b` exactly.
void interpolate_locals(std::span<const Transform> a, std::span<const Transform> b, float t,
                        RotationBlend blend, std::span<Transform> out);

// Constant-velocity continuation past `b`: out = b + (b - a) * s, s >= 0 in units of the
// a -> b interval. Rotations continue by the a -> b rotation scaled by s, as a normalised
// linear continuation of the shortest-path quaternions (exact in direction, slightly slow in
// angle for large steps: the error is below 1 % of the step for steps under 20 degrees).
void extrapolate_locals(std::span<const Transform> a, std::span<const Transform> b, float s,
                        std::span<Transform> out);

// The difference shown - target per joint, for a correction: translation and scale offsets,
// rotation delta = shown * conj(target) (so shown = delta * target).
void difference_locals(std::span<const Transform> shown, std::span<const Transform> target,
                       std::span<Transform> delta);

// out = target + delta * w per joint (rotation: nlerp(identity, delta, w) * target); w in
// [0, 1]. w == 0 copies target exactly.
void apply_correction(std::span<const Transform> target, std::span<const Transform> delta,
                      float w, std::span<Transform> out);

}  // namespace posecast::client
