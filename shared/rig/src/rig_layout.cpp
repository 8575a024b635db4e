#include "rig_layout.h"

#include <cstdio>

namespace posecast::rig::detail {

namespace {

// One joint of the humanoid core, with the body part (capsule) it moves. Positions in metres,
// the rig standing on y = 0, facing +Z, its left towards +X.
struct CoreJoint {
  const char* name;
  int parent;        // core index
  JointRole role;
  int side;
  int rank;          // importance: a rig of N < 22 joints keeps the ranks 0..N-1
  Vec3 world;
  Vec3 capsule_a;
  Vec3 capsule_b;
  double radius;
  int blend_a;       // core joint blended in near capsule_a, or -1
  int blend_b;       // core joint blended in near capsule_b, or -1
};

constexpr int kHips = 0, kHead = 5, kHandLeft = 9, kHandRight = 13;

// The left side is written out; the right side mirrors it (x -> -x) in the same order.
// Index: 0 hips, 1 spine, 2 chest, 3 upper_chest, 4 neck, 5 head, 6-9 left arm, 10-13 right arm,
// 14-17 left leg, 18-21 right leg.
std::array<CoreJoint, kCoreJointCount> make_core_joints() {
  using R = JointRole;
  std::array<CoreJoint, kCoreJointCount> joints = {{
      {"hips", -1, R::kHips, 0, 0, {0, 1.00, 0}, {-0.085, 0.98, 0}, {0.085, 0.98, 0}, 0.13, -1, -1},
      {"spine", 0, R::kSpine, 0, 1, {0, 1.10, 0}, {0, 1.10, 0}, {0, 1.22, 0}, 0.12, 0, 2},
      {"chest", 1, R::kChest, 0, 9, {0, 1.22, 0}, {0, 1.22, 0}, {0, 1.34, 0}, 0.13, 1, 3},
      {"upper_chest", 2, R::kUpperChest, 0, 19, {0, 1.34, 0}, {0, 1.34, 0}, {0, 1.42, 0}, 0.145, 2, -1},
      {"neck", 3, R::kNeck, 0, 14, {0, 1.48, 0}, {0, 1.48, 0}, {0, 1.56, 0}, 0.055, 3, 5},
      // The head is rigid: the neck blends into it, not the other way, so nodding never
      // stretches the face.
      {"head", 4, R::kHead, 0, 4, {0, 1.56, 0}, {0, 1.64, 0.01}, {0, 1.72, 0.01}, 0.115, -1, -1},
      {"shoulder_l", 3, R::kShoulder, 1, 17, {0.07, 1.44, 0}, {0.07, 1.44, 0}, {0.19, 1.44, 0}, 0.06, 3, 7},
      {"upper_arm_l", 6, R::kUpperArm, 1, 7, {0.19, 1.44, 0}, {0.19, 1.44, 0}, {0.21, 1.17, 0}, 0.05, 6, 8},
      {"forearm_l", 7, R::kForearm, 1, 10, {0.21, 1.17, 0}, {0.21, 1.17, 0}, {0.225, 0.91, 0}, 0.042, 7, 9},
      {"hand_l", 8, R::kHand, 1, 15, {0.225, 0.91, 0}, {0.225, 0.91, 0}, {0.23, 0.82, 0}, 0.038, 8, -1},
      {"shoulder_r", 3, R::kShoulder, -1, 18, {}, {}, {}, 0, 0, 0},
      {"upper_arm_r", 10, R::kUpperArm, -1, 8, {}, {}, {}, 0, 0, 0},
      {"forearm_r", 11, R::kForearm, -1, 11, {}, {}, {}, 0, 0, 0},
      {"hand_r", 12, R::kHand, -1, 16, {}, {}, {}, 0, 0, 0},
      {"thigh_l", 0, R::kThigh, 1, 2, {0.095, 0.94, 0}, {0.095, 0.94, 0}, {0.1, 0.52, 0}, 0.075, 0, 15},
      {"shin_l", 14, R::kShin, 1, 5, {0.1, 0.52, 0}, {0.1, 0.52, 0}, {0.1, 0.10, -0.01}, 0.058, 14, 16},
      {"foot_l", 15, R::kFoot, 1, 12, {0.1, 0.10, -0.01}, {0.1, 0.10, -0.01}, {0.1, 0.05, 0.11}, 0.05, 15, 17},
      {"toe_l", 16, R::kToe, 1, 20, {0.1, 0.05, 0.11}, {0.1, 0.05, 0.11}, {0.1, 0.045, 0.18}, 0.04, 16, -1},
      {"thigh_r", 0, R::kThigh, -1, 3, {}, {}, {}, 0, 0, 0},
      {"shin_r", 18, R::kShin, -1, 6, {}, {}, {}, 0, 0, 0},
      {"foot_r", 19, R::kFoot, -1, 13, {}, {}, {}, 0, 0, 0},
      {"toe_r", 20, R::kToe, -1, 21, {}, {}, {}, 0, 0, 0},
  }};
  const auto mirror = [](Vec3 v) { return Vec3{-v.x, v.y, v.z}; };
  const auto mirror_index = [](int i) {
    if (i >= 6 && i <= 9) return i + 4;    // left arm -> right arm
    if (i >= 14 && i <= 17) return i + 4;  // left leg -> right leg
    return i;
  };
  for (int left : {6, 7, 8, 9, 14, 15, 16, 17}) {
    const CoreJoint& l = joints[static_cast<std::size_t>(left)];
    CoreJoint& r = joints[static_cast<std::size_t>(mirror_index(left))];
    r.world = mirror(l.world);
    r.capsule_a = mirror(l.capsule_a);
    r.capsule_b = mirror(l.capsule_b);
    r.radius = l.radius;
    r.blend_a = l.blend_a < 0 ? -1 : mirror_index(l.blend_a);
    r.blend_b = l.blend_b < 0 ? -1 : mirror_index(l.blend_b);
  }
  return joints;
}

// An extra chain: where it starts, its shape as a function of s in [0, 1], and its joint.
struct ChainShape {
  const char* prefix;
  int attach_core;   // core joint it hangs from
  JointRole role;
  int side;
  Vec3 start;
  Vec3 linear;       // p(s) = start + linear * s + quadratic * s^2
  Vec3 quadratic;
  double radius_start;
  double radius_end;
};

constexpr int kChainCount = 11;  // tail, 2 antennae, 4 fingers per hand

ChainShape chain_shape(int chain, int length) {
  if (chain == 0) {
    return {"tail", kHips, JointRole::kTail, 0, {0, 0.98, -0.12}, {0, 0, -0.62}, {0, 0.30, 0},
            0.05, 0.015};
  }
  if (chain <= 2) {
    const double side = chain == 1 ? 1.0 : -1.0;
    return {chain == 1 ? "antenna_l" : "antenna_r", kHead, JointRole::kAntenna,
            chain == 1 ? 1 : -1, {side * 0.05, 1.80, 0.03}, {side * 0.10, 0.28, 0},
            {0, 0, 0.06}, 0.014, 0.008};
  }
  const int finger = (chain - 3) % 4;
  const bool left = chain < 7;
  const double side = left ? 1.0 : -1.0;
  // Longer chains make longer (tendril-like) fingers, so links do not shrink to nothing.
  const double length_m = 0.08 * (1.0 + static_cast<double>(length) / 12.0);
  const double z = -0.03 + 0.02 * static_cast<double>(finger);
  return {left ? "finger_l" : "finger_r", left ? kHandLeft : kHandRight, JointRole::kFinger,
          left ? 1 : -1, {side * 0.23, 0.80, z}, {side * 0.015, -length_m, z * 0.5},
          {0, 0, 0.02}, 0.011, 0.007};
}

Vec3 chain_point(const ChainShape& shape, double s) {
  return shape.start + shape.linear * s + shape.quadratic * (s * s);
}

std::string chain_joint_name(const ChainShape& shape, int chain, int index) {
  char buffer[48];
  if (shape.role == JointRole::kFinger) {
    std::snprintf(buffer, sizeof buffer, "%s%d_%02d", shape.prefix, (chain - 3) % 4, index);
  } else {
    std::snprintf(buffer, sizeof buffer, "%s_%02d", shape.prefix, index);
  }
  return buffer;
}

std::array<float, 3> local_translation(Vec3 world, Vec3 parent_world) {
  const Vec3 d = world - parent_world;
  return {static_cast<float>(d.x), static_cast<float>(d.y), static_cast<float>(d.z)};
}

}  // namespace

int RigLayout::find(const std::string& name) const {
  for (std::size_t i = 0; i < joints.size(); ++i)
    if (joints[i].name == name) return static_cast<int>(i);
  return -1;
}

RigLayout build_rig_layout(uint32_t joint_count) {
  const std::array<CoreJoint, kCoreJointCount> core = make_core_joints();
  const uint32_t core_present = joint_count < kCoreJointCount ? joint_count : kCoreJointCount;

  // Core joints kept (by rank), their index in the output, and for every core joint the
  // nearest kept ancestor-or-self (the hips are always kept).
  std::array<int, kCoreJointCount> output_index{};
  std::array<int, kCoreJointCount> representative{};
  RigLayout layout;
  for (std::size_t i = 0; i < core.size(); ++i) {
    const bool kept = static_cast<uint32_t>(core[i].rank) < core_present;
    output_index[i] = kept ? static_cast<int>(layout.joints.size()) : -1;
    int r = static_cast<int>(i);
    while (output_index[static_cast<std::size_t>(r)] < 0) r = core[static_cast<std::size_t>(r)].parent;
    representative[i] = r;  // parents precede children in the table, so r is settled already
    if (!kept) continue;
    RigJoint joint;
    joint.name = core[i].name;
    joint.role = core[i].role;
    joint.side = core[i].side;
    joint.upper_body = i >= 1 && i <= 13;
    joint.world = core[i].world;
    if (core[i].parent >= 0) {
      const int parent_core = representative[static_cast<std::size_t>(core[i].parent)];
      joint.parent = output_index[static_cast<std::size_t>(parent_core)];
      joint.translation = local_translation(joint.world, core[static_cast<std::size_t>(parent_core)].world);
    } else {
      joint.translation = local_translation(joint.world, Vec3{});
    }
    layout.joints.push_back(joint);
  }
  const auto mapped = [&](int core_index) {
    if (core_index < 0) return -1;
    return output_index[static_cast<std::size_t>(representative[static_cast<std::size_t>(core_index)])];
  };
  for (std::size_t i = 0; i < core.size(); ++i) {
    Capsule capsule;
    capsule.a = core[i].capsule_a;
    capsule.b = core[i].capsule_b;
    capsule.radius = core[i].radius;
    capsule.owner = static_cast<uint16_t>(mapped(static_cast<int>(i)));
    capsule.blend_a = mapped(core[i].blend_a);
    capsule.blend_b = mapped(core[i].blend_b);
    layout.capsules.push_back(capsule);
  }

  if (joint_count <= kCoreJointCount) return layout;

  // Extra chains: an even share each, the remainder to the tail.
  const int extra = static_cast<int>(joint_count - kCoreJointCount);
  for (int chain = 0; chain < kChainCount; ++chain) {
    const int length = extra / kChainCount + (chain == 0 ? extra % kChainCount : 0);
    if (length == 0) continue;
    const ChainShape shape = chain_shape(chain, length);
    int previous = output_index[static_cast<std::size_t>(shape.attach_core)];
    for (int k = 0; k < length; ++k) {
      const double s0 = static_cast<double>(k) / static_cast<double>(length);
      const double s1 = static_cast<double>(k + 1) / static_cast<double>(length);
      RigJoint joint;
      joint.name = chain_joint_name(shape, chain, k);
      joint.parent = previous;
      joint.role = shape.role;
      joint.side = shape.side;
      joint.upper_body = shape.role != JointRole::kTail;
      joint.world = chain_point(shape, s0);
      joint.translation = local_translation(joint.world, layout.joints[static_cast<std::size_t>(previous)].world);
      joint.chain = chain;
      joint.chain_index = k;
      joint.chain_length = length;
      const int index = static_cast<int>(layout.joints.size());
      layout.joints.push_back(joint);

      Capsule capsule;
      capsule.a = joint.world;
      capsule.b = chain_point(shape, s1);
      const double mid = (s0 + s1) * 0.5;
      capsule.radius = shape.radius_start + (shape.radius_end - shape.radius_start) * mid;
      capsule.detailed = false;
      capsule.owner = static_cast<uint16_t>(index);
      capsule.blend_a = previous;
      capsule.blend_b = k + 1 < length ? index + 1 : -1;
      layout.capsules.push_back(capsule);
      previous = index;
    }
  }
  return layout;
}

}  // namespace posecast::rig::detail
