#pragma once
// Whether a rig's joints can be skinned with dual quaternions: a dual quaternion holds a
// rotation and a translation only, so a rig whose palette carries scale is drawn with linear
// blend skinning instead (the renderer's per-model fallback; docs/viewer.md).

#include <string>

#include "posecast/model.h"

namespace posecast::render {

// Empty when the rig's rest-pose palette is rigid (is_rigid) and no clip moves any node's scale
// away from its rest scale (relative tolerance kRigidTolerance; so a scale shared by the mesh
// node and the skeleton, which the palette cancels, is fine). Otherwise one line naming the
// first offending joint or node, e.g. "node 'Arm' scale key 3 of clip 'stretch' is (1.2, 1, 1),
// rest (1, 1, 1)".
std::string rig_scale_problem(const Rig& rig);

}  // namespace posecast::render
