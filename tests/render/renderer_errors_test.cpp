// Renderer and GpuModel refuse bad input with a message instead of drawing garbage.

#include <gtest/gtest.h>

#include "gl_test_support.h"
#include "posecast/render/offscreen_target.h"
#include "posecast/render/renderer.h"
#include "posecast/render/shader_sources.h"

namespace posecast::render::testing {
namespace {

class RendererErrors : public GlTest {};

TEST_F(RendererErrors, PaletteSizeMustMatchTheRigJointCount) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok());
  Result<std::unique_ptr<Renderer>> renderer = Renderer::create();
  ASSERT_TRUE(renderer.ok()) << renderer.error().message;
  ASSERT_TRUE(renderer.value()->add_model(model.value()).ok());
  std::vector<glm::mat4> palette(23, glm::mat4(1.0f));
  RenderEntity entity;
  entity.palette = palette;
  Result<DrawStats> drawn =
      renderer.value()->draw(FrameView{}, std::span<const RenderEntity>(&entity, 1), {});
  ASSERT_FALSE(drawn.ok());
  EXPECT_NE(drawn.error().message.find("palette has 23 matrices"), std::string::npos)
      << drawn.error().message;
}

TEST_F(RendererErrors, UnknownModelOrRigIsAnError) {
  Result<std::unique_ptr<Renderer>> renderer = Renderer::create();
  ASSERT_TRUE(renderer.ok()) << renderer.error().message;
  RenderEntity entity;
  entity.model = 3;
  Result<DrawStats> drawn =
      renderer.value()->draw(FrameView{}, std::span<const RenderEntity>(&entity, 1), {});
  ASSERT_FALSE(drawn.ok());
  EXPECT_NE(drawn.error().message.find("unknown model 3"), std::string::npos);
}

TEST_F(RendererErrors, RigWithMoreJointsThanThePaletteBlockIsRefused) {
  Model model;
  model.source = "hand-made";
  Rig& rig = model.rigs.emplace_back();
  rig.skeleton.joint_nodes.assign(max_palette_joints() + 1, 0);
  Result<GpuModel> gpu = GpuModel::upload(model, max_palette_joints());
  ASSERT_FALSE(gpu.ok());
  EXPECT_NE(gpu.error().message.find("more than the shader's palette holds"), std::string::npos)
      << gpu.error().message;
}

TEST_F(RendererErrors, UndecodableImageDrawsUntexturedWithAWarning) {
  Result<Model> loaded = rig::load_model_source("gen-rig:4");
  ASSERT_TRUE(loaded.ok());
  Model model = std::move(loaded.value());
  model.images = {EncodedImage{"image/png", {1, 2, 3, 4}}};
  for (SkinnedMesh& mesh : model.rigs[0].meshes)
    for (SubMesh& sub : mesh.submeshes) sub.base_color_image = 0;
  std::vector<std::string> warnings;
  Result<GpuModel> gpu = GpuModel::upload(model, max_palette_joints(), &warnings);
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("images[0]: not decoded"), std::string::npos) << warnings[0];
  EXPECT_EQ(gpu.value().rigs()[0].meshes.at(0).submeshes.at(0).texture, 0u);
}

TEST_F(RendererErrors, ShaderCompileErrorNamesTheFile) {
  const std::string dir = std::string(POSECAST_RENDER_OUTPUT_DIR) + "/broken_shaders";
  std::filesystem::create_directories(dir);
  for (const char* name : {"skinned.vert.glsl", "lit.frag.glsl", "grid.vert.glsl",
                           "grid.frag.glsl", "lines.vert.glsl", "lines.frag.glsl"}) {
    Result<std::string> text = ShaderSources().load(name);
    ASSERT_TRUE(text.ok());
    std::string source = text.value();
    if (std::string(name) == "lit.frag.glsl") source += "\nthis is not glsl;\n";
    FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(source.data(), 1, source.size(), f);
    std::fclose(f);
  }
  Result<std::unique_ptr<Renderer>> renderer = Renderer::create(ShaderSources(dir));
  ASSERT_FALSE(renderer.ok());
  EXPECT_EQ(renderer.error().message.rfind("lit.frag.glsl: compile failed", 0), 0u)
      << renderer.error().message;
}

TEST_F(RendererErrors, MissingShaderDirectoryIsAnError) {
  Result<std::unique_ptr<Renderer>> renderer = Renderer::create(ShaderSources("/nonexistent"));
  ASSERT_FALSE(renderer.ok());
  EXPECT_NE(renderer.error().message.find("/nonexistent/skinned.vert.glsl: cannot open"),
            std::string::npos)
      << renderer.error().message;
}

TEST_F(RendererErrors, OffscreenTargetRejectsZeroSize) {
  // Either side zero is refused, each with a message naming the size.
  for (const auto& [width, height] : {std::pair{0, 10}, std::pair{10, 0}}) {
    Result<OffscreenTarget> target = OffscreenTarget::create(width, height);
    ASSERT_FALSE(target.ok()) << width << "x" << height;
    EXPECT_NE(target.error().message.find(std::to_string(width) + "x" + std::to_string(height)), std::string::npos)
        << target.error().message;
  }
  EXPECT_TRUE(OffscreenTarget::create(10, 10).ok());  // the check is on zero, not on the size
}

TEST(ShaderSourcesTest, DefinesGoRightAfterTheVersionLine) {
  Result<std::string> text = ShaderSources().load("skinned.vert.glsl", "#define X 1\n");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text.value().rfind("#version 330 core\n#define X 1\n", 0), 0u);
  EXPECT_FALSE(ShaderSources().load("nope.glsl").ok());
}

}  // namespace
}  // namespace posecast::render::testing
