#pragma once
// How far the generated rig's walk and run carry it (private to shared/rig): the hips travel
// that keeps the stance foot planted, so the clips travel with their root and no foot slides.

#include <vector>

#include "rig_math.h"
#include "rig_motion.h"

namespace posecast::rig::detail {

// The hips' horizontal travel (x, 0, z) at key phases k / key_intervals, k = 0..key_intervals,
// relative to phase 0: the opposite of the stance toe's horizontal motion in the in-place gait
// (left stance on phases [0, 0.5), right on [0.5, 1), each from when its toe is the lower of
// the two), integrated over fine steps. Computed on
// the full humanoid core whatever the rig's joint count, so every gen-rig:N travels alike.
std::vector<Vec3> gait_root_travel(Gait gait, int key_intervals);

}  // namespace posecast::rig::detail
