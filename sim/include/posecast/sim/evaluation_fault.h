#pragma once
// A test seam: a World told to (WorldOptions::fault) flips one bit of one entity's evaluation
// or state, to prove that a recording's verification catches such a divergence (tests
// VerifyFault.*). No product sets it; a World without one pays a null check per batch.

#include <cstdint>

#include "posecast/sim/animation_state.h"

namespace posecast::sim {

struct EvaluationFault {
  enum class Target : uint8_t {
    // Every tick from `tick` on, bit `bit % 32` of float `bit / 32` (column-major, joint after
    // joint) of the entity's palette is flipped after evaluation: an evaluation that differs
    // (another compiler or CPU), while the state stays the same.
    kPalette,
    // Once, at `tick` after the entity advanced: bit `bit % 64` of layer 0's first clip phase
    // (of root.x's bits, `bit % 32`, when the entity has no layer). The state stays diverged.
    kState,
  };
  Target target = Target::kPalette;
  EntityId entity = 0;
  uint64_t tick = 0;
  uint32_t bit = 0;
};

}  // namespace posecast::sim
