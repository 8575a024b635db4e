#pragma once
// Per-node layer weights ("upper body only"): immutable, registered once in a World and shared
// by every entity that uses the same model and rig.

#include <span>
#include <string>
#include <vector>

#include "posecast/result.h"
#include "posecast/sim/animation_state.h"
#include "posecast/skeleton.h"

namespace posecast::sim {

struct JointMask {
  std::string name;                 // for messages
  ModelId model = 0;
  uint16_t rig = 0;
  std::vector<float> node_weights;  // one per skeleton node, finite
};

// Node weights for `skeleton`: every node named in `joints` (all nodes of that name), and with
// `descendants` their whole subtrees, get `weight`; the others 0. Errors name the first joint
// that matches no node, e.g. "unknown joint 'spine_9'".
Result<std::vector<float>> mask_weights_from_joint_names(const Skeleton& skeleton,
                                                         std::span<const std::string> joints,
                                                         bool descendants, float weight);

}  // namespace posecast::sim
