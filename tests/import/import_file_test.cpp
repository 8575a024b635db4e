// File-level behaviour: the GLB container, JSON, extensions, URIs, glTF version, tinygltf's
// own errors, images and the content hash.

#include <fstream>

#include "import_test_util.h"
#include "posecast/hash.h"

namespace posecast::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

void put_u32(std::vector<uint8_t>& b, std::size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

// Writes `bytes` to `path`, creating folders.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

std::string test_dir() { return std::string(POSECAST_BINARY_DIR) + "/import_test_files"; }

TEST(ImportFile, GlbAndGltfOfTheSameDocumentGiveTheSameModel) {
  SkinnedTriangle t(true);
  t.b.add_animation({{1, "rotation", {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0.6f, 0, 0.8f}}}, "bend");
  Result<Model> a = import_doc(t.b);
  Result<Model> g = import_glb(t.b);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(a->rigs[0].skeleton.inverse_bind, g->rigs[0].skeleton.inverse_bind);
  EXPECT_EQ(a->rigs[0].clips[0].values, g->rigs[0].clips[0].values);
  EXPECT_EQ(a->rigs[0].meshes[0].positions, g->rigs[0].meshes[0].positions);
  EXPECT_EQ(g->source, "test.glb");
}

TEST(ImportFile, ContentHashIsTheHashOfTheFileBytes) {
  SkinnedTriangle t;
  const std::vector<uint8_t> glb = t.b.to_glb();
  Result<Model> r = import_gltf_memory(glb, "x.glb");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->content_hash, hash_bytes(glb));
}

TEST(ImportFile, ContentHashIncludesExternalBuffers) {
  SKIP_WITHOUT_ASSET("interpolation_test.gltf");
  Result<Model> r = import_gltf_file(asset_path("interpolation_test.gltf"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::ifstream g(asset_path("interpolation_test.gltf"), std::ios::binary);
  std::ifstream b(asset_path("interpolation_test.bin"), std::ios::binary);
  std::vector<uint8_t> all((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  const std::size_t gltf_size = all.size();
  all.insert(all.end(), std::istreambuf_iterator<char>(b), std::istreambuf_iterator<char>());
  ASSERT_GT(all.size(), gltf_size);
  EXPECT_EQ(r->content_hash, hash_bytes(all));
}

TEST(ImportFile, ImagesKeepTheirEncodedBytes) {
  SkinnedTriangle t;
  const std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4};
  const int view = t.b.add_view(png.data(), png.size());
  t.b.json()["images"] = {{{"bufferView", view}, {"mimeType", "image/png"}},
                          {{"uri", "data:image/jpeg;base64," + base64_encode({0xFF, 0xD8, 0xFF, 0xE0, 9, 9})}}};
  t.b.json()["textures"] = {{{"source", 1}}};
  t.b.json()["materials"] = {{{"pbrMetallicRoughness", {{"baseColorFactor", {0.5, 0.25, 1.0, 1.0}},
                                                         {"baseColorTexture", {{"index", 0}}}}}}};
  t.primitive()["material"] = 0;
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->images.size(), 2u);
  EXPECT_EQ(r->images[0].mime_type, "image/png");
  EXPECT_EQ(r->images[0].bytes, png);
  EXPECT_EQ(r->images[1].mime_type, "image/jpeg");
  EXPECT_EQ(r->images[1].bytes, (std::vector<uint8_t>{0xFF, 0xD8, 0xFF, 0xE0, 9, 9}));
  const SubMesh& sub = r->rigs[0].meshes[0].submeshes[0];
  EXPECT_EQ(sub.base_color_image, 1);
  EXPECT_EQ(sub.base_color, glm::vec4(0.5f, 0.25f, 1.0f, 1.0f));
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ImportFile, MaterialDoubleSidedIsKeptPerPrimitiveAndDefaultsToFalse) {
  for (const bool double_sided : {false, true}) {
    SkinnedTriangle t;
    t.b.json()["materials"] = {{{"pbrMetallicRoughness", {{"baseColorFactor", {1.0, 1.0, 1.0, 1.0}}}}}};
    if (double_sided) t.b.json()["materials"][0]["doubleSided"] = true;
    t.primitive()["material"] = 0;
    Result<Model> r = import_doc(t.b);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->rigs[0].meshes[0].submeshes[0].double_sided, double_sided);
  }
}

TEST(ImportFile, WithoutImagesTexturesAreDropped) {
  SkinnedTriangle t;
  t.b.json()["images"] = {{{"uri", "data:image/png;base64," + base64_encode({0x89, 'P', 'N', 'G', 1, 2, 3, 4})}}};
  t.b.json()["textures"] = {{{"source", 0}}};
  t.b.json()["materials"] = {{{"pbrMetallicRoughness", {{"baseColorTexture", {{"index", 0}}}}}}};
  t.primitive()["material"] = 0;
  ImportOptions options;
  options.load_images = false;
  Result<Model> r = import_doc(t.b, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->images.empty());
  EXPECT_EQ(r->rigs[0].meshes[0].submeshes[0].base_color_image, -1);
}

TEST(ImportFile, MissingExternalImageIsAWarningAndAnEmptyImage) {
  const std::string dir = test_dir();
  std::filesystem::create_directories(dir);
  SkinnedTriangle t;
  t.b.json()["images"] = {{{"uri", "missing.png"}}};
  const std::vector<uint8_t> text = t.b.to_gltf();
  const std::string path = dir + "/missing_image.gltf";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(text.data()),
                                              static_cast<std::streamsize>(text.size()));
  Result<Model> r = import_gltf_file(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->images.size(), 1u);
  EXPECT_TRUE(r->images[0].bytes.empty());
  EXPECT_EQ(r->images[0].mime_type, "image/png");
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_THAT(r->warnings.back(), StartsWith(path + ": images[0].uri: 'missing.png' could not be loaded"));
}

TEST(ImportFile, ExternalBufferAndImageNextToTheFileAreRead) {
  const std::string dir = test_dir() + "/external";
  SkinnedTriangle t;
  // Move the whole buffer into model.bin; the image into skin.png.
  const std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 42};
  write_file(dir + "/model.bin", t.b.buffer());
  write_file(dir + "/skin.png", png);
  nlohmann::json doc = t.b.json();
  doc["buffers"] = {{{"byteLength", t.b.buffer().size()}, {"uri", "model.bin"}}};
  doc["images"] = {{{"uri", "skin.png"}}};
  const std::string text = doc.dump();
  write_file(dir + "/model.gltf", std::vector<uint8_t>(text.begin(), text.end()));
  Result<Model> r = import_gltf_file(dir + "/model.gltf");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].meshes[0].positions.size(), 3u);
  ASSERT_EQ(r->images.size(), 1u);
  EXPECT_EQ(r->images[0].bytes, png);
  EXPECT_EQ(r->images[0].mime_type, "image/png");  // sniffed: the file gives no mimeType
  std::vector<uint8_t> identity(text.begin(), text.end());
  identity.insert(identity.end(), t.b.buffer().begin(), t.b.buffer().end());
  EXPECT_EQ(r->content_hash, hash_bytes(identity));
}

TEST(ImportFile, ExternalFilesOutsideTheModelFolderAreNotRead) {
  const std::string dir = test_dir() + "/outside";
  write_file(dir + "/secret.bin", {1, 2, 3, 4});
  GltfBuilder b;
  b.add_node({{"name", "n"}});
  b.json()["buffers"] = {{{"byteLength", 4}, {"uri", dir + "/secret.bin"}}};  // absolute URI
  const std::string text = b.json().dump();
  const std::string path = dir + "/model/absolute_uri.gltf";
  write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
  Result<Model> r = import_gltf_file(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, StartsWith(path + ": $: tinygltf: File not found"));
}

// --- errors ---------------------------------------------------------------------------------

TEST(ImportFileErrors, EmptyInput) {
  Result<Model> r = import_gltf_memory({}, "empty.gltf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "empty.gltf: $: the file is empty");
}

TEST(ImportFileErrors, MissingFile) {
  Result<Model> r = import_gltf_file("/nonexistent/dir/model.glb");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, StartsWith("/nonexistent/dir/model.glb: $: cannot open"));
}

TEST(ImportFileErrors, InvalidJson) {
  Result<Model> r = import_gltf_memory(bytes_of("{\"asset\": {\"version\": \"2.0\"}"), "bad.gltf");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, StartsWith("bad.gltf: $: invalid JSON: "));
}

TEST(ImportFileErrors, JsonThatIsNotAnObject) {
  Result<Model> r = import_gltf_memory(bytes_of("[1, 2, 3]"), "bad.gltf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "bad.gltf: $: the document is not a JSON object");
}

TEST(ImportFileErrors, UnsupportedRequiredExtension) {
  SkinnedTriangle t;
  t.b.json()["extensionsUsed"] = {"KHR_draco_mesh_compression"};
  t.b.json()["extensionsRequired"] = {"KHR_draco_mesh_compression"};
  EXPECT_IMPORT_ERROR(t.b, "extensionsRequired[0]", "unsupported required extension KHR_draco_mesh_compression");
}

TEST(ImportFileErrors, TextureTransformIsNotSupportedWhenRequired) {
  SkinnedTriangle t;
  t.b.json()["extensionsRequired"] = {"KHR_mesh_quantization", "KHR_texture_transform"};
  EXPECT_IMPORT_ERROR(t.b, "extensionsRequired[1]", "unsupported required extension KHR_texture_transform");
}

TEST(ImportFileErrors, ExternalBufferWhenImportingFromMemory) {
  GltfBuilder b;
  b.add_node({{"name", "n"}});
  b.json()["buffers"] = {{{"byteLength", 4}, {"uri", "data.bin"}}};
  Result<Model> r = import_gltf_memory(bytes_of(b.json().dump()), "mem.gltf");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "mem.gltf: buffers[0].uri: external file 'data.bin' cannot be loaded when importing from memory");
}

TEST(ImportFileErrors, UnsupportedGltfVersion) {
  SkinnedTriangle t;
  t.b.json()["asset"]["version"] = "1.0";
  EXPECT_IMPORT_ERROR(t.b, "asset.version", "glTF version '1.0' is not 2.x");
}

TEST(ImportFileErrors, TinygltfErrorsAreWrapped) {
  SkinnedTriangle t;
  t.b.json()["accessors"][0]["type"] = "VEC7";
  EXPECT_IMPORT_ERROR(t.b, "$", "tinygltf: Unsupported `type` for accessor object");
}

TEST(ImportFileErrors, ImageBufferViewOutsideItsBuffer) {
  SkinnedTriangle t;
  const uint8_t png[] = {0x89, 'P', 'N', 'G'};
  const int view = t.b.add_view(png, sizeof png);
  t.b.json()["bufferViews"][static_cast<std::size_t>(view)]["byteOffset"] = 100000;
  t.b.json()["images"] = {{{"bufferView", view}, {"mimeType", "image/png"}}};
  EXPECT_IMPORT_ERROR(t.b, "images[0].bufferView", "exceeds buffers[0].byteLength");
}

TEST(ImportFileErrors, ImageInABufferViewWithoutMimeType) {
  SkinnedTriangle t;
  const uint8_t png[] = {0x89, 'P', 'N', 'G'};
  t.b.json()["images"] = {{{"bufferView", t.b.add_view(png, sizeof png)}}};
  EXPECT_IMPORT_ERROR(t.b, "images[0].mimeType", "required when the image is in a bufferView");
}

TEST(ImportFileErrors, FileWithoutNodes) {
  GltfBuilder b;
  EXPECT_IMPORT_ERROR(b, "nodes", "no nodes");
}

// --- GLB container --------------------------------------------------------------------------

std::vector<uint8_t> small_glb() {
  SkinnedTriangle t;
  return t.b.to_glb();
}

std::string glb_error(const std::vector<uint8_t>& bytes) {
  Result<Model> r = import_gltf_memory(bytes, "t.glb");
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message;
}

TEST(ImportGlbErrors, LengthDoesNotMatchTheFile) {
  std::vector<uint8_t> glb = small_glb();
  put_u32(glb, 8, static_cast<uint32_t>(glb.size() + 4));
  EXPECT_THAT(glb_error(glb), StartsWith("t.glb: GLB header: declared length"));
}

TEST(ImportGlbErrors, WrongVersion) {
  std::vector<uint8_t> glb = small_glb();
  put_u32(glb, 4, 1);
  EXPECT_EQ(glb_error(glb), "t.glb: GLB header: version 1 is not 2");
}

TEST(ImportGlbErrors, ShorterThanTheHeader) {
  EXPECT_EQ(glb_error({'g', 'l', 'T', 'F', 2, 0}), "t.glb: GLB header: file shorter than the 12-byte header");
}

TEST(ImportGlbErrors, JsonChunkRunsPastTheEnd) {
  std::vector<uint8_t> glb = small_glb();
  put_u32(glb, 12, static_cast<uint32_t>(glb.size()));
  EXPECT_THAT(glb_error(glb), StartsWith("t.glb: GLB chunk 0: JSON chunk of"));
}

TEST(ImportGlbErrors, FirstChunkNotJson) {
  std::vector<uint8_t> glb = small_glb();
  put_u32(glb, 16, 0x004E4942u);
  EXPECT_EQ(glb_error(glb), "t.glb: GLB chunk 0: first chunk is not of type JSON");
}

TEST(ImportGlbErrors, BinChunkRunsPastTheEnd) {
  std::vector<uint8_t> glb = small_glb();
  uint32_t json_size = 0;
  for (int i = 0; i < 4; ++i) json_size |= static_cast<uint32_t>(glb[12 + static_cast<std::size_t>(i)]) << (8 * i);
  // Off by the 8-byte chunk header: the case tinygltf 2.7.0 itself lets through.
  put_u32(glb, 20 + json_size, static_cast<uint32_t>(glb.size() - 20 - json_size));
  EXPECT_THAT(glb_error(glb), StartsWith("t.glb: GLB chunk 1: BIN chunk of"));
}

TEST(ImportGlbErrors, SecondChunkNotBin) {
  std::vector<uint8_t> glb = small_glb();
  uint32_t json_size = 0;
  for (int i = 0; i < 4; ++i) json_size |= static_cast<uint32_t>(glb[12 + static_cast<std::size_t>(i)]) << (8 * i);
  put_u32(glb, 24 + json_size, 0x12345678u);
  EXPECT_EQ(glb_error(glb), "t.glb: GLB chunk 1: second chunk is not of type BIN");
}

}  // namespace
}  // namespace posecast::testing
