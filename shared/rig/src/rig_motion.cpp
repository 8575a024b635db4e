#include "rig_motion.h"

#include <algorithm>

namespace posecast::rig::detail {

namespace {

double square(double x) { return x * x; }
double positive(double x) { return x > 0.0 ? x : 0.0; }

// Per-link share of a chain's bend: a chain of L links bends about `total * 1.5 / (L + 1)`
// degrees per link, so long chains stay within a sensible overall curl.
double per_link(const RigJoint& joint, double total) {
  return total * 1.5 / static_cast<double>(joint.chain_length + 1);
}
// Position along the chain in [0, 1): phase lag for waves that travel down the chain.
double along(const RigJoint& joint) {
  return static_cast<double>(joint.chain_index) / static_cast<double>(joint.chain_length);
}
int finger_index(const RigJoint& joint) { return (joint.chain - 3) % 4; }

JointMotion rotation(double pitch, double yaw, double roll) {
  JointMotion m;
  m.rotates = true;
  m.euler = {pitch, yaw, roll};
  return m;
}

struct GaitParameters {
  double thigh, knee, stance_knee, foot, toe;
  double arm, abduct, elbow, elbow_swing;
  double bob, sway, hip_yaw, hip_roll, lean, nod;
  double tail, antenna, finger;
};
constexpr GaitParameters kWalk{25, 55, 10, 15, 20, 20, 6, 10, 15, 0.03, 0.02, 6, 3, 3, 2, 30, 20, 15};
constexpr GaitParameters kRun{45, 95, 25, 25, 30, 40, 10, 70, 20, 0.06, 0.015, 10, 4, 12, 3, 50, 35, 25};

}  // namespace

JointMotion idle_motion(const RigJoint& j, double p) {
  const double s = static_cast<double>(j.side);
  switch (j.role) {
    case JointRole::kHips: {
      JointMotion m = rotation(0.0, 2.0 * sin_turns(p + 0.15), 1.5 * sin_turns(p));
      m.translates = true;
      m.offset = {0.015 * sin_turns(p), -0.004 * (0.5 - 0.5 * cos_turns(2.0 * p)), 0.0};
      return m;
    }
    case JointRole::kSpine: return rotation(1.5 * sin_turns(2.0 * p), 0.0, -1.0 * sin_turns(p));
    case JointRole::kChest: return rotation(2.0 * sin_turns(2.0 * p - 0.05), 0.0, 0.0);
    case JointRole::kUpperChest: return rotation(2.5 * sin_turns(2.0 * p - 0.1), 0.0, 0.0);
    case JointRole::kNeck: return rotation(-1.0 * sin_turns(2.0 * p - 0.1), 0.0, sin_turns(p + 0.2));
    case JointRole::kHead: return rotation(2.0 * sin_turns(2.0 * p + 0.3), 8.0 * sin_turns(p), 0.0);
    case JointRole::kShoulder: return rotation(0.0, 0.0, s * 1.5 * (0.5 + 0.5 * sin_turns(2.0 * p - 0.1)));
    case JointRole::kUpperArm: return rotation(2.0 * sin_turns(p + s * 0.1), 0.0, s * (5.0 + 1.5 * sin_turns(2.0 * p)));
    case JointRole::kForearm: return rotation(-(10.0 + 3.0 * sin_turns(p + 0.25)), 0.0, 0.0);
    case JointRole::kHand: return rotation(3.0 * sin_turns(p + 0.4), 0.0, 0.0);
    case JointRole::kThigh: return rotation(0.0, 0.0, -1.5 * sin_turns(p));
    case JointRole::kShin: return rotation(2.0 * (0.5 - 0.5 * cos_turns(2.0 * p)), 0.0, 0.0);
    case JointRole::kFoot: return rotation(-1.0 * (0.5 - 0.5 * cos_turns(2.0 * p)), 0.0, 1.5 * sin_turns(p));
    case JointRole::kToe: return JointMotion{};
    case JointRole::kTail:
      return rotation(per_link(j, 5.0) * sin_turns(2.0 * p), per_link(j, 20.0) * sin_turns(p - 0.5 * along(j)), 0.0);
    case JointRole::kAntenna: return rotation(per_link(j, 10.0) * sin_turns(2.0 * p - 0.5 * along(j)), 0.0, 0.0);
    case JointRole::kFinger:
      return rotation(-per_link(j, 8.0) * (1.0 + 0.5 * sin_turns(p + 0.1 * finger_index(j))), 0.0, 0.0);
  }
  return JointMotion{};
}

JointMotion gait_motion(const RigJoint& j, double p, Gait gait) {
  const GaitParameters& g = gait == Gait::kWalk ? kWalk : kRun;
  const double s = static_cast<double>(j.side);
  const double c1 = cos_turns(p);  // +1 at the left contact, -1 at the right contact
  // A leg's own phase: 0 at its heel strike, stance until 0.5, swing from 0.5 to 1.
  const double leg = p + (j.side < 0 ? 0.5 : 0.0);
  const double swing = square(positive(-sin_turns(leg)));   // peaks mid-swing
  const double stance = square(positive(sin_turns(leg)));   // peaks mid-stance
  switch (j.role) {
    case JointRole::kHips: {
      JointMotion m = rotation(g.lean * 0.3, g.hip_yaw * c1, g.hip_roll * sin_turns(p));
      m.translates = true;
      // Lowest at each contact (phase 0 and 0.5), highest between.
      m.offset = {g.sway * sin_turns(p), -g.bob * (0.5 + 0.5 * cos_turns(2.0 * p)), 0.0};
      return m;
    }
    case JointRole::kSpine: return rotation(g.lean * 0.4, -0.4 * g.hip_yaw * c1, -0.5 * g.hip_roll * sin_turns(p));
    case JointRole::kChest: return rotation(g.lean * 0.3 + sin_turns(2.0 * p), -0.4 * g.hip_yaw * c1, 0.0);
    case JointRole::kUpperChest: return rotation(g.lean * 0.2, -0.3 * g.hip_yaw * c1, 0.0);
    case JointRole::kNeck: return rotation(-g.lean * 0.4, 0.3 * g.hip_yaw * c1, 0.0);
    case JointRole::kHead: return rotation(-g.lean * 0.3 + g.nod * cos_turns(2.0 * p), 0.2 * g.hip_yaw * c1, 0.0);
    case JointRole::kShoulder:
      return rotation(0.0, g.arm * 0.15 * c1, s * (2.0 + 2.0 * sin_turns(2.0 * p)));
    // Arms swing against the legs: the left arm is back when the left foot strikes.
    case JointRole::kUpperArm: return rotation(s * g.arm * c1, 0.0, s * g.abduct);
    case JointRole::kForearm: return rotation(-(g.elbow + g.elbow_swing * 0.5 * (1.0 - s * c1)), 0.0, 0.0);
    case JointRole::kHand: return rotation(0.25 * g.arm * s * cos_turns(p - 0.1), 0.0, 0.0);
    case JointRole::kThigh: return rotation(-g.thigh * cos_turns(leg) - 0.2 * g.thigh * swing, 0.0, s * 1.0);
    case JointRole::kShin: return rotation(g.knee * swing + g.stance_knee * stance, 0.0, 0.0);
    case JointRole::kFoot: return rotation(-g.foot * cos_turns(leg), 0.0, 0.0);
    case JointRole::kToe: return rotation(-g.toe * (0.5 - 0.5 * cos_turns(leg)), 0.0, 0.0);
    case JointRole::kTail:
      return rotation(per_link(j, g.tail * 0.3) * cos_turns(2.0 * p - along(j)),
                      per_link(j, g.tail) * sin_turns(p - 0.5 * along(j)), 0.0);
    case JointRole::kAntenna:
      return rotation(per_link(j, g.antenna) * sin_turns(2.0 * p - 0.7 * along(j)), 0.0,
                      s * per_link(j, g.antenna * 0.3) * cos_turns(2.0 * p - along(j)));
    case JointRole::kFinger:
      return rotation(-per_link(j, g.finger) * (1.0 + 0.5 * sin_turns(p + 0.1 * finger_index(j) - 0.4 * along(j))),
                      0.0, 0.0);
  }
  return JointMotion{};
}

JointMotion wave_motion(const RigJoint& j, double p) {
  if (!j.upper_body) return JointMotion{};
  const bool right = j.side < 0;
  switch (j.role) {
    case JointRole::kSpine: return rotation(0.0, 0.0, -2.0 + sin_turns(2.0 * p));
    case JointRole::kChest: return rotation(0.0, -6.0 + 2.0 * sin_turns(p), -2.0);
    case JointRole::kUpperChest: return rotation(0.0, 0.0, -1.5 + 0.5 * sin_turns(2.0 * p));
    case JointRole::kNeck: return rotation(0.0, 0.0, 3.0 * sin_turns(p));
    case JointRole::kHead: return rotation(0.0, -12.0 + 3.0 * sin_turns(p), -5.0);  // looks at the hand
    case JointRole::kShoulder:
      return right ? rotation(0.0, 0.0, -12.0 + 2.0 * sin_turns(2.0 * p)) : JointMotion{};
    // The right arm is raised up and out and the forearm waves side to side twice per loop.
    case JointRole::kUpperArm:
      return right ? rotation(-10.0, 0.0, -150.0 + 4.0 * sin_turns(2.0 * p)) : JointMotion{};
    case JointRole::kForearm:
      return right ? rotation(0.0, 0.0, -20.0 + 30.0 * sin_turns(2.0 * p)) : JointMotion{};
    case JointRole::kHand: return right ? rotation(0.0, 0.0, 15.0 * sin_turns(2.0 * p - 0.1)) : JointMotion{};
    case JointRole::kFinger:
      return right ? rotation(-per_link(j, 10.0) * (1.0 + 0.6 * sin_turns(4.0 * p + 0.1 * finger_index(j) - 0.3 * along(j))),
                              0.0, 0.0)
                   : JointMotion{};
    case JointRole::kAntenna: return rotation(per_link(j, 12.0) * sin_turns(2.0 * p - 0.5 * along(j)), 0.0, 0.0);
    default: return JointMotion{};
  }
}

JointMotion step_pose_motion(const RigJoint& j, int pose) {
  const double s = static_cast<double>(j.side);
  const bool left = j.side > 0;
  // Pose 0: rest. 1: arms raised. 2: crouch. 3: twist, left arm out.
  struct Angles {
    Euler pose[kStepPoseCount];
  };
  Angles a{};
  switch (j.role) {
    case JointRole::kHips: {
      const Euler e[kStepPoseCount] = {{}, {}, {10, 0, 0}, {0, 0, 5}};
      const double drop[kStepPoseCount] = {0.0, 0.0, -0.22, 0.0};
      JointMotion m = rotation(e[pose].pitch, e[pose].yaw, e[pose].roll);
      m.translates = true;
      m.offset = {0.0, drop[pose], 0.0};
      return m;
    }
    case JointRole::kSpine: a = {{{}, {-5, 0, 0}, {15, 0, 0}, {0, 20, 0}}}; break;
    case JointRole::kChest: a = {{{}, {}, {10, 0, 0}, {0, 15, 0}}}; break;
    case JointRole::kUpperChest: a = {{{}, {}, {}, {0, 10, 0}}}; break;
    case JointRole::kNeck: a = {{{}, {-5, 0, 0}, {-10, 0, 0}, {}}}; break;
    case JointRole::kHead: a = {{{}, {-12, 0, 0}, {-20, 0, 0}, {0, -25, 0}}}; break;
    case JointRole::kShoulder: a = {{{}, {0, 0, s * 10}, {}, {}}}; break;
    case JointRole::kUpperArm:
      a = {{{}, {0, 0, s * 160}, {-50, 0, s * 5}, {0, 0, s * (left ? 70 : 20)}}};
      break;
    case JointRole::kForearm: a = {{{}, {0, 0, s * 10}, {-40, 0, 0}, {left ? -70.0 : -10.0, 0, 0}}}; break;
    case JointRole::kHand: a = {{{}, {0, 0, s * 10}, {}, {}}}; break;
    case JointRole::kThigh: a = {{{}, {}, {-75, 0, s * 5}, {left ? -30.0 : 10.0, 0, 0}}}; break;
    case JointRole::kShin: a = {{{}, {}, {110, 0, 0}, {left ? 45.0 : 5.0, 0, 0}}}; break;
    case JointRole::kFoot: a = {{{}, {}, {-35, 0, 0}, {}}}; break;
    case JointRole::kToe: a = {{{}, {}, {-10, 0, 0}, {}}}; break;
    case JointRole::kTail:
      a = {{{}, {per_link(j, -20), 0, 0}, {per_link(j, 30), 0, 0}, {0, per_link(j, 40), 0}}};
      break;
    case JointRole::kAntenna:
      a = {{{}, {per_link(j, -20), 0, 0}, {per_link(j, 25), 0, 0}, {0, 0, s * per_link(j, 30)}}};
      break;
    case JointRole::kFinger:
      a = {{{}, {per_link(j, 15), 0, 0}, {per_link(j, -40), 0, 0}, {per_link(j, -60), 0, 0}}};
      break;
  }
  const Euler& e = a.pose[pose];
  return rotation(e.pitch, e.yaw, e.roll);
}

CubicMotion sway_motion(const RigJoint& j) {
  CubicMotion m;
  const auto rotate = [&m](Vec3 axis, Wave angle) {
    m.rotates = true;
    m.axis = axis;
    m.angle = angle;
  };
  const Vec3 x{1.0, 0.0, 0.0}, y{0.0, 1.0, 0.0}, z{0.0, 0.0, 1.0};
  const double s = static_cast<double>(j.side);
  switch (j.role) {
    case JointRole::kHips:
      rotate(z, {0.0, 4.0, 1.0, 0.0});
      m.translates = true;
      m.offset_x = {0.0, 0.05, 1.0, 0.0};
      m.offset_y = {0.0, 0.01, 2.0, 0.0};
      break;
    case JointRole::kSpine: rotate(z, {0.0, -3.0, 1.0, -0.05}); break;
    case JointRole::kChest: rotate(z, {0.0, -2.0, 1.0, -0.1}); break;
    case JointRole::kUpperChest: rotate(z, {0.0, -1.5, 1.0, -0.15}); break;
    case JointRole::kNeck: rotate(z, {0.0, 1.0, 1.0, -0.2}); break;
    case JointRole::kHead: rotate(z, {0.0, 2.0, 1.0, -0.25}); break;
    // Both arms lag the same way, like pendulums.
    case JointRole::kUpperArm: rotate(z, {s * 8.0, -6.0, 1.0, -0.1}); break;
    case JointRole::kForearm: rotate(x, {-10.0, -4.0, 2.0, 0.0}); break;
    case JointRole::kThigh: rotate(z, {0.0, -4.0, 1.0, 0.0}); break;
    case JointRole::kTail: rotate(y, {0.0, per_link(j, 25.0), 1.0, -0.5 * along(j)}); break;
    case JointRole::kAntenna: rotate(z, {0.0, per_link(j, 15.0), 1.0, -0.3 - 0.5 * along(j)}); break;
    default: break;
  }
  return m;
}

}  // namespace posecast::rig::detail
