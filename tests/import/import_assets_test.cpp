// The public sample models load with the expected structure (skipped when the assets folder
// is absent).

#include <cctype>
#include <fstream>

#include "import_test_util.h"

namespace posecast::testing {
namespace {

struct Expected {
  const char* file;
  std::size_t rigs;
  std::size_t nodes;   // rig 0
  std::size_t joints;  // rig 0
  std::size_t clips;
  bool has_skins;
  std::size_t meshes;  // rig 0
  std::size_t images;
};

class ImportAsset : public ::testing::TestWithParam<Expected> {};

TEST_P(ImportAsset, LoadsWithTheExpectedStructureAndValidates) {
  const Expected& e = GetParam();
  SKIP_WITHOUT_ASSET(e.file);
  Result<Model> r = import_gltf_file(asset_path(e.file));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->source, asset_path(e.file));
  EXPECT_EQ(r->has_skins, e.has_skins);
  ASSERT_EQ(r->rigs.size(), e.rigs);
  const Rig& rig = r->rigs[0];
  EXPECT_EQ(rig.skeleton.node_count(), e.nodes);
  EXPECT_EQ(rig.skeleton.joint_count(), e.joints);
  EXPECT_EQ(rig.clips.size(), e.clips);
  EXPECT_EQ(rig.meshes.size(), e.meshes);
  EXPECT_EQ(r->images.size(), e.images);
  EXPECT_NE(r->content_hash, 0u);
  EXPECT_TRUE(rig.skeleton.validate().ok());
  for (const Clip& c : rig.clips) {
    EXPECT_TRUE(c.validate(rig.skeleton).ok()) << c.name;
    EXPECT_FALSE(c.tracks.empty()) << c.name;
    EXPECT_GT(c.duration_seconds, 0.0f) << c.name;
  }
  for (const SkinnedMesh& m : rig.meshes) {
    EXPECT_FALSE(m.indices.empty());
    EXPECT_EQ(m.positions.size(), m.weights.size());
    for (std::size_t v = 0; v < m.weights.size(); ++v) {
      const glm::vec4& w = m.weights[v];
      EXPECT_NEAR(w.x + w.y + w.z + w.w, 1.0f, 1e-5f) << "vertex " << v;
      for (int k = 0; k < 4; ++k) EXPECT_LT(m.joints[v][k], rig.skeleton.joint_count());
    }
  }
  // Importing the same file twice gives bit-identical key data (no hidden state).
  Result<Model> again = import_gltf_file(asset_path(e.file));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->content_hash, r->content_hash);
  for (std::size_t c = 0; c < rig.clips.size(); ++c) EXPECT_EQ(again->rigs[0].clips[c].values, rig.clips[c].values);
}

INSTANTIATE_TEST_SUITE_P(
    SampleModels, ImportAsset,
    ::testing::Values(Expected{"Fox.glb", 1, 26, 24, 3, true, 1, 1},
                      Expected{"cesium_man.gltf", 1, 22, 19, 1, true, 1, 1},
                      Expected{"rigged_simple.gltf", 1, 5, 2, 1, true, 1, 0},
                      Expected{"SimpleSkin.gltf", 1, 3, 2, 1, true, 1, 0},
                      Expected{"interpolation_test.gltf", 1, 12, 12, 9, false, 0, 1},
                      Expected{"box_animated.gltf", 1, 4, 4, 1, false, 0, 0}),
    [](const ::testing::TestParamInfo<Expected>& param_info) {
      std::string name = param_info.param.file;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

TEST(ImportAssetDetails, FoxClipsAreNamedAndItsTextureIsAPng) {
  SKIP_WITHOUT_ASSET("Fox.glb");
  Result<Model> r = import_gltf_file(asset_path("Fox.glb"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->find_clip("Survey"), 0);
  EXPECT_EQ(r->find_clip("Walk"), 1);
  EXPECT_EQ(r->find_clip("Run"), 2);
  ASSERT_EQ(r->images.size(), 1u);
  EXPECT_EQ(r->images[0].mime_type, "image/png");
  ASSERT_GE(r->images[0].bytes.size(), 8u);
  EXPECT_EQ(r->images[0].bytes[1], 'P');
  EXPECT_EQ(r->rigs[0].meshes[0].submeshes[0].base_color_image, 0);
  EXPECT_FALSE(r->rigs[0].meshes[0].submeshes[0].double_sided);  // fox_material: single-sided
  // The memory entry point gives the same model from the same bytes.
  std::ifstream in(asset_path("Fox.glb"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<Model> m = import_gltf_memory(bytes, "Fox.glb");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->content_hash, r->content_hash);
  EXPECT_EQ(m->rigs[0].clips[1].values, r->rigs[0].clips[1].values);
}

TEST(ImportAssetDetails, CesiumManMatrixNodeIsDecomposedAndItsClipIsNamedByIndex) {
  SKIP_WITHOUT_ASSET("cesium_man.gltf");
  Result<Model> r = import_gltf_file(asset_path("cesium_man.gltf"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rigs[0].clips[0].name, "animation_0");
  EXPECT_EQ(r->rigs[0].clips[0].tracks.size(), 57u);
  EXPECT_EQ(r->images[0].mime_type, "image/jpeg");
}

TEST(ImportAssetDetails, InterpolationTestKeepsEachSamplersInterpolation) {
  SKIP_WITHOUT_ASSET("interpolation_test.gltf");
  Result<Model> r = import_gltf_file(asset_path("interpolation_test.gltf"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Rig& rig = r->rigs[0];
  auto clip = [&](const char* name) -> const Clip& { return rig.clips.at(static_cast<std::size_t>(r->find_clip(name))); };
  EXPECT_EQ(clip("Step Scale").tracks.at(0).interpolation, Interpolation::kStep);
  EXPECT_EQ(clip("CubicSpline Rotation").tracks.at(0).interpolation, Interpolation::kCubicSpline);
  EXPECT_EQ(clip("Linear Translation").tracks.at(0).interpolation, Interpolation::kLinear);
  const Track& cubic = clip("CubicSpline Translation").tracks.at(0);
  EXPECT_EQ(clip("CubicSpline Translation").values.size(), std::size_t{cubic.key_count} * 9);
  // Its external image (l.jpg) is not shipped with the sample: a warning, not a failure.
  EXPECT_FALSE(r->warnings.empty());
}

}  // namespace
}  // namespace posecast::testing
