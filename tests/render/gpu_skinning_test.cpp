// GPU skinning (the production vertex shader, read back through transform feedback) equals CPU
// linear-blend skinning of the same vertices within 1e-5 relative, for the generated rig (24,
// 300 and 512 joints: palette indices above 255 included) and for Fox.glb, over every clip at
// several times.

#include <gtest/gtest.h>

#include "gl_test_support.h"
#include "posecast/pose_evaluation.h"
#include "posecast/render/gpu_model.h"
#include "posecast/render/renderer.h"
#include "posecast/render/skinning_capture.h"
#include "skinning_compare.h"

namespace posecast::render::testing {
namespace {

constexpr double kTolerance = 1e-5;

class GpuSkinning : public GlTest {
 protected:
  // Skins every mesh of every rig with every clip at four times; returns the worst case.
  void expect_gpu_matches_cpu(const Model& model) {
    const uint32_t max_joints = max_palette_joints();
    ASSERT_GE(max_joints, 256u);
    Result<GpuModel> gpu = GpuModel::upload(model, max_joints);
    ASSERT_TRUE(gpu.ok()) << gpu.error().message;
    Result<SkinningCapture> capture = SkinningCapture::create(ShaderSources(), max_joints);
    ASSERT_TRUE(capture.ok()) << capture.error().message;

    std::size_t vertices_checked = 0;
    SkinningDifference worst;
    std::string worst_where;
    for (std::size_t r = 0; r < model.rigs.size(); ++r) {
      const Rig& rig = model.rigs[r];
      // Floor for the relative error: 1% of the rig's bind-pose size.
      const double floor =
          0.01 * static_cast<double>(glm::length(gpu.value().rigs()[r].bind_bounds.size()));
      for (int clip = kRestPose; clip < static_cast<int>(rig.clips.size()); ++clip) {
        const int64_t duration =
            clip == kRestPose ? 0 : rig.clips[static_cast<std::size_t>(clip)].duration_us;
        for (int64_t time : {int64_t{0}, duration / 3, duration * 7 / 9, duration}) {
          SamplingCursor cursor;
          PoseBuffers pose;
          ASSERT_TRUE(evaluate_pose(rig, clip, time, cursor, pose));
          for (std::size_t m = 0; m < rig.meshes.size(); ++m) {
            const SkinnedMesh& mesh = rig.meshes[m];
            std::vector<SkinnedVertex> cpu(mesh.positions.size());
            ASSERT_TRUE(skin_vertices_cpu(mesh, pose.palette, cpu));
            Result<std::vector<SkinnedVertex>> gpu_vertices =
                capture.value().run(gpu.value().rigs()[r].meshes[m], pose.palette);
            ASSERT_TRUE(gpu_vertices.ok()) << gpu_vertices.error().message;
            ASSERT_EQ(gpu_vertices.value().size(), cpu.size());
            const SkinningDifference d = compare_skinning(cpu, gpu_vertices.value(), floor);
            vertices_checked += cpu.size();
            if (d.worst_position > worst.worst_position || d.worst_normal > worst.worst_normal) {
              worst.worst_position = std::max(worst.worst_position, d.worst_position);
              worst.worst_normal = std::max(worst.worst_normal, d.worst_normal);
              worst_where = "skin " + std::to_string(r) + " mesh " + std::to_string(m) +
                            " clip " + std::to_string(clip) + " t=" + std::to_string(time) +
                            "us: " + d.describe();
            }
            EXPECT_LE(d.worst_position, kTolerance)
                << model.source << " skin " << r << " mesh " << m << " clip " << clip
                << " t=" << time << "us: " << d.describe();
            EXPECT_LE(d.worst_normal, kTolerance)
                << model.source << " skin " << r << " mesh " << m << " clip " << clip
                << " t=" << time << "us: " << d.describe();
          }
        }
      }
    }
    EXPECT_GT(vertices_checked, 0u);
    std::printf("[ info ] %s: %zu skinned vertices compared; worst: %s\n", model.source.c_str(),
                vertices_checked, worst_where.c_str());
  }
};

TEST_F(GpuSkinning, GeneratedRigWith24JointsMatchesCpuReference) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_gpu_matches_cpu(model.value());
}

TEST_F(GpuSkinning, GeneratedRigWith300JointsUsesPaletteIndicesAbove255) {
  Result<Model> model = rig::load_model_source("gen-rig:300");
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model.value().rigs.at(0).skeleton.joint_count(), 300u);
  // The mesh must actually weight a joint past 255, or this test proves nothing new.
  bool high_index_used = false;
  for (const SkinnedMesh& mesh : model.value().rigs[0].meshes)
    for (std::size_t v = 0; v < mesh.joints.size(); ++v)
      for (int k = 0; k < 4; ++k)
        high_index_used |= mesh.joints[v][k] > 255 && mesh.weights[v][k] > 0.0f;
  ASSERT_TRUE(high_index_used);
  expect_gpu_matches_cpu(model.value());
}

TEST_F(GpuSkinning, GeneratedRigWith512JointsFitsThePaletteBlock) {
  if (max_palette_joints() < 512) GTEST_SKIP() << "uniform block holds " << max_palette_joints();
  Result<Model> model = rig::load_model_source("gen-rig:512");
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_gpu_matches_cpu(model.value());
}

TEST_F(GpuSkinning, FoxMatchesCpuReference) {
  if (!assets_present()) GTEST_SKIP() << "sample assets absent: " << POSECAST_ASSETS_DIR;
  Result<Model> model = rig::load_model_source(fox_path());
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_gpu_matches_cpu(model.value());
}

TEST_F(GpuSkinning, CesiumManMatchesCpuReference) {
  const std::string path = std::string(POSECAST_ASSETS_DIR) + "/cesium_man.gltf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "sample asset absent: " << path;
  Result<Model> model = rig::load_model_source(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_gpu_matches_cpu(model.value());
}

}  // namespace
}  // namespace posecast::render::testing
