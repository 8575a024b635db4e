#pragma once
// Internal to shared/: a clip's poses at the evenly spaced times of one loop and its feet's
// contacts there, which the foot measures (foot_ground_speed.cpp) and foot and leg locking
// (foot_lock.cpp, leg_lock.cpp) share. Load-time helpers: they allocate.

#include <vector>

#include <glm/mat4x4.hpp>

#include "posecast/model.h"

namespace posecast::detail {

// The clip's local and model-space pose at kFootSamplesPerLoop + 1 evenly spaced times, the
// loop's start and end included: locals[sample][node], models[sample][node]. Empty when a
// sample fails (the caller validated rig and clip).
struct LoopPoses {
  std::vector<std::vector<Transform>> locals;
  std::vector<std::vector<glm::mat4>> models;
};
LoopPoses sample_loop_poses(const Rig& rig, const Clip& clip);

// Model-space positions of `feet` in `poses`: [sample][foot].
std::vector<std::vector<glm::vec3>> foot_positions(const LoopPoses& poses, const std::vector<uint16_t>& feet);

// Per foot, whether it is planted at each sample: its height within kFootContactBand of its
// height range above its lowest point. [foot][sample].
std::vector<std::vector<bool>> planted_samples(const std::vector<std::vector<glm::vec3>>& samples, std::size_t feet);

}  // namespace posecast::detail
