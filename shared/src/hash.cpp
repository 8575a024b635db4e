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
// catches that). Integer operations only, so every compiler, CPU and vector width
// gives the same bits; GCC/Clang generic vectors make it eight or sixteen lanes per
// instruction.
// Cost, 24 matrices (BM_PaletteHash): about a third of four serial 64-bit FNV-1a chains
// (bound by 384 scalar 64-bit multiplications: 15 % of a replay), and about 0.8x MurmurHash3's
// full block step (two multiplications per word). With AVX-512 the sixteen-lane steps of its
// clone take about 0.8x the eight-lane ones; about a third of what is left is the serial
// Hasher over the folded lanes.
constexpr uint32_t kC1 = 0xcc9e2d51u;  // MurmurHash3's multipliers
constexpr uint32_t kC2 = 0x1b873593u;

// Sixteen lanes: one whole matrix per load. Lanes 0-7 are the "lo" accumulator of the
// definition below (columns 0-1), lanes 8-15 the "hi" one (columns 2-3): every lane operation
// is the 8-lane one, so the bits are the same; only the vector width differs. The AVX-512
// clone does a step in one instruction where the AVX2 one takes two (the compilers split a
// 64-byte generic vector into what the target has).
using Lanes16 = uint32_t __attribute__((vector_size(64)));

template <int Bits>
POSECAST_INLINE Lanes16 rotl(Lanes16 v) {
  return (v << Bits) | (v >> (32 - Bits));
}

POSECAST_INLINE Lanes16 mix_lanes(Lanes16 lanes, Lanes16 words) {
  Lanes16 k = words * kC1;
  k ^= k >> 16;
  return rotl<15>((lanes ^ k) * kC2);
}

// MurmurHash3's finaliser per lane (a bijection with full avalanche): after it, the difference
// a change leaves in a lane no longer has a pattern that another accumulator's could match.
POSECAST_INLINE Lanes16 avalanche(Lanes16 h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

POSECAST_INLINE Lanes16 load_matrix_words(const glm::mat4& m) {
  static_assert(sizeof(glm::mat4) == sizeof(Lanes16), "a mat4 is 16 packed floats");
  Lanes16 v;
  std::memcpy(&v, &m[0].x, sizeof v);
  return v;
}

// Lanes 0-7 seeded from `lo` and 8-15 from `hi`, each as first + lane * 0x9e3779b9.
POSECAST_INLINE Lanes16 seed_lanes(uint32_t lo, uint32_t hi) {
  Lanes16 v;
  for (int i = 0; i < 8; ++i) {
    v[i] = lo + static_cast<uint32_t>(i) * 0x9e3779b9u;
    v[i + 8] = hi + static_cast<uint32_t>(i) * 0x9e3779b9u;
  }
  return v;
}

// The definition, on 8-lane accumulators: four independent chains, so the steps overlap: the
// even matrices' columns 0-1 (even_lo) and 2-3 (even_hi), and the odd matrices' likewise
// (odd_lo, odd_hi), seeded 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344. Each is finalised
// (avalanche), then they are folded to eight lanes (out) by xor. Here even_lo and even_hi
// are the two halves of `even`, odd_lo and odd_hi of `odd`.
POSECAST_INLINE void palette_lanes_inline(const glm::mat4* palette, std::size_t count,
                                          uint32_t out[8]) {
  Lanes16 even = seed_lanes(0x243f6a88u, 0x85a308d3u);
  Lanes16 odd = seed_lanes(0x13198a2eu, 0x03707344u);
  std::size_t j = 0;
  for (; j + 2 <= count; j += 2) {
    even = mix_lanes(even, load_matrix_words(palette[j]));
    odd = mix_lanes(odd, load_matrix_words(palette[j + 1]));
  }
  if (j < count) even = mix_lanes(even, load_matrix_words(palette[j]));
  const Lanes16 folded = avalanche(even) ^ avalanche(odd);
  for (int i = 0; i < 8; ++i) out[i] = folded[i] ^ folded[i + 8];
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
