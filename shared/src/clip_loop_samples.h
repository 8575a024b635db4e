#pragma once
// Internal to shared/: a clip's poses at the evenly spaced times of one loop and its feet's
// contacts there, which the foot measures (foot_ground_speed.cpp) and foot and leg locking
// (foot_lock.cpp, leg_lock.cpp) share. Load-time helpers: they allocate.

#include <functional>
#include <span>
#include <vector>

#include <glm/mat4x4.hpp>

#include "posecast/model.h"

namespace posecast::detail {

// Calls `visit` with the clip's local and model-space pose at kFootSamplesPerLoop + 1 evenly
// spaced times in order, the loop's start and end included (spans valid during the call).
// False when a sample fails (the caller validated rig and clip).
using LoopPoseVisitor = std::function<void(std::span<const Transform> locals, std::span<const glm::mat4> models)>;
bool for_each_loop_pose(const Rig& rig, const Clip& clip, const LoopPoseVisitor& visit);

// Every pose for_each_loop_pose visits, kept: locals[sample][node], models[sample][node].
// Empty when a sample fails.
struct LoopPoses {
  std::vector<std::vector<Transform>> locals;
  std::vector<std::vector<glm::mat4>> models;
};
LoopPoses sample_loop_poses(const Rig& rig, const Clip& clip);

// Model-space positions of `feet` at the loop's samples: [sample][foot]; the first samples
// them (empty when a sample fails), the second reads them from kept poses.
std::vector<std::vector<glm::vec3>> foot_positions(const Rig& rig, const Clip& clip, const std::vector<uint16_t>& feet);
std::vector<std::vector<glm::vec3>> foot_positions(const LoopPoses& poses, const std::vector<uint16_t>& feet);

// Per foot, whether it is planted at each sample: its height within kFootContactBand of its
// height range above its lowest point. [foot][sample].
std::vector<std::vector<bool>> planted_samples(const std::vector<std::vector<glm::vec3>>& samples, std::size_t feet);

}  // namespace posecast::detail
