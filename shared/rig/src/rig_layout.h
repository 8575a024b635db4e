#pragma once
// The generated rig's skeleton and the capsules that make its body (private to shared/rig).
//
// Layout for N joints:
//  - the humanoid core (22 joints: hips, spine x3, neck, head, shoulders, arms, hands, legs,
//    feet, toes) when N >= 22;
//  - below 22, the N most important core joints (hips, spine, thighs, head, shins, upper arms,
//    ...): a joint whose core parent is absent hangs from its nearest present ancestor, and the
//    body part of an absent joint is skinned to that ancestor, so every shape stays attached;
//  - above 22, N - 22 extra joints as chains: a tail from the hips, two antennae from the head
//    and four fingers on each hand, so every joint still skins some geometry.
// Joints are listed parents first; rest rotations are identity and scales one, so the rest pose
// is fixed by the translations alone.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "rig_math.h"

namespace posecast::rig::detail {

inline constexpr uint32_t kCoreJointCount = 22;

enum class JointRole : uint8_t {
  kHips, kSpine, kChest, kUpperChest, kNeck, kHead, kShoulder, kUpperArm, kForearm, kHand,
  kThigh, kShin, kFoot, kToe, kTail, kAntenna, kFinger
};

struct RigJoint {
  std::string name;                 // unique
  int parent = -1;                  // index into RigLayout::joints, -1 for the root (hips)
  JointRole role = JointRole::kHips;
  int side = 0;                     // +1 left (+X), -1 right (-X), 0 centre
  bool upper_body = false;          // the spine or below it: the joints "wave" may animate
  Vec3 world;                       // rest position in the scene root's space
  std::array<float, 3> translation{};  // rest local translation as written to the file
  // Extra chains only: which chain (0 tail, 1-2 antennae, 3-10 fingers), the position in it
  // (0 = attached to the core) and its length in joints.
  int chain = -1;
  int chain_index = 0;
  int chain_length = 0;
};

// One capsule of the body, skinned to `owner` and blended into the joints it meets.
struct Capsule {
  Vec3 a, b;            // axis end points (a != b)
  double radius = 0.0;
  bool detailed = true;  // core body part (more rings) or chain link (fewer)
  uint16_t owner = 0;    // joint index that moves this capsule
  // Joints blended in near `a` (the joint the part hangs from) and near `b` (the joint the
  // part leads into), or -1. They may equal `owner` in a reduced rig (then no blend).
  int blend_a = -1;
  int blend_b = -1;
};

struct RigLayout {
  std::vector<RigJoint> joints;  // parents first; joints[0] is the root (hips)
  std::vector<Capsule> capsules;

  // Index of the joint named `name`, or -1.
  int find(const std::string& name) const;
};

// Precondition: joint_count in [kMinJoints, kMaxJoints] (checked by generate_rig_glb).
RigLayout build_rig_layout(uint32_t joint_count);

}  // namespace posecast::rig::detail
