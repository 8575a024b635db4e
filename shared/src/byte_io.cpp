#include "posecast/byte_io.h"

#include <cstring>

namespace posecast {

void ByteWriter::f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  u32(bits);
}

void ByteWriter::varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<uint8_t>(v));
}

void ByteWriter::str(std::string_view s) {
  varint(s.size());
  out_.insert(out_.end(), s.begin(), s.end());
}

void ByteReader::fail(const std::string& field, const std::string& reason) {
  if (error_.empty()) error_ = field + ": " + reason;
}

uint64_t ByteReader::fixed(std::size_t n, const char* field) {
  if (!ok()) return 0;
  if (remaining() < n) {
    fail(field, "truncated");
    return 0;
  }
  uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(in_[pos_ + i]) << (8 * i);
  pos_ += n;
  return v;
}

float ByteReader::f32(const char* field) {
  const uint32_t bits = u32(field);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

uint64_t ByteReader::varint(const char* field, uint64_t max) {
  if (!ok()) return 0;
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (remaining() == 0) {
      fail(field, "truncated");
      return 0;
    }
    const uint8_t b = in_[pos_++];
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && b > 1) {
      fail(field, "varint overflows 64 bits");
      return 0;
    }
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) {
      if (v > max) {
        fail(field, std::to_string(v) + " exceeds " + std::to_string(max));
        return 0;
      }
      return v;
    }
  }
  fail(field, "varint longer than 10 bytes");
  return 0;
}

int64_t ByteReader::svarint(const char* field) {
  const uint64_t z = varint(field);
  return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
}

std::string ByteReader::str(const char* field, std::size_t max_bytes) {
  const uint64_t n = varint(field, max_bytes);
  const std::span<const uint8_t> b = bytes(static_cast<std::size_t>(n), field);
  return std::string(b.begin(), b.end());
}

std::span<const uint8_t> ByteReader::bytes(std::size_t n, const char* field) {
  if (!ok()) return {};
  if (remaining() < n) {
    fail(field, "truncated (" + std::to_string(n) + " bytes announced, " +
                    std::to_string(remaining()) + " left)");
    return {};
  }
  const std::span<const uint8_t> out = in_.subspan(pos_, n);
  pos_ += n;
  return out;
}

}  // namespace posecast
