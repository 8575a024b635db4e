#pragma once
// Adaptive binary range coder (the LZMA design: 32-bit range, carry propagation through a
// cached byte, 12-bit probabilities), used by the pose codec for its residuals.
//
// Two additions for short messages (one entity's pose is often under 100 bytes):
//  - the always-zero first byte of an LZMA stream is not written;
//  - finish() picks the value in the final interval with the most trailing zero bits and
//    drops trailing zero bytes: the decoder reads zeros past the end of its input.
// Together they save 2-4 bytes per stream.
//
// The decoder is safe on any input: reads past the end yield zero bytes (counted, so the
// caller can reject a stream that needed more than it had), and every decision terminates.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace posecast::protocol {

// Probability that the next bit is 0, in 1/4096. Adapts by 1/2^shift of the error per bit.
struct BitModel {
  static constexpr uint32_t kBits = 12;
  static constexpr uint32_t kOne = 1u << kBits;
  uint16_t p0 = kOne / 2;

  BitModel() = default;
  explicit constexpr BitModel(uint16_t initial_p0) : p0(initial_p0) {}
};

// Adaptation speed: 4 learns within a few dozen symbols, which is what one pose offers.
inline constexpr uint32_t kBitModelShift = 4;

class RangeEncoder {
 public:
  // Appends to `out` (not cleared), which must outlive the encoder.
  explicit RangeEncoder(std::vector<uint8_t>& out) : out_(out), stream_start_(out.size()) {}

  // Written without data-dependent branches (the bit is as good as random to the branch
  // predictor); compilers turn the selects into conditional moves.
  void encode(BitModel& model, uint32_t bit) {
    const uint32_t p0 = model.p0;
    const uint32_t bound = (range_ >> BitModel::kBits) * p0;
    const uint32_t up = p0 + ((BitModel::kOne - p0) >> kBitModelShift);
    const uint32_t down = p0 - (p0 >> kBitModelShift);
    low_ += bit ? bound : 0u;
    range_ = bit ? range_ - bound : bound;
    model.p0 = static_cast<uint16_t>(bit ? down : up);
    normalize();
  }

  // `count` (0..32) equiprobable bits of `value`, most significant first, up to 16 per step.
  void encode_direct(uint32_t value, uint32_t count) {
    while (count > 0) {
      const uint32_t take = count > 16 ? 16 : count;
      count -= take;
      range_ >>= take;
      low_ += static_cast<uint64_t>(range_) * ((value >> count) & ((1u << take) - 1u));
      normalize();
    }
  }

  // Flushes the final interval. The encoder must not be used afterwards.
  void finish();

 private:
  void normalize() {
    while (range_ < (1u << 24)) {
      range_ <<= 8;
      shift_low();
    }
  }
  void shift_low() {
    // Bits 24..31 of low_ become the next byte unless a carry may still reach them
    // (0xFF bytes wait in cache_size_ until the carry is known).
    if (static_cast<uint32_t>(low_) < 0xFF000000u || (low_ >> 32) != 0) {
      const auto carry = static_cast<uint8_t>(low_ >> 32);
      uint8_t byte = cache_;
      do {
        if (!skip_first_byte_) out_.push_back(static_cast<uint8_t>(byte + carry));
        skip_first_byte_ = false;  // an LZMA-style stream's first byte is always 0: implied
        byte = 0xFF;
      } while (--cache_size_ != 0);
      cache_ = static_cast<uint8_t>(low_ >> 24);
    }
    ++cache_size_;
    low_ = (low_ & 0x00FFFFFFu) << 8;
  }

  std::vector<uint8_t>& out_;
  std::size_t stream_start_;  // out_.size() when this stream began
  uint64_t low_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
  uint8_t cache_ = 0;
  uint64_t cache_size_ = 1;
  bool skip_first_byte_ = true;
};

class RangeDecoder {
 public:
  // `in` must outlive the decoder.
  explicit RangeDecoder(std::span<const uint8_t> in) : in_(in) {
    for (int i = 0; i < 4; ++i) code_ = (code_ << 8) | next_byte();
  }

  uint32_t decode(BitModel& model) {
    const uint32_t p0 = model.p0;
    const uint32_t bound = (range_ >> BitModel::kBits) * p0;
    const uint32_t up = p0 + ((BitModel::kOne - p0) >> kBitModelShift);
    const uint32_t down = p0 - (p0 >> kBitModelShift);
    const uint32_t bit = code_ >= bound ? 1u : 0u;
    code_ -= bit ? bound : 0u;
    range_ = bit ? range_ - bound : bound;
    model.p0 = static_cast<uint16_t>(bit ? down : up);
    normalize();
    return bit;
  }

  uint32_t decode_direct(uint32_t count) {
    uint32_t value = 0;
    while (count > 0) {
      const uint32_t take = count > 16 ? 16 : count;
      count -= take;
      range_ >>= take;
      // A well-formed stream has code_ < range_ << take here; a corrupt one may not, so the
      // digit is clamped (the result is garbage, never undefined).
      uint32_t digit = code_ / range_;
      const uint32_t max_digit = (1u << take) - 1u;
      if (digit > max_digit) digit = max_digit;
      code_ -= digit * range_;
      value = (value << take) | digit;
      normalize();
    }
    return value;
  }

  // Bytes read past the end of the input (zeros supplied). A stream from RangeEncoder never
  // needs more than the zero bytes finish() dropped; callers bound this.
  std::size_t overrun() const { return overrun_; }
  // Input bytes consumed so far (including the 4-byte look-ahead).
  std::size_t consumed() const { return pos_; }

 private:
  uint32_t next_byte() {
    if (pos_ < in_.size()) return in_[pos_++];
    ++overrun_;
    return 0;
  }
  void normalize() {
    while (range_ < (1u << 24)) {
      range_ <<= 8;
      code_ = (code_ << 8) | next_byte();
    }
  }

  std::span<const uint8_t> in_;
  std::size_t pos_ = 0;
  std::size_t overrun_ = 0;
  uint32_t code_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
};

}  // namespace posecast::protocol
