#pragma once
// Bit packing, most significant bit first. The reader is bounds-checked: reading past the end
// returns zeros and sets failed(), so a decoder can read a whole record and check once.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace posecast::protocol {

class BitWriter {
 public:
  // Appends to `out` (not cleared), which must outlive the writer.
  explicit BitWriter(std::vector<uint8_t>& out) : out_(out) {}

  // The low `count` (0..32) bits of `value`.
  void write(uint32_t value, uint32_t count) {
    for (uint32_t i = count; i > 0; --i) write_bit((value >> (i - 1)) & 1u);
  }
  void write_bit(uint32_t bit) {
    if (used_ == 0) out_.push_back(0);
    if (bit) out_.back() = static_cast<uint8_t>(out_.back() | (0x80u >> used_));
    used_ = (used_ + 1) & 7u;
  }
  // Order-k Exp-Golomb code of a value < 2^40 (k <= 24).
  void write_exp_golomb(uint64_t value, uint32_t k) {
    const uint64_t v = value + (uint64_t{1} << k);
    uint32_t bits = 0;
    while ((v >> bits) > 1) ++bits;  // index of the leading one
    for (uint32_t i = k; i < bits; ++i) write_bit(0);
    for (uint32_t i = bits + 1; i > 0; --i) write_bit(static_cast<uint32_t>((v >> (i - 1)) & 1u));
  }

 private:
  std::vector<uint8_t>& out_;
  uint32_t used_ = 0;  // bits used in out_.back()
};

class BitReader {
 public:
  explicit BitReader(std::span<const uint8_t> in) : in_(in) {}

  uint32_t read(uint32_t count) {
    uint32_t value = 0;
    for (uint32_t i = 0; i < count; ++i) value = (value << 1) | read_bit();
    return value;
  }
  uint32_t read_bit() {
    if (bit_pos_ >= in_.size() * 8) {
      failed_ = true;
      return 0;
    }
    const uint32_t bit = (in_[bit_pos_ >> 3] >> (7u - (bit_pos_ & 7u))) & 1u;
    ++bit_pos_;
    return bit;
  }
  // Inverse of BitWriter::write_exp_golomb; fails (returns 0, failed()) on a code of more
  // than 40 value bits or on running out of input.
  uint64_t read_exp_golomb(uint32_t k) {
    uint32_t zeros = 0;
    while (read_bit() == 0) {
      if (failed_ || ++zeros + k > 40) {
        failed_ = true;
        return 0;
      }
    }
    const uint32_t bits = zeros + k;
    uint64_t v = 1;
    for (uint32_t i = 0; i < bits; ++i) v = (v << 1) | read_bit();
    return v - (uint64_t{1} << k);
  }

  bool failed() const { return failed_; }
  // Whole bytes touched so far.
  std::size_t bytes_consumed() const { return (bit_pos_ + 7) / 8; }
  std::size_t bits_consumed() const { return bit_pos_; }
  std::size_t size() const { return in_.size(); }

 private:
  std::span<const uint8_t> in_;
  std::size_t bit_pos_ = 0;
  bool failed_ = false;
};

}  // namespace posecast::protocol
