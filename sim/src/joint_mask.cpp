#include "posecast/sim/joint_mask.h"

#include <cmath>

namespace posecast::sim {

Result<std::vector<float>> mask_weights_from_joint_names(const Skeleton& skeleton,
                                                         std::span<const std::string> joints,
                                                         bool descendants, float weight) {
  if (!std::isfinite(weight)) return Error{"mask weight is not finite"};
  const std::size_t nodes = skeleton.node_count();
  std::vector<char> selected(nodes, 0);
  for (const std::string& joint : joints) {
    bool found = false;
    for (std::size_t n = 0; n < nodes; ++n) {
      if (n < skeleton.names.size() && skeleton.names[n] == joint) {
        selected[n] = 1;
        found = true;
      }
    }
    if (!found) return Error{"unknown joint '" + joint + "'"};
  }
  if (descendants) {
    // Parents come before children (skeleton.h), so one forward pass covers whole subtrees.
    for (std::size_t n = 0; n < nodes; ++n) {
      const int parent = skeleton.parents[n];
      if (parent != kNoParent && selected[static_cast<std::size_t>(parent)]) selected[n] = 1;
    }
  }
  std::vector<float> weights(nodes, 0.0f);
  for (std::size_t n = 0; n < nodes; ++n) {
    if (selected[n]) weights[n] = weight;
  }
  return weights;
}

}  // namespace posecast::sim
