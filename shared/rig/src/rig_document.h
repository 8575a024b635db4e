#pragma once
// Assembles the generated rig's glTF document and packs it as .glb (private to shared/rig).
//
// Node order: 0 "rig_root" (the scene's only root, no transform), 1..N the skin joints in skin
// order (parents first), N+1 "creature_body" (the skinned mesh node, a sibling of the root
// joint). Inverse bind matrices are the inverses of the rest world matrices, computed from the
// same float translations the file holds, so the rest-pose palette is the identity.

#include <cstdint>
#include <vector>

#include "rig_clips.h"
#include "rig_layout.h"
#include "rig_mesh.h"

namespace posecast::rig::detail {

std::vector<uint8_t> write_rig_glb(const RigLayout& layout, const RigMesh& mesh,
                                   const std::vector<RigClip>& clips);

}  // namespace posecast::rig::detail
