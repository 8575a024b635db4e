#pragma once
// PosePool: storage for decoded entity poses, shared between snapshot views by reference
// count. A pose carried unchanged from a baseline into a later view (docs/session.md: entities
// left out of a snapshot keep their baseline pose) is the same slot, not a copy. Released
// slots are recycled with their buffers, so steady-state decoding does not allocate.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <vector>

#include "posecast/protocol/quantization.h"
#include "posecast/transform.h"

namespace posecast::client {

// One entity's pose at one server tick.
struct PoseSample {
  protocol::QuantizedPose quantized;  // the codes, as the server quantised them
  std::vector<Transform> locals;      // dequantize_pose(quantized): node_count entries
  std::vector<glm::mat4> palette;     // quantized_palette(quantized): joint_count entries
};

class PosePool {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

  // A slot with reference count 1 (its buffers hold whatever the last user left).
  uint32_t acquire();
  void retain(uint32_t slot) { ++refs_[slot]; }
  // Drops one reference; the slot is recycled at zero.
  void release(uint32_t slot);

  PoseSample& at(uint32_t slot) { return samples_[slot]; }
  const PoseSample& at(uint32_t slot) const { return samples_[slot]; }
  std::size_t live() const { return samples_.size() - free_.size(); }

 private:
  std::vector<PoseSample> samples_;
  std::vector<uint32_t> refs_;
  std::vector<uint32_t> free_;
};

}  // namespace posecast::client
