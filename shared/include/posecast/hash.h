#pragma once
// Stable 64-bit hashing of what posecast claims is deterministic (palettes, poses, worlds).
// The input is a stream of 32-bit words (floats contribute their IEEE bit patterns, 64-bit
// values two words, low first), so a hash changes exactly when a bit does and does not depend
// on the host's byte order, compiler or CPU. Not cryptographic.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "posecast/transform.h"

namespace posecast {

class Hasher {
 public:
  // FNV-1a's 64-bit constants, applied per 32-bit word, then a splitmix64 finaliser in value().
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  static constexpr uint64_t kPrime = 0x100000001b3ull;

  void add_u32(uint32_t v) { state_ = (state_ ^ v) * kPrime; }
  void add_u64(uint64_t v) {
    add_u32(static_cast<uint32_t>(v));
    add_u32(static_cast<uint32_t>(v >> 32));
  }
  void add_i64(int64_t v) { add_u64(static_cast<uint64_t>(v)); }
  void add_float(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    add_u32(bits);
  }
  uint64_t value() const {
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_ = kOffsetBasis;
};

// Hash of a palette (version 2): every matrix, column-major, 16 floats each, on 32-bit integer
// lanes eight at a time (hash.cpp), then the lanes and the count through Hasher. Fixed by the
// bits alone; any single changed float changes it. Recordings and golden files store these
// values, so changing the function is a format change (kRecordingFormatVersion).
uint64_t hash_palette(std::span<const glm::mat4> palette);
// Hash of a local pose: translation xyz, rotation xyzw, scale xyz per node.
uint64_t hash_pose(std::span<const Transform> pose);
// Hash of raw bytes (file contents), 8 bits at a time.
uint64_t hash_bytes(std::span<const uint8_t> bytes);
// A hash as printed everywhere (golden files, logs, reports): 16 lower-case hex digits.
std::string hash_hex(uint64_t hash);

}  // namespace posecast
