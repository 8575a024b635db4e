#pragma once
// PoseFormats: the pose format of every (model, rig) the server serves, built once at
// creation (protocol::build_model_pose_formats, the derivation clients share) and immutable
// after. Formats are numbered in registration order; format_of[model][rig] names one.

#include <cstdint>
#include <memory>
#include <vector>

#include "posecast/model.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/result.h"

namespace posecast::server {

struct PoseFormats {
  std::vector<std::shared_ptr<const protocol::PoseFormat>> formats;
  std::vector<std::vector<uint32_t>> format_of;  // [model][rig] -> index into formats
  std::vector<const Rig*> rig_of;                // [format]: the rig it was built from

  // Adds the formats of the next model's rigs (its model id is the number of models added
  // before). `model` must outlive this object. Fails when a rig has no valid format.
  Status add_model(const Model& model);
  // The format index of (model, rig); the pair must exist.
  uint32_t index(uint32_t model, uint16_t rig) const { return format_of[model][rig]; }
  // The format of (model, rig), or nullptr when unknown.
  const protocol::PoseFormat* find(uint32_t model, uint16_t rig) const;
};

}  // namespace posecast::server
