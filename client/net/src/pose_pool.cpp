#include "posecast/client/pose_pool.h"

#include <cassert>

#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast::client {

bool PoseSample::compute_deferred() const {
  protocol::ClipDictionary* dictionary = pending;
  pending = nullptr;
  undecodable = format == nullptr || !dictionary->predict(quantized.recipe, quantized);
  if (undecodable) return false;
  // The prediction's own dequantised rotations: the same bits dequantize_pose would give.
  locals.resize(format->node_count());
  protocol::dequantize_pose_reusing(*format, quantized, quantized,
                                    dictionary->predicted_rotations(), locals);
  return true;
}

bool PoseSample::compute_palette(std::span<glm::mat4> models, std::span<glm::mat4> palette) const {
  if (skeleton == nullptr || !decoded() || locals.size() != skeleton->node_count()) return false;
  const LocalToModelJob to_model{skeleton, locals, models};
  if (!to_model.Run()) return false;
  const PaletteJob to_palette{skeleton, models, palette};
  return to_palette.Run();
}

std::vector<glm::mat4> PoseSample::palette() const {
  if (skeleton == nullptr) return {};
  std::vector<glm::mat4> models(skeleton->node_count());
  std::vector<glm::mat4> out(skeleton->joint_count());
  if (!compute_palette(models, out)) return {};
  return out;
}

uint32_t PosePool::acquire() {
  if (!free_.empty()) {
    const uint32_t slot = free_.back();
    free_.pop_back();
    refs_[slot] = 1;
    return slot;
  }
  samples_.emplace_back();
  refs_.push_back(1);
  return static_cast<uint32_t>(samples_.size() - 1);
}

void PosePool::release(uint32_t slot) {
  assert(slot < refs_.size() && refs_[slot] > 0);
  if (--refs_[slot] == 0) free_.push_back(slot);
}

}  // namespace posecast::client
