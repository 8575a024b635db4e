#include "posecast/hash.h"

#include <cinttypes>
#include <cstdio>

namespace posecast {

uint64_t hash_palette(std::span<const glm::mat4> palette) {
  uint64_t lanes[4] = {Hasher::kOffsetBasis, Hasher::kOffsetBasis ^ 1u, Hasher::kOffsetBasis ^ 2u,
                       Hasher::kOffsetBasis ^ 3u};
  for (const glm::mat4& m : palette) {
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        uint32_t bits;
        std::memcpy(&bits, &m[c][r], sizeof bits);
        lanes[r] = (lanes[r] ^ bits) * Hasher::kPrime;
      }
    }
  }
  Hasher h;
  h.add_u64(palette.size());
  for (uint64_t lane : lanes) h.add_u64(lane);
  return h.value();
}

uint64_t hash_pose(std::span<const Transform> pose) {
  Hasher h;
  h.add_u64(pose.size());
  for (const Transform& t : pose) {
    h.add_float(t.translation.x);
    h.add_float(t.translation.y);
    h.add_float(t.translation.z);
    h.add_float(t.rotation.x);
    h.add_float(t.rotation.y);
    h.add_float(t.rotation.z);
    h.add_float(t.rotation.w);
    h.add_float(t.scale.x);
    h.add_float(t.scale.y);
    h.add_float(t.scale.z);
  }
  return h.value();
}

uint64_t hash_bytes(std::span<const uint8_t> bytes) {
  Hasher h;
  h.add_u64(bytes.size());
  for (uint8_t b : bytes) h.add_u32(b);
  return h.value();
}

std::string hash_hex(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, hash);
  return text;
}

}  // namespace posecast
