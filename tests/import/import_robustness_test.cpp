// Malformed input never crashes or reads out of bounds: every truncation of a small .glb and
// bounded numbers of deterministic random byte mutations of a small glTF, a small .glb and
// Fox.glb. Each run must either load or fail with a message that names the file. Run under
// ASan+UBSan (build-asan) to catch out-of-bounds reads.

#include <fstream>
#include <random>

#include "import_test_util.h"

namespace posecast::testing {
namespace {

void expect_clean_outcome(const std::vector<uint8_t>& bytes, const std::string& name) {
  Result<Model> r = import_gltf_memory(bytes, name);
  if (r.ok()) {
    for (const Rig& rig : r->rigs) {
      EXPECT_TRUE(rig.skeleton.validate().ok());
      for (const Clip& c : rig.clips) EXPECT_TRUE(c.validate(rig.skeleton).ok());
    }
  } else {
    EXPECT_THAT(r.error().message, ::testing::StartsWith(name + ": "));
  }
}

// Small document with something of everything: skin, inverse binds, animation, sparse data.
GltfBuilder small_document() {
  SkinnedTriangle t(/*with_inverse_binds=*/true);
  t.b.add_animation({{0, "translation", {0.0f, 0.5f, 1.0f}, {0, 0, 0, 0, 1, 0, 0, 0, 0}},
                     {1, "rotation", {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0.6f, 0, 0.8f}},
                     {1, "scale", {0.0f, 1.0f}, {1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0, 1, 1, 1, 0, 0, 0}, "CUBICSPLINE"}},
                    "mix");
  const uint8_t idx[] = {2};
  const float val[] = {9, 9, 9};
  const int iv = t.b.add_view(idx, sizeof idx);
  const int vv = t.b.add_view(val, sizeof val);
  t.b.json()["accessors"][static_cast<std::size_t>(t.positions)]["sparse"] = {
      {"count", 1}, {"indices", {{"bufferView", iv}, {"componentType", kUnsignedByte}}}, {"values", {{"bufferView", vv}}}};
  return t.b;
}

TEST(ImportRobustness, SmallDocumentsLoad) {
  const GltfBuilder b = small_document();
  Result<Model> a = import_doc(b);
  ASSERT_TRUE(a.ok()) << a.error().message;
  Result<Model> g = import_glb(b);
  ASSERT_TRUE(g.ok()) << g.error().message;
}

TEST(ImportRobustness, EveryTruncationOfASmallGlbFailsCleanly) {
  const std::vector<uint8_t> glb = small_document().to_glb();
  for (std::size_t n = 0; n < glb.size(); ++n) {
    const std::vector<uint8_t> cut(glb.begin(), glb.begin() + static_cast<std::ptrdiff_t>(n));
    Result<Model> r = import_gltf_memory(cut, "cut.glb");
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes loaded";
    EXPECT_THAT(r.error().message, ::testing::StartsWith("cut.glb: "));
  }
}

// A prefix whose header length is patched to the prefix size, so the cut reaches the chunk
// checks, the JSON parser and the buffer reads instead of stopping at the header.
std::vector<uint8_t> truncated_with_length(const std::vector<uint8_t>& glb, std::size_t n) {
  std::vector<uint8_t> cut(glb.begin(), glb.begin() + static_cast<std::ptrdiff_t>(n));
  if (n >= 12)
    for (int i = 0; i < 4; ++i) cut[8 + static_cast<std::size_t>(i)] = static_cast<uint8_t>(n >> (8 * i));
  return cut;
}

TEST(ImportRobustness, EveryTruncationWithAPatchedLengthFailsCleanly) {
  const std::vector<uint8_t> glb = small_document().to_glb();
  for (std::size_t n = 0; n < glb.size(); ++n) {
    Result<Model> r = import_gltf_memory(truncated_with_length(glb, n), "cut.glb");
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes loaded";
    EXPECT_THAT(r.error().message, ::testing::StartsWith("cut.glb: "));
  }
}

TEST(ImportRobustness, TruncationsOfFoxGlbFailCleanly) {
  SKIP_WITHOUT_ASSET("Fox.glb");
  std::ifstream in(asset_path("Fox.glb"), std::ios::binary);
  const std::vector<uint8_t> fox((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Every length in the header and JSON region, then a stride through the BIN chunk.
  for (std::size_t n = 0; n < fox.size(); n += (n < 4096 ? 1 : 997)) {
    // A proper prefix always lacks bytes the document needs (the BIN chunk ends the file), so
    // no cut may load, patched length or not.
    const std::vector<uint8_t> cut(fox.begin(), fox.begin() + static_cast<std::ptrdiff_t>(n));
    for (const std::vector<uint8_t>& bytes : {cut, truncated_with_length(fox, n)}) {
      Result<Model> r = import_gltf_memory(bytes, "Fox.glb");
      ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes loaded";
      EXPECT_THAT(r.error().message, ::testing::StartsWith("Fox.glb: "));
    }
  }
}

// Flips 1..4 random bytes (to random values) per mutant.
void mutate_and_import(const std::vector<uint8_t>& original, const std::string& name, int mutants,
                       uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> flips(1, 4);
  for (int i = 0; i < mutants; ++i) {
    std::vector<uint8_t> m = original;
    const int f = flips(rng);
    for (int k = 0; k < f; ++k) m[position(rng)] = static_cast<uint8_t>(byte(rng));
    expect_clean_outcome(m, name);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "mutant " << i << " (seed " << seed << ")";
      return;
    }
  }
}

// Mutates only the BIN chunk / buffer bytes and the digits of the JSON, where mutations reach
// past the JSON parser into accessors and key data.
void mutate_digits_and_import(const std::vector<uint8_t>& original, const std::string& name, int mutants,
                              uint32_t seed) {
  std::vector<std::size_t> digits;
  for (std::size_t i = 0; i < original.size(); ++i)
    if (original[i] >= '0' && original[i] <= '9') digits.push_back(i);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, digits.size() - 1);
  std::uniform_int_distribution<int> digit(0, 9);
  for (int i = 0; i < mutants; ++i) {
    std::vector<uint8_t> m = original;
    m[digits[pick(rng)]] = static_cast<uint8_t>('0' + digit(rng));
    expect_clean_outcome(m, name);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "digit mutant " << i << " (seed " << seed << ")";
      return;
    }
  }
}

TEST(ImportRobustness, RandomByteMutationsOfASmallGltf) {
  mutate_and_import(small_document().to_gltf(), "m.gltf", 1500, 20261130u);
}

TEST(ImportRobustness, RandomDigitMutationsOfASmallGltf) {
  // The JSON's numbers (indices, offsets, counts) and base64 digits: these reach the
  // importer's own checks rather than stopping in the JSON parser.
  mutate_digits_and_import(small_document().to_gltf(), "d.gltf", 1500, 7u);
}

TEST(ImportRobustness, RandomByteMutationsOfASmallGlb) {
  mutate_and_import(small_document().to_glb(), "m.glb", 1500, 424242u);
}

TEST(ImportRobustness, RandomByteMutationsOfFoxGlb) {
  SKIP_WITHOUT_ASSET("Fox.glb");
  std::ifstream in(asset_path("Fox.glb"), std::ios::binary);
  const std::vector<uint8_t> fox((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  mutate_and_import(fox, "Fox.glb", 300, 99u);
  mutate_digits_and_import(fox, "Fox.glb", 300, 100u);
}

}  // namespace
}  // namespace posecast::testing
