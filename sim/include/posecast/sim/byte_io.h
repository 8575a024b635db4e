#pragma once
// Explicit little-endian serialisation: the same bytes on every host, no struct dumps, no
// padding. ByteReader checks every read against the end and remembers the first failure, so
// parsing code can read a whole record and check once.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace posecast::sim {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u32(bits);
  }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>& out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

  // Each read returns 0 past the end and marks the reader failed.
  uint8_t u8() { return static_cast<uint8_t>(get(1)); }
  uint16_t u16() { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  int32_t i32() { return static_cast<int32_t>(static_cast<uint32_t>(get(4))); }
  int64_t i64() { return static_cast<int64_t>(get(8)); }
  float f32() {
    const uint32_t bits = u32();
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }

  bool failed() const { return failed_; }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  uint64_t get(std::size_t n) {
    if (failed_ || in_.size() - pos_ < n) {
      failed_ = true;
      return 0;
    }
    uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(in_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }
  std::span<const uint8_t> in_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace posecast::sim
