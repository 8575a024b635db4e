#include "posecast/render/rigid_rig.h"

#include <cmath>
#include <sstream>

#include "posecast/pose_evaluation.h"
#include "posecast/render/dual_quaternion.h"

namespace posecast::render {

namespace {

std::string node_name(const Skeleton& skeleton, std::size_t node) {
  const std::string& name = node < skeleton.names.size() ? skeleton.names[node] : std::string();
  return name.empty() ? "#" + std::to_string(node) : "'" + name + "'";
}

bool near(float value, float rest) {
  return std::fabs(static_cast<double>(value) - static_cast<double>(rest)) <=
         kRigidTolerance * std::fabs(static_cast<double>(rest));
}

// The first scale key of `clip` that differs from its node's rest scale, as a message; empty
// when there is none.
std::string scale_key_problem(const Skeleton& skeleton, const Clip& clip) {
  for (const Track& track : clip.tracks) {
    if (track.target != TrackTarget::kScale || track.node >= skeleton.node_count()) continue;
    const glm::vec3 rest = skeleton.rest[track.node].scale;
    // CUBICSPLINE keys are (in-tangent, value, out-tangent): the value is the middle triple.
    const bool cubic = track.interpolation == Interpolation::kCubicSpline;
    const uint32_t stride = cubic ? 9u : 3u;
    const uint32_t first = track.values_offset + (cubic ? 3u : 0u);
    for (uint32_t k = 0; k < track.key_count; ++k) {
      const float* v = clip.values.data() + first + k * stride;
      if (near(v[0], rest.x) && near(v[1], rest.y) && near(v[2], rest.z)) continue;
      std::ostringstream out;
      out << "node " << node_name(skeleton, track.node) << " scale key " << k << " of clip '"
          << clip.name << "' is (" << v[0] << ", " << v[1] << ", " << v[2] << "), rest ("
          << rest.x << ", " << rest.y << ", " << rest.z << ")";
      return out.str();
    }
  }
  return {};
}

}  // namespace

std::string rig_scale_problem(const Rig& rig) {
  const Skeleton& skeleton = rig.skeleton;
  SamplingCursor cursor;
  PoseBuffers rest;
  if (!evaluate_pose(rig, kRestPose, 0, cursor, rest)) return "the rest pose does not evaluate";
  for (std::size_t j = 0; j < rest.palette.size(); ++j) {
    if (!is_rigid(rest.palette[j])) {
      return "joint " + node_name(skeleton, skeleton.joint_nodes[j]) +
             ": rest-pose palette matrix carries scale, shear or a mirror";
    }
  }
  for (const Clip& clip : rig.clips) {
    if (std::string problem = scale_key_problem(skeleton, clip); !problem.empty()) return problem;
  }
  return {};
}

}  // namespace posecast::render
