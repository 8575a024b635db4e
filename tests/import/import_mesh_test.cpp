// Skinned meshes: attributes, influences (renormalisation, zero weights, JOINTS_1 folding,
// integer weights), indices, materials, and every primitive error.

#include "import_test_util.h"

namespace posecast::testing {
namespace {

const SkinnedMesh& only_mesh(const Result<Model>& r) { return r->rigs[0].meshes.at(0); }

TEST(ImportMesh, TriangleAttributesIndicesAndDefaults) {
  SkinnedTriangle t;
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SkinnedMesh& m = only_mesh(r);
  EXPECT_EQ(m.name, "tri");
  EXPECT_EQ(m.source_mesh, 0);
  ASSERT_EQ(m.positions.size(), 3u);
  EXPECT_EQ(m.positions[1], glm::vec3(1, 0, 0));
  EXPECT_EQ(m.normals[2], glm::vec3(0.0f));  // no NORMAL: zero
  EXPECT_EQ(m.uvs[2], glm::vec2(0.0f));      // no TEXCOORD_0: (0,0)
  EXPECT_EQ(m.indices, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(m.submeshes.size(), 1u);
  EXPECT_EQ(m.submeshes[0].index_count, 3u);
  EXPECT_EQ(m.submeshes[0].base_color, glm::vec4(1.0f));
  EXPECT_EQ(m.submeshes[0].base_color_image, -1);
  EXPECT_FALSE(m.submeshes[0].double_sided);  // no material: glTF's default, back faces culled
  EXPECT_EQ(m.joints[1], glm::u16vec4(1, 0, 0, 0));
  EXPECT_EQ(m.weights[1], glm::vec4(1, 0, 0, 0));
  EXPECT_EQ(m.joints[2], glm::u16vec4(0, 1, 0, 0));  // joints 0 and 1, 0.5 each (ties: lower joint first)
  EXPECT_EQ(m.weights[2], glm::vec4(0.5f, 0.5f, 0, 0));
}

TEST(ImportMesh, WeightsAreRenormalisedToSumOne) {
  SkinnedTriangle t;
  t.attributes()["WEIGHTS_0"] = t.b.add_floats({0.2f, 0.2f, 0, 0, 3, 1, 0, 0, 0.1f, 0, 0, 0}, "VEC4");
  t.attributes()["JOINTS_0"] = t.b.add_ints({0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}, kUnsignedShort, "VEC4");
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SkinnedMesh& m = only_mesh(r);
  EXPECT_EQ(m.weights[0], glm::vec4(0.5f, 0.5f, 0, 0));
  EXPECT_EQ(m.joints[1], glm::u16vec4(0, 1, 0, 0));
  EXPECT_EQ(m.weights[1], glm::vec4(0.75f, 0.25f, 0, 0));
  EXPECT_EQ(m.joints[2], glm::u16vec4(1, 0, 0, 0));
  EXPECT_EQ(m.weights[2], glm::vec4(1, 0, 0, 0));
}

TEST(ImportMesh, ZeroWeightVertexIsBoundToTheSkinRootJoint) {
  SkinnedTriangle t;
  // Skin joints listed tip first: the root joint (parent not a joint) is joint 1.
  t.b.json()["skins"][0]["joints"] = {1, 0};
  t.attributes()["WEIGHTS_0"] = t.b.add_floats({0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, "VEC4");
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SkinnedMesh& m = only_mesh(r);
  EXPECT_EQ(m.joints[0], glm::u16vec4(1, 0, 0, 0));
  EXPECT_EQ(m.weights[0], glm::vec4(1, 0, 0, 0));
}

TEST(ImportMesh, PrimitiveWithoutJointsIsBoundToTheRootJoint) {
  SkinnedTriangle t;
  t.attributes().erase("JOINTS_0");
  t.attributes().erase("WEIGHTS_0");
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (const glm::vec4& w : only_mesh(r).weights) EXPECT_EQ(w, glm::vec4(1, 0, 0, 0));
}

TEST(ImportMesh, NormalizedIntegerWeightsDecodeCorrectly) {
  SkinnedTriangle t;
  // UNSIGNED_BYTE normalized: 255 -> 1.0; (128, 127) renormalise to 128/255 : 127/255.
  t.attributes()["WEIGHTS_0"] = t.b.add_ints({255, 0, 0, 0, 128, 127, 0, 0, 51, 0, 0, 0}, kUnsignedByte, "VEC4", true);
  t.attributes()["JOINTS_0"] = t.b.add_ints({0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}, kUnsignedByte, "VEC4");
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SkinnedMesh& m = only_mesh(r);
  EXPECT_EQ(m.weights[0], glm::vec4(1, 0, 0, 0));
  EXPECT_NEAR(m.weights[1].x, 128.0f / 255.0f, 1e-6f);
  EXPECT_NEAR(m.weights[1].y, 127.0f / 255.0f, 1e-6f);
  EXPECT_EQ(m.weights[2], glm::vec4(1, 0, 0, 0));  // 0.2 alone renormalises to 1
  // UNSIGNED_SHORT normalized too.
  SkinnedTriangle u;
  u.attributes()["WEIGHTS_0"] =
      u.b.add_ints({65535, 0, 0, 0, 0, 65535, 0, 0, 13107, 13107, 0, 0}, kUnsignedShort, "VEC4", true);
  Result<Model> ru = import_doc(u.b);
  ASSERT_TRUE(ru.ok()) << ru.error().message;
  EXPECT_EQ(only_mesh(ru).weights[2], glm::vec4(0.5f, 0.5f, 0, 0));
}

TEST(ImportMesh, JointsOneIsFoldedKeepingTheFourLargestWeights) {
  GltfBuilder b;
  // Six joints in a chain; one vertex with eight influences.
  for (int i = 0; i < 6; ++i) {
    nlohmann::json n = {{"name", std::string(1, static_cast<char>('a' + i))}};
    if (i < 5) n["children"] = {i + 1};
    b.add_node(n);
  }
  b.add_node({{"name", "body"}, {"mesh", 0}, {"skin", 0}});
  b.add_skin({0, 1, 2, 3, 4, 5});
  const int pos = b.add_floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
  const int j0 = b.add_ints({0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0}, kUnsignedByte, "VEC4");
  const int w0 = b.add_floats({0.05f, 0.1f, 0.2f, 0.05f, 1, 0, 0, 0, 1, 0, 0, 0}, "VEC4");
  const int j1 = b.add_ints({4, 5, 1, 0, 0, 0, 0, 0, 5, 0, 0, 0}, kUnsignedByte, "VEC4");
  const int w1 = b.add_floats({0.3f, 0.15f, 0.1f, 0.05f, 0, 0, 0, 0, 1, 0, 0, 0}, "VEC4");
  b.add_mesh({{"primitives",
               {{{"attributes",
                  {{"POSITION", pos}, {"JOINTS_0", j0}, {"WEIGHTS_0", w0}, {"JOINTS_1", j1}, {"WEIGHTS_1", w1}}}}}}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SkinnedMesh& m = only_mesh(r);
  // Vertex 0: joint 0 has 0.05 + 0.05 = 0.1, joint 1 has 0.1 + 0.1 = 0.2, joint 2 0.2,
  // joint 3 0.05, joint 4 0.3, joint 5 0.15. The four largest: 4 (0.3), 1 (0.2), 2 (0.2), 5 (0.15).
  EXPECT_EQ(m.joints[0], glm::u16vec4(4, 1, 2, 5));
  const float sum = 0.3f + 0.2f + 0.2f + 0.15f;
  EXPECT_NEAR(m.weights[0].x, 0.3f / sum, 1e-6f);
  EXPECT_NEAR(m.weights[0].y, 0.2f / sum, 1e-6f);
  EXPECT_NEAR(m.weights[0].w, 0.15f / sum, 1e-6f);
  EXPECT_NEAR(m.weights[0].x + m.weights[0].y + m.weights[0].z + m.weights[0].w, 1.0f, 1e-6f);
  // Vertex 2: joint 0 (set 0) and joint 5 (set 1), equal weights.
  EXPECT_EQ(m.joints[2], glm::u16vec4(0, 5, 0, 0));
  EXPECT_EQ(m.weights[2], glm::vec4(0.5f, 0.5f, 0, 0));
}

TEST(ImportMesh, NonIndexedPrimitiveGetsSequentialIndices) {
  SkinnedTriangle t;
  t.primitive().erase("indices");
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(only_mesh(r).indices, (std::vector<uint32_t>{0, 1, 2}));
}

TEST(ImportMesh, SecondPrimitiveIndicesAreOffsetByTheVerticesBeforeIt) {
  SkinnedTriangle t;
  nlohmann::json second = t.primitive();
  second["indices"] = t.b.add_ints({2, 1, 0}, kUnsignedInt, "SCALAR");
  t.b.json()["meshes"][0]["primitives"].push_back(second);
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const SkinnedMesh& m = only_mesh(r);
  EXPECT_EQ(m.positions.size(), 6u);
  EXPECT_EQ(m.indices, (std::vector<uint32_t>{0, 1, 2, 5, 4, 3}));
  ASSERT_EQ(m.submeshes.size(), 2u);
  EXPECT_EQ(m.submeshes[1].first_index, 3u);
}

TEST(ImportMesh, NormalsAndTexcoordsAreRead) {
  SkinnedTriangle t;
  t.attributes()["NORMAL"] = t.b.add_floats({0, 0, 1, 0, 0, 1, 0, 1, 0}, "VEC3");
  t.attributes()["TEXCOORD_0"] = t.b.add_ints({0, 0, 65535, 0, 0, 65535}, kUnsignedShort, "VEC2", true);
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(only_mesh(r).normals[2], glm::vec3(0, 1, 0));
  EXPECT_EQ(only_mesh(r).uvs[1], glm::vec2(1, 0));
}

TEST(ImportMesh, SparsePositionsAreHonoured) {
  SkinnedTriangle t;
  const uint8_t idx[] = {1};
  const float val[] = {5, 6, 7};
  const int iv = t.b.add_view(idx, sizeof idx);
  const int vv = t.b.add_view(val, sizeof val);
  t.b.json()["accessors"][static_cast<std::size_t>(t.positions)]["sparse"] = {
      {"count", 1}, {"indices", {{"bufferView", iv}, {"componentType", kUnsignedByte}}}, {"values", {{"bufferView", vv}}}};
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(only_mesh(r).positions[1], glm::vec3(5, 6, 7));
  EXPECT_EQ(only_mesh(r).positions[2], glm::vec3(0, 1, 0));
}

TEST(ImportMesh, QuantizedPositionsNeedTheExtension) {
  SkinnedTriangle t;
  t.attributes()["POSITION"] = t.b.add_ints({0, 0, 0, 100, 0, 0, 0, -100, 0}, kShort, "VEC3");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.POSITION", "stores SHORT, which is not allowed here");
  t.b.json()["extensionsUsed"] = {"KHR_mesh_quantization"};
  t.b.json()["extensionsRequired"] = {"KHR_mesh_quantization"};
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(only_mesh(r).positions[1], glm::vec3(100, 0, 0));  // not normalised: the value
  EXPECT_EQ(only_mesh(r).positions[2], glm::vec3(0, -100, 0));
}

TEST(ImportMesh, MeshesLoadOnlyWhenAsked) {
  SkinnedTriangle t;
  ImportOptions options;
  options.load_meshes = false;
  Result<Model> r = import_doc(t.b, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->rigs[0].meshes.empty());
}

// --- errors ---------------------------------------------------------------------------------

TEST(ImportMeshErrors, NonTriangleMode) {
  SkinnedTriangle t;
  t.primitive()["mode"] = 1;
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].mode", "only TRIANGLES (4) is supported, not 1");
}

TEST(ImportMeshErrors, MissingPosition) {
  SkinnedTriangle t;
  t.attributes().erase("POSITION");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes", "no POSITION attribute");
}

TEST(ImportMeshErrors, IndexOutOfRange) {
  SkinnedTriangle t;
  t.primitive()["indices"] = t.b.add_ints({0, 1, 3}, kUnsignedByte, "SCALAR");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].indices", "index 2 is 3, out of range for 3 vertices");
}

TEST(ImportMeshErrors, IndexCountNotAMultipleOfThree) {
  SkinnedTriangle t;
  t.primitive()["indices"] = t.b.add_ints({0, 1, 2, 0}, kUnsignedShort, "SCALAR");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].indices", "4 indices, not a multiple of 3");
}

TEST(ImportMeshErrors, SignedIndices) {
  SkinnedTriangle t;
  t.primitive()["indices"] = t.b.add_ints({0, 1, 2}, kShort, "SCALAR");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].indices", "stores SHORT");
}

TEST(ImportMeshErrors, JointIndexNotInTheSkin) {
  SkinnedTriangle t;
  t.attributes()["JOINTS_0"] = t.b.add_ints({0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0}, kUnsignedByte, "VEC4");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.JOINTS_0", "vertex 1 uses joint 2, the skin has 2 joints");
}

TEST(ImportMeshErrors, NegativeWeight) {
  SkinnedTriangle t;
  t.attributes()["WEIGHTS_0"] = t.b.add_floats({1, 0, 0, 0, 1, -0.5f, 0, 0, 1, 0, 0, 0}, "VEC4");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.WEIGHTS_0", "vertex 1 has a negative weight");
}

TEST(ImportMeshErrors, NanPosition) {
  SkinnedTriangle t;
  t.attributes()["POSITION"] = t.b.add_floats({0, 0, 0, NAN, 0, 0, 0, 1, 0}, "VEC3");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.POSITION", "element 1 is not finite");
}

TEST(ImportMeshErrors, JointsWithoutWeights) {
  SkinnedTriangle t;
  t.attributes().erase("WEIGHTS_0");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.JOINTS_0", "present without WEIGHTS_0");
}

TEST(ImportMeshErrors, AttributeCountDiffersFromPositions) {
  SkinnedTriangle t;
  t.attributes()["NORMAL"] = t.b.add_floats({0, 0, 1, 0, 0, 1}, "VEC3");
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.NORMAL", "2 elements, but POSITION has 3");
}

TEST(ImportMeshErrors, WeightsAsUnnormalizedBytes) {
  SkinnedTriangle t;
  t.attributes()["WEIGHTS_0"] = t.b.add_ints({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, kUnsignedByte, "VEC4", false);
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].attributes.WEIGHTS_0", "stores UNSIGNED_BYTE, which is not allowed here");
}

TEST(ImportMeshErrors, MaterialOutOfRange) {
  SkinnedTriangle t;
  t.primitive()["material"] = 2;
  EXPECT_IMPORT_ERROR(t.b, "meshes[0].primitives[0].material", "material index 2 out of range");
}

TEST(ImportMeshErrors, BaseColorTextureOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["materials"] = {{{"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 3}}}}}}};
  t.primitive()["material"] = 0;
  EXPECT_IMPORT_ERROR(t.b, "materials[0].pbrMetallicRoughness.baseColorTexture.index", "texture index 3 out of range");
}

TEST(ImportMeshErrors, TextureSourceOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["textures"] = {{{"source", 4}}};
  t.b.json()["materials"] = {{{"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 0}}}}}}};
  t.primitive()["material"] = 0;
  EXPECT_IMPORT_ERROR(t.b, "textures[0].source", "image index 4 out of range");
}

}  // namespace
}  // namespace posecast::testing
