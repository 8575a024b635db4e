// Ground speed of an in-place clip from its feet (root_motion_extraction.h): a planted foot
// stays still on the ground when the character moves forwards as fast as the foot moves
// backwards in the clip, so that speed is the one at which a commanded velocity is matched.

#include <cmath>

#include "posecast/local_to_model.h"
#include "posecast/root_motion_extraction.h"
#include "posecast/sampling.h"

namespace posecast {

namespace {

// Model-space positions of `feet` at kFootSamplesPerLoop + 1 evenly spaced times, the loop's
// start and end included: [sample][foot].
std::vector<std::vector<glm::vec3>> sample_feet(const Rig& rig, const Clip& clip, const std::vector<uint16_t>& feet) {
  std::vector<Transform> locals(rig.skeleton.node_count());
  std::vector<glm::mat4> models(rig.skeleton.node_count());
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  std::vector<std::vector<glm::vec3>> out;
  for (int i = 0; i <= kFootSamplesPerLoop; ++i) {
    SampleJob sample;
    sample.skeleton = &rig.skeleton;
    sample.clip = &clip;
    sample.time_us = clip.duration_us * i / kFootSamplesPerLoop;
    sample.cursor = cursor;
    sample.output = locals;
    sample.assets_validated = true;  // checked once by foot_ground_speed
    LocalToModelJob to_model;
    to_model.skeleton = &rig.skeleton;
    to_model.locals = locals;
    to_model.models = models;
    to_model.assets_validated = true;
    if (!sample.Run() || !to_model.Run()) return {};
    std::vector<glm::vec3>& row = out.emplace_back();
    for (uint16_t f : feet) row.push_back(glm::vec3(models[f][3]));
  }
  return out;
}

}  // namespace

float foot_ground_speed(const Rig& rig, std::size_t clip_index) {
  const std::vector<uint16_t>& feet = rig.motion_config.foot_nodes;
  if (feet.empty() || clip_index >= rig.clips.size()) return 0.0f;
  const Clip& clip = rig.clips[clip_index];
  if (clip.duration_us <= 0 || !rig.skeleton.validate() || !clip.validate(rig.skeleton)) return 0.0f;
  const std::vector<std::vector<glm::vec3>> samples = sample_feet(rig, clip, feet);
  if (samples.empty()) return 0.0f;
  const std::size_t n = samples.size();
  double moved_x = 0.0, moved_z = 0.0;
  int64_t planted_steps = 0;
  for (std::size_t f = 0; f < feet.size(); ++f) {
    float low = samples[0][f].y, high = samples[0][f].y;
    for (const auto& row : samples) low = std::fmin(low, row[f].y), high = std::fmax(high, row[f].y);
    const float contact = low + kFootContactBand * (high - low);
    // Steps between consecutive samples with the foot planted at both ends (not across the
    // loop's end: a clip that carries its root does not end where it starts).
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const glm::vec3& a = samples[i][f];
      const glm::vec3& b = samples[i + 1][f];
      if (a.y > contact || b.y > contact) continue;
      moved_x += static_cast<double>(b.x - a.x);
      moved_z += static_cast<double>(b.z - a.z);
      ++planted_steps;
    }
  }
  if (planted_steps == 0) return 0.0f;
  const double seconds = static_cast<double>(planted_steps) * static_cast<double>(clip.duration_us) / 1e6 /
                         static_cast<double>(n - 1);
  return static_cast<float>(std::sqrt(moved_x * moved_x + moved_z * moved_z) / seconds);
}

}  // namespace posecast
