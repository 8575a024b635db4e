#include "rig_clips.h"

#include <functional>

#include "rig_gait_travel.h"
#include "rig_motion.h"

namespace posecast::rig::detail {

namespace {

// Key k of K over `duration`: k/K is exact in double and (K/K) * duration == duration, so the
// last key lands exactly on the clip's length.
std::vector<float> key_times(int key_intervals, double duration) {
  std::vector<float> times;
  for (int k = 0; k <= key_intervals; ++k)
    times.push_back(static_cast<float>(static_cast<double>(k) / key_intervals * duration));
  return times;
}

void push(std::vector<float>& out, Vec3 v) {
  out.insert(out.end(), {static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z)});
}
void push(std::vector<float>& out, Quat q) {
  out.insert(out.end(), {static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z),
                         static_cast<float>(q.w)});
}

Vec3 rest_translation(const RigJoint& joint) {
  return {static_cast<double>(joint.translation[0]), static_cast<double>(joint.translation[1]),
          static_cast<double>(joint.translation[2])};
}

// Closes the loop: appends a copy of the first key's `floats_per_key` values.
void repeat_first_key(std::vector<float>& values, std::size_t floats_per_key) {
  for (std::size_t i = 0; i < floats_per_key; ++i) values.push_back(values[i]);
}

using MotionAtKey = std::function<JointMotion(const RigJoint&, int key)>;

// A LINEAR or STEP clip of `key_intervals` intervals; key k samples `motion` at key k and the
// last key repeats key 0. A joint gets a track for what its motion at key 0 says it animates.
RigClip sampled_clip(const RigLayout& layout, std::string name, ClipInterpolation interpolation,
                     double duration, int key_intervals, const MotionAtKey& motion) {
  RigClip clip;
  clip.name = std::move(name);
  clip.interpolation = interpolation;
  clip.times = key_times(key_intervals, duration);
  clip.duration_seconds = clip.times.back();
  for (std::size_t j = 0; j < layout.joints.size(); ++j) {
    const RigJoint& joint = layout.joints[j];
    const JointMotion first = motion(joint, 0);
    ClipTrack translation{static_cast<uint16_t>(j), ClipPath::kTranslation, {}};
    ClipTrack rotation{static_cast<uint16_t>(j), ClipPath::kRotation, {}};
    for (int k = 0; k < key_intervals; ++k) {
      const JointMotion m = k == 0 ? first : motion(joint, k);
      if (first.translates) push(translation.values, rest_translation(joint) + m.offset);
      if (first.rotates) push(rotation.values, euler_degrees(m.euler.pitch, m.euler.yaw, m.euler.roll));
    }
    if (first.translates) {
      repeat_first_key(translation.values, 3);
      clip.tracks.push_back(std::move(translation));
    }
    if (first.rotates) {
      repeat_first_key(rotation.values, 4);
      clip.tracks.push_back(std::move(rotation));
    }
  }
  return clip;
}

RigClip periodic_clip(const RigLayout& layout, std::string name, double duration, int key_intervals,
                      const std::function<JointMotion(const RigJoint&, double)>& motion) {
  return sampled_clip(layout, std::move(name), ClipInterpolation::kLinear, duration, key_intervals,
                      [&](const RigJoint& joint, int k) {
                        return motion(joint, static_cast<double>(k) / key_intervals);
                      });
}

// A gait: in place, or (`travelling`) with the hips (the root, joint 0) carried forwards by
// gait_root_travel, so the clip travels a stride per loop and its last key is its first
// moved by that stride.
RigClip gait_clip(const RigLayout& layout, std::string name, double duration, int key_intervals, Gait gait,
                  bool travelling) {
  RigClip clip = periodic_clip(layout, std::move(name), duration, key_intervals,
                               [gait](const RigJoint& j, double p) { return gait_motion(j, p, gait); });
  // The feet strike at normalised time 0 (left) and 0.5 (right): docs/events.md.
  clip.markers = {RigMarker{"footstep_l", 0.0f}, RigMarker{"footstep_r", static_cast<float>(duration * 0.5)}};
  if (!travelling) return clip;
  const std::vector<Vec3> travel = gait_root_travel(gait, key_intervals);
  for (ClipTrack& track : clip.tracks) {
    if (track.joint != 0 || track.path != ClipPath::kTranslation) continue;
    const Vec3 rest = rest_translation(layout.joints[0]);
    for (std::size_t k = 0; k < travel.size(); ++k) {
      const JointMotion m = gait_motion(layout.joints[0], static_cast<double>(k % (travel.size() - 1)) /
                                                              key_intervals, gait);
      const Vec3 at = rest + m.offset + travel[k];
      track.values[3 * k] = static_cast<float>(at.x);
      track.values[3 * k + 1] = static_cast<float>(at.y);
      track.values[3 * k + 2] = static_cast<float>(at.z);
    }
  }
  return clip;
}

// A CUBICSPLINE clip from single-axis rotations and translation offsets given as Waves, with
// exact tangents (derivatives per second).
RigClip cubic_clip(const RigLayout& layout, std::string name, double duration, int key_intervals) {
  RigClip clip;
  clip.name = std::move(name);
  clip.interpolation = ClipInterpolation::kCubicSpline;
  clip.times = key_times(key_intervals, duration);
  clip.duration_seconds = clip.times.back();
  const double per_second = 1.0 / duration;  // d(phase)/dt
  for (std::size_t j = 0; j < layout.joints.size(); ++j) {
    const RigJoint& joint = layout.joints[j];
    const CubicMotion m = sway_motion(joint);
    ClipTrack translation{static_cast<uint16_t>(j), ClipPath::kTranslation, {}};
    ClipTrack rotation{static_cast<uint16_t>(j), ClipPath::kRotation, {}};
    for (int k = 0; k < key_intervals; ++k) {
      const double p = static_cast<double>(k) / key_intervals;
      if (m.translates) {
        const Vec3 tangent{m.offset_x.derivative(p) * per_second, m.offset_y.derivative(p) * per_second,
                           m.offset_z.derivative(p) * per_second};
        const Vec3 value =
            rest_translation(joint) + Vec3{m.offset_x.value(p), m.offset_y.value(p), m.offset_z.value(p)};
        push(translation.values, tangent);
        push(translation.values, value);
        push(translation.values, tangent);
      }
      if (m.rotates) {
        // q(theta) = (axis sin(theta/2), cos(theta/2)); dq/dt = (axis cos, -sin)(theta/2) * theta'/2.
        const double half_turns = m.angle.value(p) / 720.0;
        const double sin_half = sin_turns(half_turns), cos_half = cos_turns(half_turns);
        const double rate = 0.5 * (m.angle.derivative(p) * (kPi / 180.0)) * per_second;
        const Quat tangent{m.axis.x * cos_half * rate, m.axis.y * cos_half * rate, m.axis.z * cos_half * rate,
                           -sin_half * rate};
        const Quat value{m.axis.x * sin_half, m.axis.y * sin_half, m.axis.z * sin_half, cos_half};
        push(rotation.values, tangent);
        push(rotation.values, value);
        push(rotation.values, tangent);
      }
    }
    if (m.translates) {
      repeat_first_key(translation.values, 9);
      clip.tracks.push_back(std::move(translation));
    }
    if (m.rotates) {
      repeat_first_key(rotation.values, 12);
      clip.tracks.push_back(std::move(rotation));
    }
  }
  return clip;
}

}  // namespace

std::vector<RigClip> build_rig_clips(const RigLayout& layout, bool travelling_gaits) {
  std::vector<RigClip> clips;
  clips.push_back(periodic_clip(layout, "idle", 3.0, 30, idle_motion));
  // walk and run: same key count and the same phase function, different lengths, so their keys
  // sit at the same normalised times.
  // walk and run: same key count and the same phase function, different lengths, so their keys
  // sit at the same normalised times.
  clips.push_back(gait_clip(layout, "walk", 1.0, 24, Gait::kWalk, travelling_gaits));
  clips.push_back(gait_clip(layout, "run", 0.7, 24, Gait::kRun, travelling_gaits));
  clips.push_back(periodic_clip(layout, "wave", 1.6, 32, wave_motion));
  clips.push_back(sampled_clip(layout, "step_pose", ClipInterpolation::kStep, 2.0, kStepPoseCount,
                               [](const RigJoint& j, int k) { return step_pose_motion(j, k); }));
  clips.push_back(cubic_clip(layout, "sway_cubic", 2.0, 8));
  return clips;
}

}  // namespace posecast::rig::detail
