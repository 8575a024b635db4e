#pragma once
// Explicit little-endian serialisation, the same bytes on every host (no struct dumps, no
// padding): the World's snapshots (sim) and the recording format (replay,
// docs/recording-format.md). The writer appends to a caller's buffer; the reader checks every
// read against the end of its input and remembers the first failure as "<field>: <reason>", so
// decoding code reads a whole record and checks ok() once.
//
// Fixed-width integers are little-endian, floats travel as their IEEE-754 bits. Varints are
// LEB128 (7 bits per byte, low group first, at most 10 bytes); signed varints are
// zigzag-mapped first (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace posecast {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { fixed(v, 2); }
  void u32(uint32_t v) { fixed(v, 4); }
  void u64(uint64_t v) { fixed(v, 8); }
  void i32(int32_t v) { fixed(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { fixed(static_cast<uint64_t>(v), 8); }
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

// Reads what ByteWriter wrote. The reader does not own its input, which must outlive it.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

  // Each read returns 0 (or empty) once the reader has failed, and fails it when the input
  // ends first or the value is malformed. `field` names what was being read in error();
  // a caller that words its own errors from ok() may leave it out.
  uint8_t u8(const char* field = "value") { return static_cast<uint8_t>(fixed(1, field)); }
  uint16_t u16(const char* field = "value") { return static_cast<uint16_t>(fixed(2, field)); }
  uint32_t u32(const char* field = "value") { return static_cast<uint32_t>(fixed(4, field)); }
  uint64_t u64(const char* field = "value") { return fixed(8, field); }
  int32_t i32(const char* field = "value") {
    return static_cast<int32_t>(static_cast<uint32_t>(fixed(4, field)));
  }
  int64_t i64(const char* field = "value") { return static_cast<int64_t>(fixed(8, field)); }
  float f32(const char* field = "value");
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

}  // namespace posecast
