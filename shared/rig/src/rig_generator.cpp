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
  const std::vector<detail::RigClip> clips = detail::build_rig_clips(layout, options.travelling_gaits);
  return detail::write_rig_glb(layout, mesh, clips);
}

}  // namespace posecast::rig
