// GPU skinning (the production vertex shaders, read back through transform feedback) equals the
// CPU reference of the same vertices within 1e-5 relative, for the generated rig (24, 300 and
// 512 joints: palette indices above 255 included) and for Fox.glb, over every clip at several
// times: linear blend (skinned.vert.glsl) and dual quaternions (skinned_dq.vert.glsl, against
// skin_vertices_cpu_dq, also on joints twisted by 90 and 170 degrees).

#include <gtest/gtest.h>

#include "gl_test_support.h"
#include "posecast/pose_evaluation.h"
#include "posecast/render/gpu_model.h"
#include "posecast/render/rigid_rig.h"
#include "posecast/render/renderer.h"
#include "posecast/render/skinning_capture.h"
#include "skinning_compare.h"
#include "twist_pose.h"

namespace posecast::render::testing {
namespace {

constexpr double kTolerance = 1e-5;

// The CPU reference of `mode` for one mesh: LBS from the matrices, DQS from the dual
// quaternions the upload converts them to.
std::vector<SkinnedVertex> cpu_reference(SkinningMode mode, const SkinnedMesh& mesh,
                                         std::span<const glm::mat4> palette) {
  std::vector<SkinnedVertex> cpu(mesh.positions.size());
  if (mode == SkinningMode::kLinearBlend) {
    EXPECT_TRUE(skin_vertices_cpu(mesh, palette, cpu));
  } else {
    std::vector<DualQuaternion> dual(palette.size());
    EXPECT_TRUE(palette_to_dual_quaternions(palette, dual));
    EXPECT_TRUE(skin_vertices_cpu_dq(mesh, dual, cpu));
  }
  return cpu;
}

class GpuSkinning : public GlTest {
 protected:
  // Skins every mesh of rig `r` with `palette` on the GPU and on the CPU; records the worst
  // difference and expects it within kTolerance.
  void compare_palette(const Model& model, const GpuModel& gpu, const SkinningCapture& capture,
                       SkinningMode mode, std::size_t r, std::span<const glm::mat4> palette,
                       const std::string& where) {
    const Rig& rig = model.rigs[r];
    // Floor for the relative error: 1% of the rig's bind-pose size.
    const double floor = 0.01 * static_cast<double>(glm::length(gpu.rigs()[r].bind_bounds.size()));
    for (std::size_t m = 0; m < rig.meshes.size(); ++m) {
      const std::vector<SkinnedVertex> cpu = cpu_reference(mode, rig.meshes[m], palette);
      Result<std::vector<SkinnedVertex>> gpu_vertices = capture.run(gpu.rigs()[r].meshes[m], palette);
      ASSERT_TRUE(gpu_vertices.ok()) << gpu_vertices.error().message;
      ASSERT_EQ(gpu_vertices.value().size(), cpu.size());
      const SkinningDifference d = compare_skinning(cpu, gpu_vertices.value(), floor);
      vertices_checked_ += cpu.size();
      if (d.worst_position > worst_.worst_position || d.worst_normal > worst_.worst_normal) {
        worst_.worst_position = std::max(worst_.worst_position, d.worst_position);
        worst_.worst_normal = std::max(worst_.worst_normal, d.worst_normal);
        worst_where_ = where + " mesh " + std::to_string(m) + ": " + d.describe();
      }
      EXPECT_LE(d.worst_position, kTolerance)
          << model.source << " " << where << " mesh " << m << ": " << d.describe();
      EXPECT_LE(d.worst_normal, kTolerance)
          << model.source << " " << where << " mesh " << m << ": " << d.describe();
    }
  }

  // Skins every mesh of every rig with every clip at four times; prints the worst case.
  void expect_gpu_matches_cpu(const Model& model,
                              SkinningMode mode = SkinningMode::kLinearBlend) {
    const uint32_t max_joints = max_palette_joints();
    ASSERT_GE(max_joints, 256u);
    Result<GpuModel> gpu = GpuModel::upload(model, max_joints);
    ASSERT_TRUE(gpu.ok()) << gpu.error().message;
    Result<SkinningCapture> capture = SkinningCapture::create(ShaderSources(), max_joints, mode);
    ASSERT_TRUE(capture.ok()) << capture.error().message;
    vertices_checked_ = 0;
    worst_ = {};
    worst_where_.clear();
    for (std::size_t r = 0; r < model.rigs.size(); ++r) {
      const Rig& rig = model.rigs[r];
      for (int clip = kRestPose; clip < static_cast<int>(rig.clips.size()); ++clip) {
        const int64_t duration =
            clip == kRestPose ? 0 : rig.clips[static_cast<std::size_t>(clip)].duration_us;
        for (int64_t time : {int64_t{0}, duration / 3, duration * 7 / 9, duration}) {
          SamplingCursor cursor;
          PoseBuffers pose;
          ASSERT_TRUE(evaluate_pose(rig, clip, time, cursor, pose));
          compare_palette(model, gpu.value(), capture.value(), mode, r, pose.palette,
                          "skin " + std::to_string(r) + " clip " + std::to_string(clip) +
                              " t=" + std::to_string(time) + "us");
        }
      }
    }
    EXPECT_GT(vertices_checked_, 0u);
    std::printf("[ info ] %s (%s): %zu skinned vertices compared; worst: %s\n",
                model.source.c_str(), to_string(mode), vertices_checked_, worst_where_.c_str());
  }

  std::size_t vertices_checked_ = 0;
  SkinningDifference worst_;
  std::string worst_where_;
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

TEST_F(GpuSkinning, DualQuaternionsOnGeneratedRigWith24JointsMatchCpuReference) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_gpu_matches_cpu(model.value(), SkinningMode::kDualQuaternion);
}

TEST_F(GpuSkinning, DualQuaternionsOnGeneratedRigWith300JointsMatchCpuReference) {
  Result<Model> model = rig::load_model_source("gen-rig:300");
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_gpu_matches_cpu(model.value(), SkinningMode::kDualQuaternion);
}

TEST_F(GpuSkinning, DualQuaternionsOnTwistedJointsMatchCpuReference) {
  // The twist test's poses (dqs_twist_volume_test.cpp): where LBS and DQS differ most.
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const uint32_t max_joints = max_palette_joints();
  Result<GpuModel> gpu = GpuModel::upload(model.value(), max_joints);
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;
  Result<SkinningCapture> capture =
      SkinningCapture::create(ShaderSources(), max_joints, SkinningMode::kDualQuaternion);
  ASSERT_TRUE(capture.ok()) << capture.error().message;
  const Skeleton& skeleton = model.value().rigs[0].skeleton;
  for (const char* joint : {"forearm_l", "shin_l", "chest"}) {
    const int node = node_named(skeleton, joint);
    ASSERT_GE(node, 0) << joint;
    for (float degrees : {90.0f, 170.0f}) {
      const std::vector<glm::mat4> palette =
          twisted_palette(skeleton, node, first_child(skeleton, node), degrees);
      compare_palette(model.value(), gpu.value(), capture.value(), SkinningMode::kDualQuaternion,
                      0, palette, std::string(joint) + " " + std::to_string(static_cast<int>(degrees)) + " deg");
    }
  }
  std::printf("[ info ] gen-rig:24 twisted joints (dqs): %zu vertices; worst: %s\n",
              vertices_checked_, worst_where_.c_str());
}

// Fox and CesiumMan carry no scale in their palettes (rig_scale_problem finds none), so their
// DQS path is the dual-quaternion shader, not the fallback.
TEST_F(GpuSkinning, DualQuaternionsOnFoxMatchCpuReference) {
  if (!assets_present()) GTEST_SKIP() << "sample assets absent: " << POSECAST_ASSETS_DIR;
  Result<Model> model = rig::load_model_source(fox_path());
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(rig_scale_problem(model.value().rigs.at(0)), "");
  expect_gpu_matches_cpu(model.value(), SkinningMode::kDualQuaternion);
}

TEST_F(GpuSkinning, DualQuaternionsOnCesiumManMatchCpuReference) {
  const std::string path = std::string(POSECAST_ASSETS_DIR) + "/cesium_man.gltf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "sample asset absent: " << path;
  Result<Model> model = rig::load_model_source(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(rig_scale_problem(model.value().rigs.at(0)), "");
  expect_gpu_matches_cpu(model.value(), SkinningMode::kDualQuaternion);
}

}  // namespace
}  // namespace posecast::render::testing
