#pragma once
// Pose blending jobs: weighted average of poses, override layers and additive layers.
//
// All three work on local TRS poses (one Transform per skeleton node, as SampleJob writes them)
// and use only +, -, *, / and sqrt in a fixed order (det_math.h), so they give the same bits on
// every compiler and CPU. Like the other jobs they hold non-owning spans, check their setup in
// Validate() and never allocate in Run().

#include <span>

#include "posecast/transform.h"

namespace posecast {

// One pose in a weighted blend.
struct BlendInput {
  std::span<const Transform> pose;  // node count entries
  float weight = 0.0f;              // finite, >= 0
};

// output = the weighted average of the inputs:
//   translation and scale: sum of (weight / total) * value, in input order;
//   rotation: the same weighted sum of quaternions, each first flipped to the hemisphere of the
//   first contributing input's rotation (shortest path), then normalised.
// Inputs with weight 0 are skipped. When exactly one input has a non-zero weight, the output is
// that pose copied bit for bit (a crossfade's ends and single-clip "blends" are exact). When no
// input has a weight, the output is `rest`.
struct BlendJob {
  std::span<const BlendInput> inputs;  // any count; poses must not alias `output`
  std::span<const Transform> rest;     // node count entries
  std::span<Transform> output;         // node count entries, written

  // Sizes agree, every weight is finite and >= 0.
  bool Validate() const;
  // Returns false (writing nothing) when Validate() fails. Never allocates.
  bool Run() const;
};

// In place: pose[n] = mix(pose[n], layer[n], t) with t = weight * mask[n] (mask empty: 1),
// translation and scale lerped, rotation nlerped along the shortest path (det_nlerp).
// t <= 0 leaves the node as it is, t >= 1 copies the layer's node exactly.
struct OverrideBlendJob {
  std::span<Transform> pose;          // node count entries, read and written
  std::span<const Transform> layer;   // node count entries
  float weight = 1.0f;                // finite
  std::span<const float> mask;        // empty, or node count finite entries (per-node weights)

  bool Validate() const;
  bool Run() const;
};

// In place: adds the difference between `additive` and `reference` to `pose`, per node, scaled
// by t = weight * mask[n] (mask empty: 1):
//   translation += t * (additive.t - reference.t)
//   rotation     = rotation * nlerp(identity, conj(reference.r) * additive.r, t), normalised
//   scale       *= 1 + t * (additive.s / reference.s - 1)   (a zero reference scale counts as 1)
// A part (translation, rotation or scale) whose additive value equals its reference is not
// applied, so an additive pose equal to its reference leaves the pose bit for bit unchanged.
struct AdditiveBlendJob {
  std::span<Transform> pose;              // node count entries, read and written
  std::span<const Transform> additive;    // node count entries
  std::span<const Transform> reference;   // node count entries
  float weight = 1.0f;                    // finite
  std::span<const float> mask;            // empty, or node count finite entries

  bool Validate() const;
  bool Run() const;
};

}  // namespace posecast
