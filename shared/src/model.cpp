#include "posecast/model.h"

namespace posecast {

int Model::find_clip(const std::string& name) const {
  // Every rig holds the same clips in the same order (one per glTF animation).
  if (rigs.empty()) return -1;
  const std::vector<Clip>& clips = rigs.front().clips;
  for (std::size_t i = 0; i < clips.size(); ++i)
    if (clips[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace posecast
