// PaletteBuffer: every entity's palette in one uniform buffer at offsets aligned to
// GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT; each bound range must skin with that entity's palette.

#include <gtest/gtest.h>

#include "gl_test_support.h"
#include "posecast/pose_evaluation.h"
#include "posecast/render/gpu_model.h"
#include "posecast/render/palette_buffer.h"
#include "posecast/render/renderer.h"
#include "posecast/render/skinning_capture.h"
#include "skinning_compare.h"

namespace posecast::render::testing {
namespace {

class PaletteBufferTest : public GlTest {};

TEST_F(PaletteBufferTest, EachEntityRangeSkinsWithItsOwnPaletteAtAnAlignedOffset) {
  const uint32_t max_joints = max_palette_joints();
  // Mixed joint counts (24, 5, 24, 5) so palettes end off the alignment grid.
  Result<Model> big = rig::load_model_source("gen-rig:24");
  Result<Model> small = rig::load_model_source("gen-rig:5");
  ASSERT_TRUE(big.ok() && small.ok());
  const Model* models[2] = {&big.value(), &small.value()};
  Result<GpuModel> gpu_big = GpuModel::upload(big.value(), max_joints);
  Result<GpuModel> gpu_small = GpuModel::upload(small.value(), max_joints);
  ASSERT_TRUE(gpu_big.ok() && gpu_small.ok());
  const GpuModel* gpu_models[2] = {&gpu_big.value(), &gpu_small.value()};

  constexpr int kEntities = 4;
  std::vector<PoseBuffers> poses(kEntities);
  std::vector<RenderEntity> entities(kEntities);
  for (int e = 0; e < kEntities; ++e) {
    const Rig& rig = models[e % 2]->rigs[0];
    const int walk = models[e % 2]->find_clip("walk");
    ASSERT_GE(walk, 0);
    SamplingCursor cursor;
    const int64_t time = rig.clips[static_cast<std::size_t>(walk)].duration_us * (e + 1) / 7;
    ASSERT_TRUE(evaluate_pose(rig, walk, time, cursor, poses[static_cast<std::size_t>(e)]));
    entities[static_cast<std::size_t>(e)].model = static_cast<uint32_t>(e % 2);
    entities[static_cast<std::size_t>(e)].palette = poses[static_cast<std::size_t>(e)].palette;
  }

  PaletteBuffer buffer(max_joints);
  ASSERT_TRUE(buffer.upload(entities));
  Result<SkinningCapture> capture = SkinningCapture::create(ShaderSources(), max_joints);
  ASSERT_TRUE(capture.ok()) << capture.error().message;
  for (std::size_t e = 0; e < entities.size(); ++e) {
    EXPECT_EQ(buffer.offset(e) % static_cast<std::size_t>(buffer.alignment()), 0u) << "entity " << e;
    if (e > 0) {
      EXPECT_GE(buffer.offset(e), buffer.offset(e - 1) + entities[e - 1].palette.size_bytes());
    }
    const SkinnedMesh& mesh = models[e % 2]->rigs[0].meshes.at(0);
    std::vector<SkinnedVertex> cpu(mesh.positions.size());
    ASSERT_TRUE(skin_vertices_cpu(mesh, entities[e].palette, cpu));
    buffer.bind(e, 0);
    Result<std::vector<SkinnedVertex>> gpu =
        capture.value().run_with_bound_palette(gpu_models[e % 2]->rigs()[0].meshes.at(0));
    ASSERT_TRUE(gpu.ok()) << gpu.error().message;
    const SkinningDifference d = compare_skinning(cpu, gpu.value(), 0.01);
    EXPECT_LE(d.worst_position, 1e-5) << "entity " << e << ": " << d.describe();
    EXPECT_LE(d.worst_normal, 1e-5) << "entity " << e << ": " << d.describe();
  }
}

TEST_F(PaletteBufferTest, RefusesAPaletteLargerThanTheBlock) {
  const uint32_t max_joints = max_palette_joints();
  std::vector<glm::mat4> palette(max_joints + 1, glm::mat4(1.0f));
  RenderEntity entity;
  entity.palette = palette;
  PaletteBuffer buffer(max_joints);
  EXPECT_FALSE(buffer.upload(std::span<const RenderEntity>(&entity, 1)));
}

TEST_F(PaletteBufferTest, AlignmentComesFromTheDriver) {
  GLint alignment = 0;
  glGetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT, &alignment);
  PaletteBuffer buffer(max_palette_joints());
  EXPECT_EQ(buffer.alignment(), std::max(alignment, 16));
}

}  // namespace
}  // namespace posecast::render::testing
