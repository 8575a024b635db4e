#include "posecast/protocol/range_coder.h"

namespace posecast::protocol {

void RangeEncoder::finish() {
  // Any value in [low_, low_ + range_) decodes the same symbols; the one with the most
  // trailing zero bits leaves the most zero bytes to drop.
  const uint64_t last = low_ + range_ - 1;
  for (int k = 32; k >= 0; --k) {
    const uint64_t mask = (uint64_t{1} << k) - 1;
    const uint64_t value = (low_ + mask) & ~mask;
    if (value <= last) {
      low_ = value;
      break;
    }
  }
  for (int i = 0; i < 5; ++i) shift_low();
  // Drop this stream's trailing zero bytes: the decoder supplies zeros past the end.
  while (!out_.empty() && out_.size() > stream_start_ && out_.back() == 0) out_.pop_back();
}

}  // namespace posecast::protocol
