#include "rig_gait_travel.h"

#include "rig_layout.h"

namespace posecast::rig::detail {

namespace {

Vec3 rotate(Quat q, Vec3 v) {  // v + 2w (u x v) + 2 u x (u x v)
  const Vec3 u{q.x, q.y, q.z};
  const Vec3 t = cross(u, v) * 2.0;
  return v + t * q.w + cross(u, t);
}

Vec3 translation_of(const RigJoint& joint) {
  return {static_cast<double>(joint.translation[0]), static_cast<double>(joint.translation[1]),
          static_cast<double>(joint.translation[2])};
}

// The toe of one leg in the in-place gait at `phase`: hips -> thigh -> shin -> foot -> toe.
Vec3 toe_position(const RigLayout& core, int thigh, Gait gait, double phase) {
  const int chain[5] = {0, thigh, thigh + 1, thigh + 2, thigh + 3};
  const JointMotion hips = gait_motion(core.joints[0], phase, gait);
  Vec3 position = translation_of(core.joints[0]) + hips.offset;
  Quat rotation = euler_degrees(hips.euler.pitch, hips.euler.yaw, hips.euler.roll);
  for (int i = 1; i < 5; ++i) {
    const RigJoint& joint = core.joints[static_cast<std::size_t>(chain[i])];
    position = position + rotate(rotation, translation_of(joint));
    const JointMotion m = gait_motion(joint, phase, gait);
    rotation = rotation * euler_degrees(m.euler.pitch, m.euler.yaw, m.euler.roll);
  }
  return position;
}

}  // namespace

std::vector<Vec3> gait_root_travel(Gait gait, int key_intervals) {
  const RigLayout core = build_rig_layout(kCoreJointCount);
  const int left_thigh = core.find("thigh_l"), right_thigh = core.find("thigh_r");
  constexpr int kSteps = 64;  // integration steps per key interval
  // Phase 0 is the left heel strike: the right leg was in stance until then.
  int stance = right_thigh;
  std::vector<Vec3> travel{Vec3{}};
  Vec3 total;
  for (int k = 0; k < key_intervals; ++k) {
    for (int s = 0; s < kSteps; ++s) {
      const double step = static_cast<double>(k * kSteps + s);
      const double p0 = step / static_cast<double>(key_intervals * kSteps);
      const double p1 = (step + 1.0) / static_cast<double>(key_intervals * kSteps);
      // The leg whose stance the phase names takes over only once its toe is the lower: after
      // a heel strike the trailing toe stays down (and the striking one above it) for part of
      // a stride, and following the new stance leg at once would drag the trailing toe along
      // the ground. In a run's flight neither toe is down: the stance leg keeps the hips going.
      const int named = (p0 + p1) * 0.5 < 0.5 ? left_thigh : right_thigh;
      const Vec3 named0 = toe_position(core, named, gait, p0), named1 = toe_position(core, named, gait, p1);
      const Vec3 held0 = toe_position(core, stance, gait, p0), held1 = toe_position(core, stance, gait, p1);
      Vec3 moved = held1 - held0;
      if (named != stance && named0.y + named1.y <= held0.y + held1.y) {
        stance = named;
        moved = named1 - named0;
      }
      total = total - Vec3{moved.x, 0.0, moved.z};
    }
    travel.push_back(total);
  }
  return travel;
}

}  // namespace posecast::rig::detail
