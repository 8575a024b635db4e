#pragma once
// Little-endian, varint-capable byte writing and reading for the recording format
// (docs/recording-format.md). The writer appends to a caller's buffer; the reader checks every
// read against the end of its input and remembers the first failure as "<field>: <reason>", so
// decoding code reads a whole record and checks ok() once, and the message names the field.
//
// Varints are LEB128 (7 bits per byte, low group first, at most 10 bytes); signed values are
// zigzag-mapped first (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...). Floats travel as their IEEE-754 bits.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace posecast::replay {

class WireWriter {
 public:
  explicit WireWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { fixed(v, 2); }
  void u32(uint32_t v) { fixed(v, 4); }
  void u64(uint64_t v) { fixed(v, 8); }
  void f32(float v);
  void varint(uint64_t v);
  void svarint(int64_t v) { varint(zigzag(v)); }
  void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void str(std::string_view s);  // varint length, then the bytes
  std::size_t size() const { return out_.size(); }

  static uint64_t zigzag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }

 private:
  void fixed(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>& out_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> in) : in_(in) {}

  // Each read returns 0 (or empty) once the reader has failed, and fails it when the input
  // ends first or the value is malformed; `field` names what was being read.
  uint8_t u8(const char* field);
  uint16_t u16(const char* field) { return static_cast<uint16_t>(fixed(2, field)); }
  uint32_t u32(const char* field) { return static_cast<uint32_t>(fixed(4, field)); }
  uint64_t u64(const char* field) { return fixed(8, field); }
  float f32(const char* field);
  // Fails when the value exceeds `max` (so narrowing casts after it are safe).
  uint64_t varint(const char* field, uint64_t max = UINT64_MAX);
  int64_t svarint(const char* field);
  std::string str(const char* field, std::size_t max_bytes);
  std::span<const uint8_t> bytes(std::size_t n, const char* field);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }  // "<field>: <reason>"; empty when ok
  // Records a failure found by the caller's own validation (the first one wins).
  void fail(const std::string& field, const std::string& reason);

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  uint64_t fixed(std::size_t n, const char* field);
  std::span<const uint8_t> in_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace posecast::replay
