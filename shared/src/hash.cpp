#include "posecast/hash.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "simd4.h"

namespace posecast {
namespace {

// Palette hashing (version 2) on independent 32-bit lanes, each lane taking one matrix entry
// per step:
//   k = word * kC1;  k ^= k >> 16                  (the word alone: off the lane's chain)
//   lane = rotl((lane ^ k) * kC2, 15)
// Every part is a bijection (odd multipliers, an xor-shift, a rotation), so a step is a
// bijection of the lane for a fixed word and of the word for a fixed lane: changing any one
// word of the palette always changes its lane's final value. Pre-mixing the word matters: a
// multiplication only moves a flipped bit upwards, so without it a high-bit flip leaves a
// one- or two-bit difference that a flip in a later word can cancel (palette_hash_test.cpp
// caught that in a draft). Integer operations only, so every compiler, CPU and vector width
// gives the same bits; GCC/Clang generic vectors make it eight lanes per instruction.
// Cost, 24 matrices, this machine: about 70 ns, against 210 ns for version 1 (four serial
// 64-bit FNV-1a chains, bound by 384 scalar 64-bit multiplications: 15 % of a replay), and
// 90 ns for MurmurHash3's full block step (two multiplications per word).
using Lanes8 = uint32_t __attribute__((vector_size(32)));
constexpr uint32_t kC1 = 0xcc9e2d51u;  // MurmurHash3's multipliers
constexpr uint32_t kC2 = 0x1b873593u;

template <int Bits>
POSECAST_INLINE Lanes8 rotl(Lanes8 v) {
  return (v << Bits) | (v >> (32 - Bits));
}

POSECAST_INLINE Lanes8 mix_lanes(Lanes8 lanes, Lanes8 words) {
  Lanes8 k = words * kC1;
  k ^= k >> 16;
  return rotl<15>((lanes ^ k) * kC2);
}

// MurmurHash3's finaliser per lane (a bijection with full avalanche): after it, the difference
// a change leaves in a lane no longer has a pattern that another accumulator's could match.
POSECAST_INLINE Lanes8 avalanche(Lanes8 h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

POSECAST_INLINE Lanes8 load_words(const float* p) {
  Lanes8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

POSECAST_INLINE Lanes8 seed_lanes(uint32_t first) {
  Lanes8 v;
  for (int i = 0; i < 8; ++i) v[i] = first + static_cast<uint32_t>(i) * 0x9e3779b9u;
  return v;
}

// Four accumulators, independent chains so the steps overlap: the even matrices' columns 0-1
// and 2-3, and the odd matrices' likewise. Each is finalised, then they are folded to eight
// lanes (out) by xor.
POSECAST_INLINE void palette_lanes_inline(const glm::mat4* palette, std::size_t count,
                                          uint32_t out[8]) {
  Lanes8 even_lo = seed_lanes(0x243f6a88u), even_hi = seed_lanes(0x85a308d3u);
  Lanes8 odd_lo = seed_lanes(0x13198a2eu), odd_hi = seed_lanes(0x03707344u);
  std::size_t j = 0;
  for (; j + 2 <= count; j += 2) {
    even_lo = mix_lanes(even_lo, load_words(&palette[j][0].x));
    even_hi = mix_lanes(even_hi, load_words(&palette[j][2].x));
    odd_lo = mix_lanes(odd_lo, load_words(&palette[j + 1][0].x));
    odd_hi = mix_lanes(odd_hi, load_words(&palette[j + 1][2].x));
  }
  if (j < count) {
    even_lo = mix_lanes(even_lo, load_words(&palette[j][0].x));
    even_hi = mix_lanes(even_hi, load_words(&palette[j][2].x));
  }
  const Lanes8 folded =
      (avalanche(even_lo) ^ avalanche(even_hi)) ^ (avalanche(odd_lo) ^ avalanche(odd_hi));
  std::memcpy(out, &folded, sizeof folded);
}

// The target clones (simd4.h) take and pass no vectors: clang refuses vector arguments and
// returns in a function compiled for another ISA than its callee, even an inlined one.
POSECAST_HOT_CLONES
void palette_lanes(const glm::mat4* palette, std::size_t count, uint32_t out[8]) {
  palette_lanes_inline(palette, count, out);
}

}  // namespace


uint64_t hash_palette(std::span<const glm::mat4> palette) {
  uint32_t lanes[8];
  palette_lanes(palette.data(), palette.size(), lanes);
  Hasher h;
  h.add_u64(palette.size());
  for (uint32_t lane : lanes) h.add_u32(lane);
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
