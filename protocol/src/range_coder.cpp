#include "posecast/protocol/range_coder.h"

namespace posecast::protocol {

void RangeEncoder::shift_low() {
  // Bits 24..31 of low_ become the next byte unless a carry may still reach them
  // (0xFF bytes wait in cache_size_ until the carry is known).
  if (static_cast<uint32_t>(low_) < 0xFF000000u || (low_ >> 32) != 0) {
    const auto carry = static_cast<uint8_t>(low_ >> 32);
    uint8_t byte = cache_;
    do {
      const auto out = static_cast<uint8_t>(byte + carry);
      if (skip_first_byte_) {
        skip_first_byte_ = false;  // always 0 in an LZMA-style stream: implied, not sent
      } else {
        out_.push_back(out);
      }
      byte = 0xFF;
    } while (--cache_size_ != 0);
    cache_ = static_cast<uint8_t>(low_ >> 24);
  }
  ++cache_size_;
  low_ = (low_ & 0x00FFFFFFu) << 8;
}

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
