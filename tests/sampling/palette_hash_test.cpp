// hash_palette (version 2, hash.cpp): what its contract promises, independent of golden values.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "posecast/hash.h"

namespace posecast {
namespace {

// A palette of `count` distinct, non-trivial matrices (every word differs from its neighbours).
std::vector<glm::mat4> sample_palette(std::size_t count) {
  std::vector<glm::mat4> palette(count);
  for (std::size_t j = 0; j < count; ++j)
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r)
        palette[j][c][r] = static_cast<float>(j) * 0.25f + static_cast<float>(c * 4 + r) * 0.0625f - 1.0f;
  return palette;
}

void flip_bit(glm::mat4& m, int word, int bit) {
  float* f = &m[word / 4][word % 4];
  uint32_t bits;
  std::memcpy(&bits, f, sizeof bits);
  bits ^= 1u << bit;
  std::memcpy(f, &bits, sizeof bits);
}

// Every single-bit change of every float, in palettes of odd and even length (the two chains
// of hash.cpp and the odd tail), gives a hash different from the original and from each other.
TEST(PaletteHash, EverySingleBitFlipChangesTheHash) {
  for (const std::size_t count : {1u, 2u, 5u, 24u}) {
    const std::vector<glm::mat4> palette = sample_palette(count);
    const uint64_t original = hash_palette(palette);
    std::map<uint64_t, std::string> seen{{original, "the original"}};
    for (std::size_t j = 0; j < count; ++j) {
      for (int word = 0; word < 16; ++word) {
        for (int bit = 0; bit < 32; ++bit) {
          std::vector<glm::mat4> changed = palette;
          flip_bit(changed[j], word, bit);
          const std::string name = "matrix " + std::to_string(j) + " word " +
                                   std::to_string(word) + " bit " + std::to_string(bit);
          const auto [it, added] = seen.emplace(hash_palette(changed), name);
          ASSERT_TRUE(added) << "count " << count << ": " << name << " has the hash of " << it->second;
        }
      }
    }
    EXPECT_EQ(seen.size(), 1 + count * 16 * 32);
  }
}

// Two sign flips of the same entry in different matrices (the pattern that cancels in a plain
// 32-bit multiply-xor lane, whose top bit never reaches lower bits) still change the hash.
TEST(PaletteHash, PairedSignFlipsDoNotCancel) {
  const std::vector<glm::mat4> palette = sample_palette(24);
  const uint64_t original = hash_palette(palette);
  for (std::size_t a = 0; a < palette.size(); ++a) {
    for (std::size_t b = a + 1; b < palette.size(); ++b) {
      std::vector<glm::mat4> changed = palette;
      flip_bit(changed[a], 5, 31);
      flip_bit(changed[b], 5, 31);
      EXPECT_NE(hash_palette(changed), original) << a << " " << b;
    }
  }
}

// Any two single-bit flips of one entry in two matrices of the same chain (matrices 0 and 2)
// or of two chains (0 and 1): the case that cancels when a step only multiplies (a flip of bit
// 28 leaves bit 28 set in the product, which a rotation turns into a bit a later word's flip
// undoes).
TEST(PaletteHash, TwoFlipsInOneEntryDoNotCancel) {
  const std::vector<glm::mat4> palette = sample_palette(5);
  const uint64_t original = hash_palette(palette);
  for (const std::size_t second : {1u, 2u}) {
    for (int word = 0; word < 16; ++word) {
      for (int bit_a = 0; bit_a < 32; ++bit_a) {
        for (int bit_b = 0; bit_b < 32; ++bit_b) {
          std::vector<glm::mat4> changed = palette;
          flip_bit(changed[0], word, bit_a);
          flip_bit(changed[second], word, bit_b);
          ASSERT_NE(hash_palette(changed), original)
              << "matrices 0 and " << second << " word " << word << " bits " << bit_a << ", " << bit_b;
        }
      }
    }
  }
}

// The length is part of the hash (a palette is not its prefix), swapping two matrices changes
// it, and an empty palette is a valid input.
TEST(PaletteHash, LengthAndOrderMatter) {
  const std::vector<glm::mat4> palette = sample_palette(4);
  const std::vector<glm::mat4> prefix(palette.begin(), palette.begin() + 3);
  EXPECT_NE(hash_palette(palette), hash_palette(prefix));
  std::vector<glm::mat4> swapped = palette;
  std::swap(swapped[0], swapped[2]);
  EXPECT_NE(hash_palette(palette), hash_palette(swapped));
  std::swap(swapped[0], swapped[1]);  // even and odd chains
  EXPECT_NE(hash_palette(palette), hash_palette(swapped));
  // Empty vs one all-zero matrix: only the count tells them apart (zero bits in every lane).
  EXPECT_NE(hash_palette({}), hash_palette(std::vector<glm::mat4>(1, glm::mat4(0.0f))));
  EXPECT_NE(hash_palette({}), hash_palette(prefix));
}

}  // namespace
}  // namespace posecast
