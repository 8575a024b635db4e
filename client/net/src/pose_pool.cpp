#include "posecast/client/pose_pool.h"

#include <cassert>

namespace posecast::client {

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
