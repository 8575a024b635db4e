#pragma once
// One-call evaluation of a rig's pose (sample -> local-to-model -> palette), for tools, tests
// and the viewer's standalone mode. The server's per-tick path uses the jobs directly with
// preallocated buffers; this convenience sizes the buffers itself (it allocates on first use).

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <vector>

#include "posecast/model.h"
#include "posecast/sampling.h"
#include "posecast/transform.h"

namespace posecast {

struct PoseBuffers {
  std::vector<Transform> locals;   // per skeleton node
  std::vector<glm::mat4> models;   // per skeleton node (world matrices)
  std::vector<glm::mat4> palette;  // per joint
};

inline constexpr int kRestPose = -1;

// Evaluates `rig` playing clip `clip_index` (kRestPose for the rest pose) at clip-local time
// `time_us` (clamped to the keys, no looping). `cursor` is reset when its size does not match
// the clip. Returns false when clip_index is out of range or a job rejects its inputs.
bool evaluate_pose(const Rig& rig, int clip_index, int64_t time_us, SamplingCursor& cursor,
                   PoseBuffers& out);

}  // namespace posecast
