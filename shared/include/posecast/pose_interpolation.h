#pragma once
// Interpolation between two local poses (one Transform per node), for a network client that
// renders between received snapshots.

#include <span>

#include "posecast/transform.h"

namespace posecast {

// output[i] = {det_lerp(a[i].translation, b[i].translation, t),
//              det_slerp(a[i].rotation, b[i].rotation, t),
//              det_lerp(a[i].scale, b[i].scale, t)}
// for every node, bit-identical to that scalar loop (det_math.h) on every compiler and CPU:
// the rotations go through the sampler's eight-lane slerp (bit-identical to det_slerp lane by
// lane; tests/netclient compare the two bit for bit). Never allocates.
struct InterpolatePosesJob {
  std::span<const Transform> a;  // node count entries
  std::span<const Transform> b;  // node count entries
  float t = 0.0f;                // finite; [0, 1] for an interpolation
  std::span<Transform> output;   // node count entries, written; may alias a or b exactly

  // Sizes agree and t is finite.
  bool Validate() const;
  // Returns false (writing nothing) when Validate() fails.
  bool Run() const;
};

}  // namespace posecast
