#include "posecast/root_motion_extraction.h"

#include <algorithm>
#include <cmath>

#include "posecast/det_math.h"
#include "posecast/sampling.h"
#include "root_joint_space.h"

namespace posecast {

namespace {

// Foot locking leaves a clip alone when no key would move by more than this fraction of the
// travel distance (rest size x travel threshold): its feet already plant at a steady speed.
constexpr float kFootLockTolerance = 1e-3f;

glm::quat conjugate(const glm::quat& q) { return glm::quat(q.w, -q.x, -q.y, -q.z); }

// The rotation about +Y in q (swing-twist: q = twist * swing, swing with no Y part), on the
// w >= 0 side; identity when q is a half turn about a horizontal axis (no defined twist).
glm::quat yaw_twist(const glm::quat& q) {
  const float sign = q.w < 0.0f ? -1.0f : 1.0f;
  const float w = q.w * sign, y = q.y * sign;
  const float length2 = w * w + y * y;
  if (!(length2 > 1e-12f)) return glm::quat(1.0f, 0.0f, 0.0f, 0.0f);
  const float inv = 1.0f / std::sqrt(length2);
  return glm::quat(w * inv, 0.0f, y * inv, 0.0f);
}

float twist_angle(const glm::quat& twist) { return 2.0f * det_atan2(twist.y, twist.w); }

// Why the clip's root cannot be extracted, or "" when it can.
std::string extraction_problem(const Rig& rig, const Clip& clip, int root, int translation, int rotation) {
  for (int n = rig.skeleton.parents[static_cast<std::size_t>(root)]; n != kNoParent;
       n = rig.skeleton.parents[static_cast<std::size_t>(n)])
    for (const Track& track : clip.tracks)
      if (track.node == n) return "an ancestor of the root-motion joint is animated; the clip stays in place";
  for (int t : {translation, rotation})
    if (t >= 0 && clip.tracks[static_cast<std::size_t>(t)].interpolation == Interpolation::kCubicSpline)
      return "the root-motion joint's keys are CUBICSPLINE; the clip stays in place";
  return "";
}

// Sample times: the root's key times in microseconds, with 0 and the clip's end.
std::vector<int64_t> sample_times(const Clip& clip, int translation, int rotation) {
  std::vector<int64_t> times{0, clip.duration_us};
  for (int t : {translation, rotation}) {
    if (t < 0) continue;
    const Track& track = clip.tracks[static_cast<std::size_t>(t)];
    for (uint32_t k = 0; k < track.key_count; ++k) {
      const double seconds = static_cast<double>(clip.times[track.times_offset + k]);
      times.push_back(std::clamp<int64_t>(std::llround(seconds * 1e6), 0, clip.duration_us));
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

// The root's model-space position and rotation at each sample time.
struct RootPath {
  std::vector<glm::vec3> positions;
  std::vector<glm::quat> rotations;
};

RootPath sample_root(const Rig& rig, const Clip& clip, int root, const ParentSpace& space,
                     const std::vector<int64_t>& times) {
  RootPath path;
  std::vector<Transform> locals(rig.skeleton.node_count());
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  for (int64_t t : times) {
    SampleJob job;
    job.skeleton = &rig.skeleton;
    job.clip = &clip;
    job.time_us = t;
    job.cursor = cursor;
    job.output = locals;
    job.assets_validated = true;
    (void)job.Run();  // inputs validated by the caller; sizes set above
    const Transform& local = locals[static_cast<std::size_t>(root)];
    path.positions.push_back(affine_point(space.to_model, local.translation));
    path.rotations.push_back(det_mul(space.rotation, local.rotation));
  }
  return path;
}

// The track from the root's path: yaw unwrapped relative to time 0, and the model origin's
// displacement that puts the held root (at its time-0 place, turned with the entity) on the path.
RootMotionTrack track_from_path(const Clip& clip, const std::vector<int64_t>& times, const RootPath& path) {
  RootMotionTrack track;
  track.duration_us = clip.duration_us;
  track.times_us = times;
  const float yaw0 = twist_angle(yaw_twist(path.rotations[0]));
  const glm::vec3 held = path.positions[0];
  float previous = 0.0f;
  for (std::size_t i = 0; i < times.size(); ++i) {
    float yaw = det_wrap_angle(twist_angle(yaw_twist(path.rotations[i])) - yaw0);
    // Unwrap: the nearest turn count to the previous sample's yaw.
    while (yaw - previous > kDetPi) yaw -= kDetTwoPi;
    while (yaw - previous < -kDetPi) yaw += kDetTwoPi;
    previous = yaw;
    float hx = held.x, hz = held.z;
    if (yaw != 0.0f) rotate_by_yaw(yaw, held.x, held.z, hx, hz);
    track.x.push_back(path.positions[i].x - hx);
    track.z.push_back(path.positions[i].z - hz);
    track.yaw.push_back(yaw);
    if (yaw != 0.0f) track.turns = true;
  }
  return track;
}

// Rewrites the root's keys: horizontal position held at `held` (model space), yaw held at the
// time-0 twist; vertical motion and swing kept.
void hold_root(Clip& clip, int translation, int rotation, const ParentSpace& space, const glm::vec3& held,
               const glm::quat& held_twist) {
  if (translation >= 0) {
    const Track& track = clip.tracks[static_cast<std::size_t>(translation)];
    for (uint32_t k = 0; k < track.key_count; ++k) {
      float* v = &clip.values[track.values_offset + 3u * k];
      const glm::vec3 model = affine_point(space.to_model, glm::vec3(v[0], v[1], v[2]));
      const glm::vec3 local = affine_point(space.from_model, glm::vec3(held.x, model.y, held.z));
      v[0] = local.x, v[1] = local.y, v[2] = local.z;
    }
  }
  if (rotation >= 0) {
    const Track& track = clip.tracks[static_cast<std::size_t>(rotation)];
    const glm::quat to_local = conjugate(space.rotation);
    for (uint32_t k = 0; k < track.key_count; ++k) {
      float* v = &clip.values[track.values_offset + 4u * k];
      const glm::quat model = det_mul(space.rotation, glm::quat(v[3], v[0], v[1], v[2]));
      const glm::quat swing = det_mul(conjugate(yaw_twist(model)), model);
      const glm::quat local = det_normalize(det_mul(to_local, det_mul(held_twist, swing)));
      v[0] = local.x, v[1] = local.y, v[2] = local.z, v[3] = local.w;
    }
  }
}

// The largest extent of the rest pose's joints: the scale of "travels".
float rest_size(const Skeleton& skeleton) {
  const std::vector<glm::mat4> models = rest_model_matrices(skeleton);
  glm::vec3 low(0.0f), high(0.0f);
  bool any = false;
  for (uint16_t j : skeleton.joint_nodes) {
    const glm::vec3 p(models[j][3]);
    low = any ? glm::min(low, p) : p;
    high = any ? glm::max(high, p) : p;
    any = true;
  }
  const glm::vec3 extent = high - low;
  return std::max(extent.x, std::max(extent.y, extent.z));
}

// The in-place track of a clip: no samples, ground speed from the feet. When `lock` and the
// clip is the locomotion's walk or run (the clips played at commanded speeds) and its feet
// cover at least `travel_distance` over a loop, the clip is foot-locked first. A clip whose
// root cannot be extracted is not locked either (`lock` false): the same reasons stop both.
RootMotionTrack in_place_track(Rig& rig, std::size_t c, bool lock, float travel_distance) {
  RootMotionTrack track;
  track.duration_us = rig.clips[c].duration_us;
  const FootStride stride = foot_stride(rig, c);
  const auto& roles = rig.motion_config.locomotion_clips;
  const bool gait = static_cast<int>(c) == roles[static_cast<std::size_t>(LocomotionRole::kWalk)] ||
                    static_cast<int>(c) == roles[static_cast<std::size_t>(LocomotionRole::kRun)];
  track.ground_speed = stride.planted_speed;
  if (lock && gait && rig.motion_config.foot_lock && !stride.advance.empty() &&
      stride.advance.back() >= static_cast<double>(travel_distance) &&
      lock_planted_feet(rig, c, stride, kFootLockTolerance * travel_distance)) {
    track.ground_speed =
        static_cast<float>(stride.advance.back() * 1e6 / static_cast<double>(track.duration_us));
    lock_planted_legs(rig, c, track.ground_speed);
  }
  return track;
}

}  // namespace

void extract_root_motion(Rig& rig, const std::string& file, std::vector<std::string>& warnings) {
  rig.root_motion.clear();
  const int root = rig.motion_config.root_node;
  const bool skeleton_ok = static_cast<bool>(rig.skeleton.validate());
  const float travel_distance = rig.motion_config.travel_threshold * rest_size(rig.skeleton);
  for (std::size_t c = 0; c < rig.clips.size(); ++c) {
    Clip& clip = rig.clips[c];
    // Invalid clips are reported by the importer's validation afterwards; nothing to extract.
    if (!skeleton_ok || !clip.validate(rig.skeleton) || clip.duration_us <= 0) {
      RootMotionTrack none;
      none.duration_us = clip.duration_us;
      rig.root_motion.push_back(std::move(none));
      continue;
    }
    const int translation = root < 0 ? -1 : find_track(clip, root, TrackTarget::kTranslation);
    const int rotation = root < 0 ? -1 : find_track(clip, root, TrackTarget::kRotation);
    if (translation < 0 && rotation < 0) {
      rig.root_motion.push_back(in_place_track(rig, c, true, travel_distance));
      continue;
    }
    if (const std::string problem = extraction_problem(rig, clip, root, translation, rotation); !problem.empty()) {
      warnings.push_back(file + ": animations[" + std::to_string(c) + "] '" + clip.name + "': " + problem);
      rig.root_motion.push_back(in_place_track(rig, c, false, travel_distance));
      continue;
    }
    const ParentSpace space = parent_space(rig.skeleton, root);
    const std::vector<int64_t> times = sample_times(clip, translation, rotation);
    const RootPath path = sample_root(rig, clip, root, space, times);
    RootMotionTrack track = track_from_path(clip, times, path);
    const float dx = track.x.back(), dz = track.z.back();
    const float distance = std::sqrt(dx * dx + dz * dz);
    const float turn = std::fabs(track.yaw.back());
    if (!(distance >= travel_distance) && !(turn >= 0.1f)) {
      rig.root_motion.push_back(in_place_track(rig, c, true, travel_distance));
      continue;
    }
    track.travels = true;
    track.ground_speed = static_cast<float>(static_cast<double>(distance) * 1e6 / static_cast<double>(clip.duration_us));
    hold_root(clip, translation, rotation, space, path.positions[0], yaw_twist(path.rotations[0]));
    rig.root_motion.push_back(std::move(track));
  }
}

}  // namespace posecast
