#include "time_history.h"

namespace posecast::viewer {

void TimeHistory::push(float value) {
  samples_[next_] = value;
  next_ = (next_ + 1) % kFrames;
  if (count_ < kFrames) ++count_;
}

std::size_t TimeHistory::ordered(std::array<float, kFrames>& out) const {
  const std::size_t first = count_ < kFrames ? 0 : next_;
  for (std::size_t i = 0; i < count_; ++i) out[i] = samples_[(first + i) % kFrames];
  return count_;
}

}  // namespace posecast::viewer
