// Ground speed of an in-place clip from its feet (root_motion_extraction.h): a planted foot
// stays still on the ground when the character moves forwards as fast as the foot moves
// backwards in the clip, so that speed is the one at which a commanded velocity is matched.

#include <cmath>

#include "posecast/local_to_model.h"
#include "posecast/root_motion_extraction.h"
#include "posecast/sampling.h"
#include "clip_loop_samples.h"

namespace posecast {

namespace detail {

bool for_each_loop_pose(const Rig& rig, const Clip& clip, const LoopPoseVisitor& visit) {
  std::vector<Transform> locals(rig.skeleton.node_count());
  std::vector<glm::mat4> models(rig.skeleton.node_count());
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  for (int i = 0; i <= kFootSamplesPerLoop; ++i) {
    SampleJob sample;
    sample.skeleton = &rig.skeleton;
    sample.clip = &clip;
    sample.time_us = clip.duration_us * i / kFootSamplesPerLoop;
    sample.cursor = cursor;
    sample.output = locals;
    sample.assets_validated = true;  // checked once by the caller
    LocalToModelJob to_model;
    to_model.skeleton = &rig.skeleton;
    to_model.locals = locals;
    to_model.models = models;
    to_model.assets_validated = true;
    if (!sample.Run() || !to_model.Run()) return false;
    visit(locals, models);
  }
  return true;
}

LoopPoses sample_loop_poses(const Rig& rig, const Clip& clip) {
  LoopPoses out;
  const bool ok = for_each_loop_pose(rig, clip, [&](std::span<const Transform> locals, std::span<const glm::mat4> models) {
    out.locals.emplace_back(locals.begin(), locals.end());
    out.models.emplace_back(models.begin(), models.end());
  });
  return ok ? out : LoopPoses{};
}

std::vector<std::vector<glm::vec3>> foot_positions(const Rig& rig, const Clip& clip, const std::vector<uint16_t>& feet) {
  std::vector<std::vector<glm::vec3>> out;
  const bool ok = for_each_loop_pose(rig, clip, [&](std::span<const Transform>, std::span<const glm::mat4> models) {
    std::vector<glm::vec3>& row = out.emplace_back();
    for (uint16_t f : feet) row.push_back(glm::vec3(models[f][3]));
  });
  return ok ? out : std::vector<std::vector<glm::vec3>>{};
}

std::vector<std::vector<glm::vec3>> foot_positions(const LoopPoses& poses, const std::vector<uint16_t>& feet) {
  std::vector<std::vector<glm::vec3>> out;
  for (const std::vector<glm::mat4>& models : poses.models) {
    std::vector<glm::vec3>& row = out.emplace_back();
    for (uint16_t f : feet) row.push_back(glm::vec3(models[f][3]));
  }
  return out;
}

std::vector<std::vector<bool>> planted_samples(const std::vector<std::vector<glm::vec3>>& samples, std::size_t feet) {
  std::vector<std::vector<bool>> planted(feet);
  for (std::size_t f = 0; f < feet; ++f) {
    float low = samples[0][f].y, high = samples[0][f].y;
    for (const auto& row : samples) low = std::fmin(low, row[f].y), high = std::fmax(high, row[f].y);
    const float contact = low + kFootContactBand * (high - low);
    for (const auto& row : samples) planted[f].push_back(row[f].y <= contact);
  }
  return planted;
}

}  // namespace detail

FootStride foot_stride(const Rig& rig, std::size_t clip_index) {
  const std::vector<uint16_t>& feet = rig.motion_config.foot_nodes;
  if (feet.empty() || clip_index >= rig.clips.size()) return {};
  const Clip& clip = rig.clips[clip_index];
  if (clip.duration_us <= 0 || !rig.skeleton.validate() || !clip.validate(rig.skeleton)) return {};
  const std::vector<std::vector<glm::vec3>> samples =
      detail::foot_positions(rig, clip, feet);
  if (samples.empty()) return {};
  const std::vector<std::vector<bool>> planted = detail::planted_samples(samples, feet.size());
  const std::size_t steps = samples.size() - 1;
  // The direction the character walks: against the planted feet's summed motion. Steps count
  // with the foot planted at both ends, not across the loop's end (a clip that carries its
  // root does not end where it starts).
  double moved_x = 0.0, moved_z = 0.0;
  int64_t planted_steps = 0;
  for (std::size_t f = 0; f < feet.size(); ++f)
    for (std::size_t i = 0; i < steps; ++i) {
      if (!planted[f][i] || !planted[f][i + 1]) continue;
      moved_x += static_cast<double>(samples[i + 1][f].x - samples[i][f].x);
      moved_z += static_cast<double>(samples[i + 1][f].z - samples[i][f].z);
      ++planted_steps;
    }
  const double moved = std::sqrt(moved_x * moved_x + moved_z * moved_z);
  if (planted_steps == 0 || !(moved > 0.0)) return {};
  FootStride stride;
  const double planted_seconds =
      static_cast<double>(planted_steps) * static_cast<double>(clip.duration_us) / 1e6 / static_cast<double>(steps);
  stride.planted_speed = static_cast<float>(moved / planted_seconds);
  stride.forward_x = -moved_x / moved;
  stride.forward_z = -moved_z / moved;
  // Per step, how far forward and sideways the planted feet (their mean) move the character; a
  // step with no foot planted at both ends (a stride's flight) at the mean planted step.
  const double mean_step = moved / static_cast<double>(planted_steps);
  const double side_x = stride.forward_z, side_z = -stride.forward_x;
  stride.advance.assign(samples.size(), 0.0);
  stride.sideways.assign(samples.size(), 0.0);
  for (std::size_t i = 0; i < steps; ++i) {
    double ahead = 0.0, aside = 0.0;
    int count = 0;
    for (std::size_t f = 0; f < feet.size(); ++f) {
      if (!planted[f][i] || !planted[f][i + 1]) continue;
      const double dx = static_cast<double>(samples[i + 1][f].x - samples[i][f].x);
      const double dz = static_cast<double>(samples[i + 1][f].z - samples[i][f].z);
      ahead -= dx * stride.forward_x + dz * stride.forward_z;
      aside -= dx * side_x + dz * side_z;
      ++count;
    }
    stride.advance[i + 1] = stride.advance[i] + (count > 0 ? ahead / count : mean_step);
    stride.sideways[i + 1] = stride.sideways[i] + (count > 0 ? aside / count : 0.0);
  }
  return stride;
}

float foot_ground_speed(const Rig& rig, std::size_t clip_index) {
  return foot_stride(rig, clip_index).planted_speed;
}

}  // namespace posecast
