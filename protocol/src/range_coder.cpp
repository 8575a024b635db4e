#include "posecast/protocol/range_coder.h"

#include <algorithm>

namespace posecast::protocol {

void RangeEncoder::finish(bool bytes_follow) {
  const uint64_t last = low_ + range_ - 1;
  int dont_care_bytes = 0;
  if (!bytes_follow) {
    // Any value in [low_, low_ + range_) decodes the same symbols; the one with the most
    // trailing zero bits leaves the most zero bytes to drop.
    for (int k = 32; k >= 0; --k) {
      const uint64_t mask = (uint64_t{1} << k) - 1;
      const uint64_t value = (low_ + mask) & ~mask;
      if (value <= last) {
        low_ = value;
        break;
      }
    }
  } else {
    // The largest aligned block [value, value + mask] inside the interval: whatever bits
    // follow the kept ones, the decoder's value stays in the interval. The bytes wholly inside
    // the block's free low bits are not written.
    for (int k = 32; k >= 0; --k) {
      const uint64_t mask = (uint64_t{1} << k) - 1;
      const uint64_t value = (low_ + mask) & ~mask;
      if (value + mask <= last) {
        low_ = value;
        dont_care_bytes = k / 8;
        break;
      }
    }
  }
  for (int i = 0; i < 5; ++i) shift_low();
  const uint8_t* begin = out_.data() + stream_start_;
  if (bytes_follow) {
    for (int i = 0; i < dont_care_bytes && next_ != begin; ++i) --next_;
  } else {
    // Drop this stream's trailing zero bytes: the decoder supplies zeros past the end.
    while (next_ != begin && next_[-1] == 0) --next_;
  }
  if (destination_ == &out_) {
    out_.resize(static_cast<std::size_t>(next_ - out_.data()));
  } else {
    destination_->insert(destination_->end(), begin, static_cast<const uint8_t*>(next_));
  }
  next_ = end_ = nullptr;
}

WriteRoom RangeEncoder::grow(std::vector<uint8_t>& out, std::size_t stream_start, uint8_t* next) {
  const auto used = static_cast<std::size_t>(next - out.data());
  out.resize(out.size() + std::max(kChunk, out.size() - stream_start));
  return {out.data() + used, out.data() + out.size()};
}

void RawBitWriter::append_reversed(std::vector<uint8_t>& out) {
  while (pending_ >= 8) {
    pending_ -= 8;
    make_room(1);
    *next_++ = static_cast<uint8_t>(buffer_ >> pending_);
  }
  if (pending_ > 0) {
    make_room(1);
    *next_++ = static_cast<uint8_t>(buffer_ << (8 - pending_));
    pending_ = 0;
  }
  const std::size_t start = out.size();
  const auto count = static_cast<std::size_t>(next_ - bytes_.data());
  out.resize(start + count);
  std::reverse_copy(bytes_.data(), next_, out.data() + start);
}

WriteRoom RawBitWriter::grow(std::vector<uint8_t>& bytes, uint8_t* next) {
  const auto used = static_cast<std::size_t>(next - bytes.data());
  bytes.resize(2 * bytes.size());
  return {bytes.data() + used, bytes.data() + bytes.size()};
}

}  // namespace posecast::protocol
