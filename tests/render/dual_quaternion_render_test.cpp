// Dual-quaternion skinning through the renderer's upload: PaletteBuffer packs dual quaternions
// for DQS entities beside LBS matrices, falls back to matrices for a palette with scale, and
// every bound range skins like the CPU reference of its mode; Renderer::add_model keeps a model
// whose joints carry scale on LBS with a warning, and draw() uses the DQS program per entity.

#include <gtest/gtest.h>

#include <glm/gtc/matrix_transform.hpp>

#include "gl_test_support.h"
#include "posecast/pose_evaluation.h"
#include "posecast/render/offscreen_target.h"
#include "posecast/render/palette_buffer.h"
#include "posecast/render/renderer.h"
#include "posecast/render/skinning_capture.h"
#include "skinning_compare.h"
#include "twist_pose.h"

namespace posecast::render::testing {
namespace {

class DualQuaternionRender : public GlTest {};

TEST_F(DualQuaternionRender, PaletteBufferPacksEachEntityInItsModeAndFallsBackOnScale) {
  const uint32_t max_joints = max_palette_joints();
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model.value().rigs[0];
  Result<GpuModel> gpu = GpuModel::upload(model.value(), max_joints);
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;

  // Entities: DQS, LBS, DQS with a scaled joint (packed as matrices), DQS twisted 170 degrees.
  const int forearm = node_named(rig.skeleton, "forearm_l");
  std::vector<std::vector<glm::mat4>> palettes(4);
  for (std::size_t e = 0; e < 3; ++e) {
    SamplingCursor cursor;
    PoseBuffers pose;
    const int walk = model.value().find_clip("walk");
    ASSERT_GE(walk, 0);
    ASSERT_TRUE(evaluate_pose(rig, walk, static_cast<int64_t>(e + 1) * 150000, cursor, pose));
    palettes[e] = pose.palette;
  }
  palettes[2][5] = glm::scale(palettes[2][5], glm::vec3(1.0f, 1.3f, 1.0f));
  palettes[3] = twisted_palette(rig.skeleton, forearm, first_child(rig.skeleton, forearm), 170.0f);
  const std::vector<SkinningMode> modes = {SkinningMode::kDualQuaternion, SkinningMode::kLinearBlend,
                                           SkinningMode::kDualQuaternion,
                                           SkinningMode::kDualQuaternion};
  std::vector<RenderEntity> entities(4);
  for (std::size_t e = 0; e < 4; ++e) entities[e].palette = palettes[e];

  PaletteBuffer buffer(max_joints);
  EXPECT_FALSE(buffer.upload(entities, std::span(modes).first(3)));  // one mode per entity
  ASSERT_TRUE(buffer.upload(entities, modes));
  EXPECT_EQ(buffer.packed_mode(0), SkinningMode::kDualQuaternion);
  EXPECT_EQ(buffer.packed_mode(1), SkinningMode::kLinearBlend);
  EXPECT_EQ(buffer.packed_mode(2), SkinningMode::kLinearBlend);  // scale: matrices
  EXPECT_EQ(buffer.packed_mode(3), SkinningMode::kDualQuaternion);
  EXPECT_EQ(buffer.rigid_fallbacks(), 1u);
  // A dual-quaternion palette takes 32 bytes a joint, half of a matrix palette.
  const auto alignment = static_cast<std::size_t>(buffer.alignment());
  const auto aligned = [alignment](std::size_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
  };
  ASSERT_TRUE(buffer.upload(std::span(entities).first(1), std::span(modes).first(1)));
  EXPECT_EQ(buffer.bytes_uploaded(), aligned(24 * sizeof(DualQuaternion)));
  ASSERT_TRUE(buffer.upload(entities, modes));

  Result<SkinningCapture> lbs = SkinningCapture::create(ShaderSources(), max_joints);
  Result<SkinningCapture> dqs =
      SkinningCapture::create(ShaderSources(), max_joints, SkinningMode::kDualQuaternion);
  ASSERT_TRUE(lbs.ok() && dqs.ok());
  const SkinnedMesh& mesh = rig.meshes.at(0);
  for (std::size_t e = 0; e < entities.size(); ++e) {
    std::vector<SkinnedVertex> cpu(mesh.positions.size());
    const bool dual = buffer.packed_mode(e) == SkinningMode::kDualQuaternion;
    if (dual) {
      std::vector<DualQuaternion> dq(palettes[e].size());
      ASSERT_TRUE(palette_to_dual_quaternions(palettes[e], dq));
      ASSERT_TRUE(skin_vertices_cpu_dq(mesh, dq, cpu));
    } else {
      ASSERT_TRUE(skin_vertices_cpu(mesh, palettes[e], cpu));
    }
    buffer.bind(e, 0);
    Result<std::vector<SkinnedVertex>> out =
        (dual ? dqs : lbs).value().run_with_bound_palette(gpu.value().rigs()[0].meshes.at(0));
    ASSERT_TRUE(out.ok()) << out.error().message;
    const SkinningDifference d = compare_skinning(cpu, out.value(), 0.01);
    EXPECT_LE(d.worst_position, 1e-5) << "entity " << e << ": " << d.describe();
    EXPECT_LE(d.worst_normal, 1e-5) << "entity " << e << ": " << d.describe();
  }
}

TEST_F(DualQuaternionRender, CaptureRefusesAPaletteWithScale) {
  const uint32_t max_joints = max_palette_joints();
  Result<Model> model = rig::load_model_source("gen-rig:4");
  ASSERT_TRUE(model.ok());
  Result<GpuModel> gpu = GpuModel::upload(model.value(), max_joints);
  ASSERT_TRUE(gpu.ok());
  Result<SkinningCapture> dqs =
      SkinningCapture::create(ShaderSources(), max_joints, SkinningMode::kDualQuaternion);
  ASSERT_TRUE(dqs.ok()) << dqs.error().message;
  const std::vector<glm::mat4> palette(4, glm::scale(glm::mat4(1.0f), glm::vec3(2.0f)));
  Result<std::vector<SkinnedVertex>> out = dqs.value().run(gpu.value().rigs()[0].meshes.at(0), palette);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("not rigid"), std::string::npos) << out.error().message;
}

TEST_F(DualQuaternionRender, RendererDrawsDqsModelsWithTheDqsProgramAndScaledModelsWithLbs) {
  Result<Model> rigid = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(rigid.ok());
  Model scaled = rigid.value();
  scaled.source = "gen-rig:24 scaled";
  const uint16_t node = scaled.rigs[0].skeleton.joint_nodes[7];
  scaled.rigs[0].skeleton.rest[node].scale = glm::vec3(1.0f, 2.0f, 1.0f);

  Result<std::unique_ptr<Renderer>> renderer = Renderer::create();
  ASSERT_TRUE(renderer.ok()) << renderer.error().message;
  std::vector<std::string> warnings;
  Result<uint32_t> a = renderer.value()->add_model(rigid.value(), &warnings,
                                                   SkinningMode::kDualQuaternion);
  Result<uint32_t> b = renderer.value()->add_model(rigid.value(), &warnings);
  Result<uint32_t> c =
      renderer.value()->add_model(scaled, &warnings, SkinningMode::kDualQuaternion);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(renderer.value()->skinning_mode(a.value()), SkinningMode::kDualQuaternion);
  EXPECT_EQ(renderer.value()->skinning_mode(b.value()), SkinningMode::kLinearBlend);
  EXPECT_EQ(renderer.value()->skinning_mode(c.value()), SkinningMode::kLinearBlend);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("gen-rig:24 scaled: skin 0: joint '" +
                             scaled.rigs[0].skeleton.names[node] + "'"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("drawn with linear blend skinning"), std::string::npos);

  SamplingCursor cursor;
  PoseBuffers pose;
  ASSERT_TRUE(evaluate_pose(rigid.value().rigs[0], kRestPose, 0, cursor, pose));
  std::vector<RenderEntity> entities(3);
  for (uint32_t e = 0; e < 3; ++e) {
    entities[e].model = e;
    entities[e].palette = pose.palette;
    entities[e].world = glm::translate(glm::mat4(1.0f), glm::vec3(static_cast<float>(e), 0, 0));
  }
  Result<OffscreenTarget> target = OffscreenTarget::create(64, 64);
  ASSERT_TRUE(target.ok()) << target.error().message;
  target.value().bind();
  Result<DrawStats> drawn = renderer.value()->draw(FrameView{}, entities, DrawOptions{});
  ASSERT_TRUE(drawn.ok()) << drawn.error().message;
  EXPECT_EQ(drawn.value().dual_quaternion_entities, 1u);
  EXPECT_EQ(drawn.value().rigid_fallbacks, 0u);
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
}

}  // namespace
}  // namespace posecast::render::testing
