#pragma once
// Clips from glTF animations: each animation is decoded and checked once (file-level errors
// are reported whatever rig they concern), then bound to every rig, keeping the channels whose
// target node is in that rig's skeleton.

#include <vector>

#include "gltf/import_context.h"
#include "gltf/node_graph.h"
#include "gltf/skeleton_builder.h"
#include "posecast/clip.h"

namespace posecast::gltf {

// One decoded, checked channel.
struct DecodedChannel {
  int node = -1;  // glTF node
  TrackTarget target = TrackTarget::kTranslation;
  Interpolation interpolation = Interpolation::kLinear;
  std::vector<float> times;
  std::vector<float> values;  // as Track documents (CUBICSPLINE: in, value, out per key)
};

struct DecodedAnimation {
  std::string name;  // the file's, or "animation_<index>"
  float duration_seconds = 0.0f;  // last key time over all its samplers
  std::vector<DecodedChannel> channels;
};

// `kept_channels[a]` maps tinygltf's channel k of animation a to the file's channel index
// (see json_prepass.h). Checks times (scalar float, finite, >= 0, strictly increasing, at most
// max_keys_per_track), outputs (type and storage per path, counts per interpolation, finite),
// target nodes and paths, and refuses two channels on one (node, path).
Result<std::vector<DecodedAnimation>> decode_animations(
    const ImportContext& ctx, const NodeGraph& graph,
    const std::vector<std::vector<int>>& kept_channels);

// The clip of one decoded animation for one rig: tracks sorted by (skeleton node, target).
// Fails only when the clip would hold more than 2^32 - 1 times or values.
Result<Clip> bind_clip(const ImportContext& ctx, std::size_t animation_index,
                       const DecodedAnimation& animation, const BuiltSkeleton& skeleton);

}  // namespace posecast::gltf
