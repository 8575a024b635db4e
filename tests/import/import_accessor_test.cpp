// Accessor reading: bounds against buffer views and buffers, strides, alignment, sparse
// substitution errors. Each case breaks one thing in a valid animation sampler output.

#include "import_test_util.h"

namespace posecast::testing {
namespace {

// One node, one translation channel with two keys; returns the builder and the output accessor.
struct OneTrack {
  GltfBuilder b;
  int output = -1;
  OneTrack() {
    b.add_node({{"name", "n"}});
    b.add_animation({{0, "translation", {0.0f, 1.0f}, {0, 0, 0, 1, 2, 3}}});
    output = b.json()["animations"][0]["samplers"][0]["output"].get<int>();
  }
  nlohmann::json& input() { return b.json()["accessors"][0]; }
  nlohmann::json& accessor() { return b.json()["accessors"][static_cast<std::size_t>(output)]; }
  nlohmann::json& view() { return b.json()["bufferViews"][accessor()["bufferView"].get<std::size_t>()]; }
};

TEST(ImportAccessorErrors, ElementsRunPastTheBufferView) {
  OneTrack t;
  t.input()["count"] = 3;  // the view holds 2 floats
  EXPECT_IMPORT_ERROR(t.b, "accessors[0]",
                      "3 elements of 4 bytes (stride 4) from byteOffset 0 exceed bufferViews[0] of 8 bytes "
                      "(used by animations[0].samplers[0].input)");
}

TEST(ImportAccessorErrors, ByteOffsetPastTheBufferView) {
  OneTrack t;
  t.accessor()["byteOffset"] = 1000;
  EXPECT_IMPORT_ERROR(t.b, "accessors[1]", "from byteOffset 1000 exceed bufferViews[1]");
}

TEST(ImportAccessorErrors, BufferViewRunsPastTheBuffer) {
  OneTrack t;
  t.view()["byteLength"] = 4096;
  EXPECT_IMPORT_ERROR(t.b, "bufferViews[1]", "exceeds buffers[0]");
}

TEST(ImportAccessorErrors, BufferViewIndexOutOfRange) {
  OneTrack t;
  t.accessor()["bufferView"] = 40;
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].bufferView", "bufferView index 40 out of range");
}

TEST(ImportAccessorErrors, BufferIndexOutOfRange) {
  OneTrack t;
  t.view()["buffer"] = 3;
  EXPECT_IMPORT_ERROR(t.b, "bufferViews[1].buffer", "buffer index 3 out of range");
}

TEST(ImportAccessorErrors, StrideSmallerThanTheElement) {
  OneTrack t;
  t.view()["byteStride"] = 8;  // VEC3 float needs 12
  EXPECT_IMPORT_ERROR(t.b, "bufferViews[1].byteStride", "does not fit elements of 12 bytes of accessors[1]");
}

TEST(ImportAccessorErrors, MisalignedByteOffset) {
  OneTrack t;
  t.input()["byteOffset"] = 2;
  EXPECT_IMPORT_ERROR(t.b, "accessors[0].byteOffset", "not a multiple of the component size 4");
}

TEST(ImportAccessorErrors, ZeroCount) {
  OneTrack t;
  t.accessor()["count"] = 0;
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].count", "must be at least 1");
}

TEST(ImportAccessorErrors, HugeAccessorWithoutBufferView) {
  OneTrack t;
  t.accessor().erase("bufferView");
  t.accessor()["count"] = 1u << 30;
  // Checked before any allocation: the count mismatch with the input comes first here.
  EXPECT_IMPORT_ERROR(t.b, "animations[0].samplers[0].output", "1073741824 elements for 2 keys");
}

TEST(ImportAccessorErrors, HugeUnbackedInputIsRefusedBeforeAllocation) {
  OneTrack t;
  const int input = t.b.json()["animations"][0]["samplers"][0]["input"].get<int>();
  nlohmann::json& a = t.b.json()["accessors"][static_cast<std::size_t>(input)];
  a.erase("bufferView");
  a["count"] = 1u << 30;
  ImportOptions options;
  options.max_keys_per_track = 1u << 31;
  EXPECT_THAT(import_error(t.b, options), ::testing::HasSubstr("test.gltf: accessors[0].count: 1073741824 elements without a bufferView"));
}

// --- sparse -----------------------------------------------------------------------------------

// Makes the output accessor sparse with the given indices (UNSIGNED_BYTE) and values.
void make_sparse(OneTrack& t, const std::vector<uint8_t>& indices, const std::vector<float>& values,
                 int count) {
  const int iv = t.b.add_view(indices.data(), indices.size());
  const int vv = t.b.add_view(values.data(), values.size() * sizeof(float));
  t.accessor()["sparse"] = {{"count", count},
                            {"indices", {{"bufferView", iv}, {"componentType", kUnsignedByte}}},
                            {"values", {{"bufferView", vv}}}};
}

TEST(ImportAccessorErrors, SparseIndexOutOfRange) {
  OneTrack t;
  make_sparse(t, {5}, {1, 1, 1}, 1);
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.indices", "index 5 (entry 0) out of range for 2 elements");
}

TEST(ImportAccessorErrors, SparseIndicesNotIncreasing) {
  OneTrack t;
  make_sparse(t, {1, 1}, {1, 1, 1, 2, 2, 2}, 2);
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.indices", "not strictly increasing at entry 1");
}

TEST(ImportAccessorErrors, SparseCountLargerThanTheAccessor) {
  OneTrack t;
  make_sparse(t, {0, 1, 2}, {1, 1, 1, 2, 2, 2, 3, 3, 3}, 3);
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.count", "3 is not in [1, 2]");
}

TEST(ImportAccessorErrors, SparseValuesRunPastTheirView) {
  OneTrack t;
  make_sparse(t, {0, 1}, {1, 1, 1}, 2);
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.values", "2 values from byteOffset 0 do not fit");
}

TEST(ImportAccessorErrors, SparseIndicesRunPastTheirView) {
  OneTrack t;
  make_sparse(t, {0}, {1, 1, 1, 2, 2, 2}, 2);
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.indices", "2 indices from byteOffset 0 do not fit");
}

TEST(ImportAccessorErrors, SparseIndexComponentTypeNotUnsigned) {
  OneTrack t;
  make_sparse(t, {0}, {1, 1, 1}, 1);
  t.accessor()["sparse"]["indices"]["componentType"] = kShort;
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.indices.componentType", "is not UNSIGNED_BYTE");
}

TEST(ImportAccessorErrors, SparseNegativeByteOffset) {
  OneTrack t;
  make_sparse(t, {0}, {1, 1, 1}, 1);
  t.accessor()["sparse"]["values"]["byteOffset"] = -4;
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.values", "from byteOffset -4 do not fit");
}

TEST(ImportAccessorErrors, SparseViewIndexOutOfRange) {
  OneTrack t;
  make_sparse(t, {0}, {1, 1, 1}, 1);
  t.accessor()["sparse"]["indices"]["bufferView"] = 77;
  EXPECT_IMPORT_ERROR(t.b, "accessors[1].sparse.indices.bufferView", "bufferView index 77 out of range");
}

}  // namespace
}  // namespace posecast::testing
