// Clips from glTF animations: tracks, interpolation layouts, integer outputs, durations, and
// every sampler/channel error.

#include "import_test_util.h"

namespace posecast::testing {
namespace {

using ::testing::HasSubstr;

// A three-node scene (no skin): "a" (node 0), "b" (node 1), "c" (node 2).
GltfBuilder three_nodes() {
  GltfBuilder b;
  b.add_node({{"name", "a"}, {"children", {1}}});
  b.add_node({{"name", "b"}});
  b.add_node({{"name", "c"}});
  return b;
}

TEST(ImportAnimation, TracksAreSortedByNodeAndTargetWithTheirKeys) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "scale", {0.0f, 1.0f}, {1, 1, 1, 2, 2, 2}},
                   {1, "translation", {0.0f, 0.5f, 1.5f}, {0, 0, 0, 1, 0, 0, 2, 0, 0}},
                   {0, "rotation", {0.25f}, {0, 0, 0, 2}, "STEP"}},
                  "walk");
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Clip& c = r->rigs[0].clips[0];
  EXPECT_EQ(c.name, "walk");
  EXPECT_EQ(c.duration_seconds, 1.5f);
  EXPECT_EQ(c.duration_us, 1500000);
  ASSERT_EQ(c.tracks.size(), 3u);
  const Skeleton& s = r->rigs[0].skeleton;
  EXPECT_EQ(c.tracks[0].node, node_named(s, "a"));
  EXPECT_EQ(c.tracks[0].target, TrackTarget::kRotation);
  EXPECT_EQ(c.tracks[0].interpolation, Interpolation::kStep);
  EXPECT_EQ(c.tracks[0].key_count, 1u);  // one key works
  // LINEAR/STEP rotations are normalised at import: (0,0,0,2) -> (0,0,0,1).
  EXPECT_EQ(c.values[c.tracks[0].values_offset + 3], 1.0f);
  EXPECT_EQ(c.tracks[1].node, node_named(s, "b"));
  EXPECT_EQ(c.tracks[1].target, TrackTarget::kTranslation);
  EXPECT_EQ(c.tracks[1].key_count, 3u);
  EXPECT_EQ(c.times[c.tracks[1].times_offset + 2], 1.5f);
  EXPECT_EQ(c.values[c.tracks[1].values_offset + 6], 2.0f);
  EXPECT_EQ(c.tracks[2].target, TrackTarget::kScale);
  EXPECT_TRUE(c.validate(s).ok());
  EXPECT_EQ(r->find_clip("walk"), 0);
  EXPECT_EQ(r->find_clip("run"), -1);
}

TEST(ImportAnimation, UnnamedAnimationsAreNamedByIndex) {
  GltfBuilder b = three_nodes();
  b.add_animation({{0, "translation", {0.0f}, {0, 0, 0}}}, "first");
  b.add_animation({{0, "translation", {0.0f}, {0, 0, 0}}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].clips[1].name, "animation_1");
  EXPECT_EQ(r->find_clip("animation_1"), 1);
}

TEST(ImportAnimation, SingleKeyAtTimeZeroGivesZeroDuration) {
  GltfBuilder b = three_nodes();
  b.add_animation({{2, "translation", {0.0f}, {1, 2, 3}}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].clips[0].duration_seconds, 0.0f);
  EXPECT_EQ(r->rigs[0].clips[0].duration_us, 0);
}

TEST(ImportAnimation, DurationIsTheLastKeyOverAllSamplers) {
  GltfBuilder b = three_nodes();
  b.add_animation({{0, "translation", {0.0f, 0.75f}, {0, 0, 0, 1, 1, 1}},
                   {1, "translation", {0.5f, 3.25f}, {0, 0, 0, 1, 1, 1}}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].clips[0].duration_seconds, 3.25f);
  EXPECT_EQ(r->rigs[0].clips[0].duration_us, 3250000);
}

TEST(ImportAnimation, CubicSplineStoresInTangentValueOutTangentPerKey) {
  GltfBuilder b = three_nodes();
  // Two keys; per key: in-tangent, value, out-tangent (VEC3 each). Rotation values are kept
  // as in the file (not normalised) for CUBICSPLINE.
  b.add_animation({{0, "translation", {0.0f, 2.0f},
                    {-1, -1, -1, 10, 11, 12, 1, 1, 1, -2, -2, -2, 20, 21, 22, 2, 2, 2}, "CUBICSPLINE"},
                   {1, "rotation", {0.0f, 1.0f},
                    {0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0},
                    "CUBICSPLINE"}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Clip& c = r->rigs[0].clips[0];
  ASSERT_EQ(c.tracks.size(), 2u);
  const Track& t = c.tracks[0];
  EXPECT_EQ(t.interpolation, Interpolation::kCubicSpline);
  EXPECT_EQ(t.key_count, 2u);
  const float* v = &c.values[t.values_offset];
  EXPECT_EQ(v[0], -1.0f);   // key 0 in-tangent
  EXPECT_EQ(v[3], 10.0f);   // key 0 value
  EXPECT_EQ(v[6], 1.0f);    // key 0 out-tangent
  EXPECT_EQ(v[12], 20.0f);  // key 1 value
  const Track& rot = c.tracks[1];
  EXPECT_EQ(c.values[rot.values_offset + 7], 2.0f);  // key 0 value w, not normalised
  EXPECT_EQ(c.values.size(), 18u + 24u);
}

// Rotation outputs may be normalised integers; decoding follows the spec's formulas.
TEST(ImportAnimation, NormalizedIntegerRotationOutputsDecodeWithTheSpecFormulas) {
  struct Case {
    int component_type;
    std::vector<int64_t> raw;
    std::vector<float> expected;  // before the import normalises the quaternion
  };
  const std::vector<Case> cases = {
      {kByte, {0, 0, -128, 127}, {0.0f, 0.0f, -1.0f, 1.0f}},  // max(c/127, -1)
      {kUnsignedByte, {0, 0, 0, 255}, {0.0f, 0.0f, 0.0f, 1.0f}},
      {kShort, {0, 0, -32768, 32767}, {0.0f, 0.0f, -1.0f, 1.0f}},
      {kUnsignedShort, {0, 65535, 0, 65535}, {0.0f, 1.0f, 0.0f, 1.0f}},
  };
  for (const Case& k : cases) {
    GltfBuilder b = three_nodes();
    const int input = b.add_floats({0.0f}, "SCALAR");
    const int output = b.add_ints(k.raw, k.component_type, "VEC4", /*normalized=*/true);
    b.json()["animations"] = {{{"samplers", {{{"input", input}, {"output", output}}}},
                               {"channels", {{{"sampler", 0}, {"target", {{"node", 0}, {"path", "rotation"}}}}}}}};
    Result<Model> r = import_doc(b);
    ASSERT_TRUE(r.ok()) << k.component_type << ": " << r.error().message;
    const Clip& c = r->rigs[0].clips[0];
    float len2 = 0.0f;
    for (float e : k.expected) len2 += e * e;
    const float inv = 1.0f / std::sqrt(len2);
    for (int i = 0; i < 4; ++i)
      EXPECT_FLOAT_EQ(c.values[static_cast<std::size_t>(i)], k.expected[static_cast<std::size_t>(i)] * inv)
          << "component type " << k.component_type << ", component " << i;
  }
}

TEST(ImportAnimation, ShortRotationDecodesAsCOver32767) {
  GltfBuilder b = three_nodes();
  const int input = b.add_floats({0.0f}, "SCALAR");
  // (0, 0, 16384, 28377): c/32767 each, then normalised.
  const int output = b.add_ints({0, 0, 16384, 28377}, kShort, "VEC4", true);
  b.json()["animations"] = {{{"samplers", {{{"input", input}, {"output", output}}}},
                             {"channels", {{{"sampler", 0}, {"target", {{"node", 0}, {"path", "rotation"}}}}}}}};
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const float z = 16384.0f / 32767.0f, w = 28377.0f / 32767.0f;
  const float len = std::sqrt(z * z + w * w);
  EXPECT_NEAR(r->rigs[0].clips[0].values[2], z / len, 1e-7f);
  EXPECT_NEAR(r->rigs[0].clips[0].values[3], w / len, 1e-7f);
}

TEST(ImportAnimation, SparseOutputReplacesTheListedElements) {
  GltfBuilder b = three_nodes();
  const int input = b.add_floats({0.0f, 1.0f, 2.0f}, "SCALAR");
  const int base = b.add_floats({0, 0, 0, 1, 1, 1, 2, 2, 2}, "VEC3");
  const uint8_t sparse_indices[] = {2};
  const float sparse_values[] = {7, 8, 9};
  const int iv = b.add_view(sparse_indices, sizeof sparse_indices);
  const int vv = b.add_view(sparse_values, sizeof sparse_values);
  b.json()["accessors"][static_cast<std::size_t>(base)]["sparse"] = {
      {"count", 1},
      {"indices", {{"bufferView", iv}, {"componentType", kUnsignedByte}}},
      {"values", {{"bufferView", vv}}}};
  b.json()["animations"] = {{{"samplers", {{{"input", input}, {"output", base}}}},
                             {"channels", {{{"sampler", 0}, {"target", {{"node", 2}, {"path", "translation"}}}}}}}};
  // The decoded keys as stored: root motion off (this clip's translation would travel).
  ImportOptions keys_as_stored;
  keys_as_stored.rig_config_json = R"({"root_motion": false})";
  Result<Model> r = import_doc(b, keys_as_stored);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::vector<float>& v = r->rigs[0].clips[0].values;
  EXPECT_EQ(v, (std::vector<float>{0, 0, 0, 1, 1, 1, 7, 8, 9}));
}

TEST(ImportAnimation, SparseAccessorWithoutBufferViewStartsFromZeros) {
  GltfBuilder b = three_nodes();
  const int input = b.add_floats({0.0f, 1.0f}, "SCALAR");
  const uint16_t sparse_indices[] = {1};
  const float sparse_values[] = {4, 5, 6};
  const int iv = b.add_view(sparse_indices, sizeof sparse_indices);
  const int vv = b.add_view(sparse_values, sizeof sparse_values);
  const int output = b.add_accessor({{"componentType", kFloatType},
                                     {"count", 2},
                                     {"type", "VEC3"},
                                     {"sparse",
                                      {{"count", 1},
                                       {"indices", {{"bufferView", iv}, {"componentType", kUnsignedShort}}},
                                       {"values", {{"bufferView", vv}}}}}});
  b.json()["animations"] = {{{"samplers", {{{"input", input}, {"output", output}}}},
                             {"channels", {{{"sampler", 0}, {"target", {{"node", 2}, {"path", "scale"}}}}}}}};
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].clips[0].values, (std::vector<float>{0, 0, 0, 4, 5, 6}));
}

TEST(ImportAnimation, InterleavedOutputHonoursByteStride) {
  GltfBuilder b = three_nodes();
  const int input = b.add_floats({0.0f, 1.0f}, "SCALAR");
  // Two VEC3 elements with a 16-byte stride (one padding float each).
  const float data[] = {1, 2, 3, -99, 4, 5, 6, -99};
  const int view = b.add_view(data, sizeof data, 16);
  const int output = b.add_accessor({{"bufferView", view}, {"componentType", kFloatType}, {"count", 2}, {"type", "VEC3"}});
  b.json()["animations"] = {{{"samplers", {{{"input", input}, {"output", output}}}},
                             {"channels", {{{"sampler", 0}, {"target", {{"node", 1}, {"path", "translation"}}}}}}}};
  // The decoded keys as stored: root motion off (this clip's translation would travel).
  ImportOptions keys_as_stored;
  keys_as_stored.rig_config_json = R"({"root_motion": false})";
  Result<Model> r = import_doc(b, keys_as_stored);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].clips[0].values, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(ImportAnimation, ChannelsOnNodesOutsideTheSkinAreDroppedForThatRig) {
  SkinnedTriangle t;
  t.b.add_node({{"name", "prop"}});  // node 3, in no skin
  t.b.add_animation({{3, "translation", {0.0f, 1.0f}, {0, 0, 0, 1, 1, 1}},
                     {1, "rotation", {0.0f, 0.5f}, {0, 0, 0, 1, 0, 0, 1, 0}}});
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Clip& c = r->rigs[0].clips[0];
  ASSERT_EQ(c.tracks.size(), 1u);
  EXPECT_EQ(c.tracks[0].target, TrackTarget::kRotation);
  EXPECT_EQ(c.duration_seconds, 1.0f);  // the dropped channel's keys still set the loop period
}

TEST(ImportAnimation, ChannelsOnNonJointAncestorsAndTheMeshNodeAreKept) {
  SkinnedTriangle t;
  // node 3 becomes the parent of the root joint; node 2 (body) is the mesh node.
  t.b.add_node({{"name", "armature"}, {"children", {0}}});
  t.b.add_animation({{3, "scale", {0.0f}, {2, 2, 2}}, {2, "translation", {0.0f}, {0, 1, 0}}});
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Skeleton& s = r->rigs[0].skeleton;
  const Clip& c = r->rigs[0].clips[0];
  ASSERT_EQ(c.tracks.size(), 2u);
  std::vector<int> nodes = {c.tracks[0].node, c.tracks[1].node};
  EXPECT_THAT(nodes, ::testing::UnorderedElementsAre(node_named(s, "armature"), node_named(s, "body")));
}

TEST(ImportAnimation, WeightsChannelsAreIgnored) {
  GltfBuilder b = three_nodes();
  b.add_animation({{0, "weights", {0.0f, 1.0f}, {0.0f, 1.0f}}, {1, "translation", {0.0f}, {1, 1, 1}}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rigs[0].clips[0].tracks.size(), 1u);
  EXPECT_EQ(r->rigs[0].clips[0].tracks[0].target, TrackTarget::kTranslation);
}

TEST(ImportAnimation, ChannelWithoutTargetNodeIsIgnoredAndLaterChannelsKeepTheirFileIndex) {
  GltfBuilder b = three_nodes();
  b.add_animation({{0, "translation", {0.0f}, {1, 1, 1}}, {1, "translation", {0.0f}, {1, 1, 1}}});
  b.json()["animations"][0]["channels"][0]["target"].erase("node");
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rigs[0].clips[0].tracks.size(), 1u);
  EXPECT_EQ(r->rigs[0].clips[0].tracks[0].node, node_named(r->rigs[0].skeleton, "b"));
  // An error in the channel after the ignored one names its file index, channels[1].
  b.json()["animations"][0]["channels"][1]["sampler"] = 9;
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[1].sampler", "sampler index 9 out of range");
}

// --- errors ---------------------------------------------------------------------------------

GltfBuilder one_channel(const std::string& path = "translation", const std::string& interpolation = "LINEAR") {
  GltfBuilder b = three_nodes();
  if (path == "rotation")
    b.add_animation({{1, path, {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0, 0, 1}, interpolation}});
  else
    b.add_animation({{1, path, {0.0f, 1.0f}, {0, 0, 0, 1, 1, 1}, interpolation}});
  return b;
}

nlohmann::json& sampler0(GltfBuilder& b) { return b.json()["animations"][0]["samplers"][0]; }
nlohmann::json& channel0(GltfBuilder& b) { return b.json()["animations"][0]["channels"][0]; }

TEST(ImportAnimationErrors, InputAccessorOutOfRange) {
  GltfBuilder b = one_channel();
  sampler0(b)["input"] = 99;
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "accessor index 99 out of range");
}

TEST(ImportAnimationErrors, InputNotScalar) {
  GltfBuilder b = one_channel();
  sampler0(b)["input"] = sampler0(b)["output"];
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "is VEC3, expected SCALAR");
}

TEST(ImportAnimationErrors, InputNotFloat) {
  GltfBuilder b = one_channel();
  sampler0(b)["input"] = b.add_ints({0, 1}, kUnsignedByte, "SCALAR", true);
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "stores UNSIGNED_BYTE normalized");
}

TEST(ImportAnimationErrors, KeyTimesNotIncreasing) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {0.0f, 1.0f, 1.0f}, {0, 0, 0, 1, 1, 1, 2, 2, 2}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "key times are not strictly increasing at key 2");
}

TEST(ImportAnimationErrors, NegativeKeyTime) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {-0.5f, 1.0f}, {0, 0, 0, 1, 1, 1}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "key time 0 is negative");
}

TEST(ImportAnimationErrors, NanKeyTime) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {0.0f, std::nanf("")}, {0, 0, 0, 1, 1, 1}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "key time 1 is not finite");
}

TEST(ImportAnimationErrors, InfiniteOutputValue) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {0.0f, 1.0f}, {0, 0, 0, 1, INFINITY, 1}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "element 1 is not finite");
}

TEST(ImportAnimationErrors, MoreKeysThanMaxKeysPerTrack) {
  GltfBuilder b = one_channel();
  ImportOptions options;
  options.max_keys_per_track = 1;
  EXPECT_THAT(import_error(b, options),
              HasSubstr("test.gltf: animations[0].samplers[0].input: 2 keys, more than max_keys_per_track 1"));
}

TEST(ImportAnimationErrors, LinearOutputCountDiffersFromInputCount) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {0.0f, 1.0f}, {0, 0, 0, 1, 1, 1, 2, 2, 2}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "3 elements for 2 keys");
}

TEST(ImportAnimationErrors, CubicSplineOutputNotThreePerKey) {
  GltfBuilder b = one_channel("translation", "CUBICSPLINE");
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "CUBICSPLINE needs 3 per key");
}

TEST(ImportAnimationErrors, CubicSplineWithOneKey) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {0.0f}, {0, 0, 0, 1, 1, 1, 0, 0, 0}, "CUBICSPLINE"}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].input", "CUBICSPLINE needs at least two keyframes");
}

TEST(ImportAnimationErrors, UnsupportedInterpolation) {
  GltfBuilder b = one_channel("translation", "SMOOTH");
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].interpolation", "unsupported interpolation 'SMOOTH'");
}

TEST(ImportAnimationErrors, InterpolationNotAString) {
  GltfBuilder b = one_channel();
  sampler0(b)["interpolation"] = 3;
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].interpolation", "not a string");
}

TEST(ImportAnimationErrors, TranslationOutputAsIntegers) {
  GltfBuilder b = one_channel();
  sampler0(b)["output"] = b.add_ints({0, 0, 0, 1, 1, 1}, kShort, "VEC3", true);
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "stores SHORT normalized, which is not allowed here");
}

TEST(ImportAnimationErrors, RotationOutputAsUnnormalizedIntegers) {
  GltfBuilder b = one_channel("rotation");
  sampler0(b)["output"] = b.add_ints({0, 0, 0, 1, 0, 0, 0, 1}, kShort, "VEC4", false);
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "stores SHORT, which is not allowed here");
}

TEST(ImportAnimationErrors, RotationOutputOfWrongType) {
  GltfBuilder b = one_channel("rotation");
  channel0(b)["target"]["path"] = "rotation";
  sampler0(b)["output"] = b.add_floats({0, 0, 0, 1, 1, 1}, "VEC3");
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "is VEC3, expected VEC4");
}

TEST(ImportAnimationErrors, ZeroQuaternionKey) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "rotation", {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0, 0, 0}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "rotation key 1 is a zero quaternion");
}

TEST(ImportAnimationErrors, TwoChannelsOnTheSameNodeAndPath) {
  GltfBuilder b = three_nodes();
  b.add_animation({{1, "translation", {0.0f}, {0, 0, 0}}, {1, "translation", {0.0f}, {1, 1, 1}}});
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[1].target", "nodes[1].translation is already animated by channels[0]");
}

TEST(ImportAnimationErrors, TargetNodeOutOfRange) {
  GltfBuilder b = one_channel();
  channel0(b)["target"]["node"] = 17;
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[0].target.node", "node index 17 out of range");
}

TEST(ImportAnimationErrors, SamplerIndexOutOfRange) {
  GltfBuilder b = one_channel();
  channel0(b)["sampler"] = 4;
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[0].sampler", "sampler index 4 out of range");
}

TEST(ImportAnimationErrors, UnsupportedTargetPath) {
  GltfBuilder b = one_channel();
  channel0(b)["target"]["path"] = "color";
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[0].target.path", "unsupported path 'color'");
}

TEST(ImportAnimationErrors, ChannelWithoutSampler) {
  GltfBuilder b = one_channel();
  channel0(b).erase("sampler");
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[0].sampler", "missing");
}

TEST(ImportAnimationErrors, ChannelWithoutTarget) {
  GltfBuilder b = one_channel();
  channel0(b).erase("target");
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[0].target", "missing");
}

TEST(ImportAnimationErrors, SamplerWithoutOutput) {
  GltfBuilder b = one_channel();
  sampler0(b).erase("output");
  EXPECT_IMPORT_ERROR(b, "animations[0].samplers[0].output", "missing");
}

TEST(ImportAnimationErrors, AnimatingANodeGivenAsMatrix) {
  GltfBuilder b = one_channel();
  b.json()["nodes"][1]["matrix"] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_IMPORT_ERROR(b, "animations[0].channels[0].target.node", "nodes[1] is given as a matrix");
}

}  // namespace
}  // namespace posecast::testing
