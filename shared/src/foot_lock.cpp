// Foot locking of in-place clips (root_motion_extraction.h, lock_planted_feet): the root-motion
// joint's translation keys resampled with the stride's uneven part added along its forward
// direction, so that at a steady ground speed the planted foot stays still.

#include <cmath>

#include "posecast/root_motion_extraction.h"
#include "clip_loop_samples.h"
#include "root_joint_space.h"

namespace posecast {

namespace {

bool animates_an_ancestor(const Rig& rig, const Clip& clip, int root) {
  for (int n = rig.skeleton.parents[static_cast<std::size_t>(root)]; n != kNoParent;
       n = rig.skeleton.parents[static_cast<std::size_t>(n)])
    for (const Track& track : clip.tracks)
      if (track.node == n) return true;
  return false;
}

// The root's local translation at each of the stride's sample times (empty when a sample fails).
std::vector<glm::vec3> sample_root_translation(const Rig& rig, const Clip& clip, int root) {
  std::vector<glm::vec3> out;
  const bool ok = detail::for_each_loop_pose(rig, clip, [&](std::span<const Transform> locals, std::span<const glm::mat4>) {
    out.push_back(locals[static_cast<std::size_t>(root)].translation);
  });
  return ok ? out : std::vector<glm::vec3>{};
}

// A stride track's uneven part at sample i: the track less its steady part.
double uneven_part(const std::vector<double>& track, std::size_t i) {
  const double n = static_cast<double>(track.size() - 1);
  return track[i] - track.back() * (static_cast<double>(i) / n);
}

}  // namespace

bool lock_planted_feet(Rig& rig, std::size_t clip_index, const FootStride& stride, float tolerance) {
  const int root = rig.motion_config.root_node;
  if (root < 0 || clip_index >= rig.clips.size()) return false;
  if (stride.advance.size() != static_cast<std::size_t>(kFootSamplesPerLoop) + 1 ||
      stride.sideways.size() != stride.advance.size())
    return false;
  Clip& clip = rig.clips[clip_index];
  const int t = find_track(clip, root, TrackTarget::kTranslation);
  if (t < 0 || clip.tracks[static_cast<std::size_t>(t)].interpolation != Interpolation::kLinear ||
      animates_an_ancestor(rig, clip, root) || !rig.skeleton.validate() || !clip.validate(rig.skeleton))
    return false;
  double largest = 0.0;
  for (std::size_t i = 0; i < stride.advance.size(); ++i)
    largest = std::fmax(largest, std::fmax(std::fabs(uneven_part(stride.advance, i)),
                                           std::fabs(uneven_part(stride.sideways, i))));
  if (!(largest > static_cast<double>(tolerance))) return false;
  const std::vector<glm::vec3> translations = sample_root_translation(rig, clip, root);
  if (translations.size() != stride.advance.size()) return false;
  const ParentSpace space = parent_space(rig.skeleton, root);
  Track& track = clip.tracks[static_cast<std::size_t>(t)];
  // New keys at the end of the clip's arrays; the old ones are left unused.
  track.times_offset = static_cast<uint32_t>(clip.times.size());
  track.values_offset = static_cast<uint32_t>(clip.values.size());
  track.key_count = static_cast<uint32_t>(translations.size());
  for (std::size_t i = 0; i < translations.size(); ++i) {
    const bool last = i + 1 == translations.size();
    const double time_us = static_cast<double>(clip.duration_us * static_cast<int64_t>(i) / kFootSamplesPerLoop);
    clip.times.push_back(last ? clip.duration_seconds : static_cast<float>(time_us / 1e6));
    const double ahead = uneven_part(stride.advance, i), aside = uneven_part(stride.sideways, i);
    glm::vec3 model = affine_point(space.to_model, translations[i]);
    model.x += static_cast<float>(stride.forward_x * ahead + stride.forward_z * aside);
    model.z += static_cast<float>(stride.forward_z * ahead - stride.forward_x * aside);
    const glm::vec3 local = affine_point(space.from_model, model);
    clip.values.insert(clip.values.end(), {local.x, local.y, local.z});
  }
  return true;
}

}  // namespace posecast
