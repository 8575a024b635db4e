// generate_rig_glb: builds the layout (skeleton + capsules), the skinned mesh and the clips,
// then writes them as one .glb. See rig_generator.h for the contract.

#include "posecast/rig/rig_generator.h"

#include <string>

#include "rig_clips.h"
#include "rig_document.h"
#include "rig_layout.h"
#include "rig_mesh.h"

namespace posecast::rig {

Result<std::vector<uint8_t>> generate_rig_glb(const RigOptions& options) {
  if (options.joints < kMinJoints || options.joints > kMaxJoints) {
    return Error{"generate_rig_glb: RigOptions::joints is " + std::to_string(options.joints) +
                 ", expected a joint count in " + std::to_string(kMinJoints) + ".." +
                 std::to_string(kMaxJoints)};
  }
  const detail::RigLayout layout = detail::build_rig_layout(options.joints);
  const detail::RigMesh mesh = detail::build_rig_mesh(layout);
  const std::vector<detail::RigClip> clips = detail::build_rig_clips(layout);
  return detail::write_rig_glb(layout, mesh, clips);
}

std::string generated_rig_config_json(const RigOptions& options) {
  const detail::RigLayout layout = detail::build_rig_layout(options.joints);
  std::string feet;
  for (const char* pair : {"toe", "foot"}) {
    const std::string left = std::string(pair) + "_l", right = std::string(pair) + "_r";
    if (feet.empty() && layout.find(left) >= 0 && layout.find(right) >= 0)
      feet = ", \"foot_joints\": [\"" + left + "\", \"" + right + "\"]";
  }
  return "{\"root_motion_joint\": \"hips\"" + feet +
         ", \"locomotion\": {\"idle\": \"idle\", \"walk\": \"walk\", \"run\": \"run\"}}";
}

}  // namespace posecast::rig
