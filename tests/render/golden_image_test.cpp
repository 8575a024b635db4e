// A rendered frame of the generated rig at a fixed pose matches the committed golden PNG within
// a small per-pixel tolerance. Regenerate after an intended visual change with
//   POSECAST_UPDATE_GOLDEN=1 build/tests/render/render_tests --gtest_filter='*GoldenImage*'
// (under xvfb-run or with EGL), look at the new PNGs, and commit them.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gl_test_support.h"
#include "posecast/pose_evaluation.h"
#include "posecast/render/image_io.h"
#include "posecast/render/offscreen_target.h"
#include "posecast/render/renderer.h"

namespace posecast::render::testing {
namespace {

constexpr int kWidth = 320;
constexpr int kHeight = 240;
// A pixel counts as different when a channel differs by more than this; the image matches when
// at most kMaxDifferentFraction of its pixels differ (rasterisation on other Mesa versions may
// move a few edge pixels).
constexpr int kChannelTolerance = 8;
constexpr double kMaxDifferentFraction = 0.005;

struct Scene {
  const char* golden_name;
  const char* clip;
  double clip_fraction;  // time = fraction of the clip's duration
  bool skeleton;
  bool wireframe;
};

class GoldenImage : public GlTest, public ::testing::WithParamInterface<Scene> {};

RgbaImage render_scene(const Scene& scene) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  EXPECT_TRUE(model.ok()) << model.error().message;
  if (!model) return {};
  const Rig& rig = model.value().rigs.at(0);
  const int clip = model.value().find_clip(scene.clip);
  EXPECT_GE(clip, 0) << scene.clip;
  SamplingCursor cursor;
  PoseBuffers pose;
  const auto time = static_cast<int64_t>(
      static_cast<double>(rig.clips.at(static_cast<std::size_t>(clip)).duration_us) *
      scene.clip_fraction);
  EXPECT_TRUE(evaluate_pose(rig, clip, time, cursor, pose));

  Result<std::unique_ptr<Renderer>> renderer = Renderer::create();
  EXPECT_TRUE(renderer.ok()) << renderer.error().message;
  if (!renderer) return {};
  Result<uint32_t> id = renderer.value()->add_model(model.value());
  EXPECT_TRUE(id.ok()) << id.error().message;
  RenderEntity entity;
  entity.model = id.value();
  entity.world = rig.skeleton.mesh_node >= 0
                     ? pose.models[static_cast<std::size_t>(rig.skeleton.mesh_node)]
                     : glm::mat4(1.0f);
  entity.palette = pose.palette;
  const std::span<const RenderEntity> entities(&entity, 1);

  Result<OffscreenTarget> target = OffscreenTarget::create(kWidth, kHeight);
  EXPECT_TRUE(target.ok()) << target.error().message;
  if (!target) return {};
  OrbitCamera camera;  // default yaw/pitch, framed on the bind-pose bounds
  camera.frame(renderer.value()->bounds(entities), static_cast<float>(kWidth) / kHeight);
  DrawOptions options;
  options.skeleton = scene.skeleton;
  options.wireframe = scene.wireframe;
  target.value().bind();
  const FrameView view = make_frame_view(camera, static_cast<float>(kWidth) / kHeight,
                                         renderer.value()->bounds(entities));
  Result<DrawStats> drawn = renderer.value()->draw(view, entities, options);
  EXPECT_TRUE(drawn.ok()) << drawn.error().message;
  EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
  return RgbaImage{kWidth, kHeight, target.value().read_rgba()};
}

TEST_P(GoldenImage, RenderedFrameMatchesCommittedGolden) {
  const Scene& scene = GetParam();
  const RgbaImage actual = render_scene(scene);
  ASSERT_EQ(actual.pixels.size(), static_cast<std::size_t>(kWidth * kHeight * 4));
  const std::string golden_path =
      std::string(POSECAST_RENDER_GOLDEN_DIR) + "/" + scene.golden_name + ".png";
  const std::string actual_path =
      std::string(POSECAST_RENDER_OUTPUT_DIR) + "/" + scene.golden_name + "_actual.png";

  const char* update = std::getenv("POSECAST_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    Status written = write_png(golden_path, actual);
    ASSERT_TRUE(written.ok()) << written.error().message;
    // Nothing was compared: a skip, so the run does not read as a pass.
    GTEST_SKIP() << "golden updated: wrote " << golden_path;
  }
  Result<RgbaImage> golden = read_png(golden_path);
  ASSERT_TRUE(golden.ok()) << golden.error().message
                           << " (create it with POSECAST_UPDATE_GOLDEN=1)";
  ASSERT_EQ(golden.value().width, kWidth);
  ASSERT_EQ(golden.value().height, kHeight);

  std::size_t different = 0;
  int worst = 0;
  std::size_t worst_pixel = 0;
  for (std::size_t p = 0; p < static_cast<std::size_t>(kWidth * kHeight); ++p) {
    int pixel_worst = 0;
    for (int c = 0; c < 4; ++c) {
      const int d = std::abs(int{actual.pixels[p * 4 + static_cast<std::size_t>(c)]} -
                             int{golden.value().pixels[p * 4 + static_cast<std::size_t>(c)]});
      pixel_worst = std::max(pixel_worst, d);
    }
    if (pixel_worst > kChannelTolerance) ++different;
    if (pixel_worst > worst) {
      worst = pixel_worst;
      worst_pixel = p;
    }
  }
  const double fraction = static_cast<double>(different) / (kWidth * kHeight);
  std::printf("[ info ] %s: %zu pixels differ by more than %d (%.4f%%); worst %d at (%zu, %zu)\n",
              scene.golden_name, different, kChannelTolerance, fraction * 100.0, worst,
              worst_pixel % kWidth, worst_pixel / kWidth);
  if (fraction > kMaxDifferentFraction) {
    (void)write_png(actual_path, actual);
    ADD_FAILURE() << scene.golden_name << ": " << different << " pixels (" << fraction * 100.0
                  << "%) differ from " << golden_path << " by more than " << kChannelTolerance
                  << "; worst " << worst << " at (" << worst_pixel % kWidth << ", "
                  << worst_pixel / kWidth << "); this render: " << actual_path;
  }
  // Not a blank frame: the figure covers a fair part of the image.
  std::size_t non_background = 0;
  for (std::size_t p = 0; p < static_cast<std::size_t>(kWidth * kHeight); ++p) {
    non_background += actual.pixels[p * 4] > 150 ? 1u : 0u;  // skin tone is bright red-ish
  }
  EXPECT_GT(non_background, static_cast<std::size_t>(kWidth * kHeight / 50));
}

INSTANTIATE_TEST_SUITE_P(
    GeneratedRig, GoldenImage,
    ::testing::Values(Scene{"gen_rig_walk_320x240", "walk", 0.3, false, false},
                      Scene{"gen_rig_run_skeleton_wireframe_320x240", "run", 0.6, true, true}),
    [](const ::testing::TestParamInfo<Scene>& param_info) {
      return std::string(param_info.param.golden_name);
    });

}  // namespace
}  // namespace posecast::render::testing
