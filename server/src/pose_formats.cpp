#include "pose_formats.h"

namespace posecast::server {

Status PoseFormats::add_model(const Model& model) {
  Result<std::vector<std::shared_ptr<const protocol::PoseFormat>>> built =
      protocol::build_model_pose_formats(model);
  if (!built) return built.error();
  std::vector<std::shared_ptr<const protocol::PoseFormat>> rig_formats = std::move(built).value();
  format_of.emplace_back();
  for (std::size_t r = 0; r < rig_formats.size(); ++r) {
    format_of.back().push_back(static_cast<uint32_t>(formats.size()));
    rig_of.push_back(&model.rigs[r]);
    formats.push_back(std::move(rig_formats[r]));
  }
  return {};
}

const protocol::PoseFormat* PoseFormats::find(uint32_t model, uint16_t rig) const {
  if (model >= format_of.size() || rig >= format_of[model].size()) return nullptr;
  return formats[format_of[model][rig]].get();
}

}  // namespace posecast::server
