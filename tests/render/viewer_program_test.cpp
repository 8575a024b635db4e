// The posecast-viewer program itself: headless runs write a real image; bad input gives one
// line on stderr and the documented exit code.

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "gl_test_support.h"
#include "posecast/render/image_io.h"

namespace posecast::render::testing {
namespace {

struct ProgramRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

ProgramRun run_viewer(const std::string& arguments, const std::string& env_prefix = "") {
  const std::string command =
      env_prefix + " '" + std::string(POSECAST_VIEWER_PATH) + "' " + arguments + " 2>&1";
  ProgramRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::size_t lines(const std::string& text) {
  std::size_t count = 0;
  for (char c : text) count += c == '\n' ? 1u : 0u;
  return count;
}

// Pixels whose colour differs from the top-left pixel (background) by more than 24 in a channel.
std::size_t foreground_pixels(const RgbaImage& image) {
  std::size_t count = 0;
  for (std::size_t p = 0; p < image.pixels.size() / 4; ++p) {
    for (int c = 0; c < 3; ++c) {
      if (std::abs(int{image.pixels[p * 4 + static_cast<std::size_t>(c)]} -
                   int{image.pixels[static_cast<std::size_t>(c)]}) > 24) {
        ++count;
        break;
      }
    }
  }
  return count;
}

class ViewerProgram : public GlTest {};

void expect_headless_screenshot(const std::string& model, const std::string& name) {
  const std::string png = std::string(POSECAST_RENDER_OUTPUT_DIR) + "/" + name;
  std::filesystem::remove(png);
  const ProgramRun run = run_viewer("--model '" + model + "' --count 4 --frames 10 --screenshot '" +
                             png + "' --width 320 --height 240 --stats");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("median"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("p99"), std::string::npos) << run.output;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.output;
  EXPECT_GT(std::filesystem::file_size(png), 0u);
  Result<RgbaImage> image = read_png(png);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image.value().width, 320);
  EXPECT_EQ(image.value().height, 240);
  // Four figures and the grid: well over 2% of the image is not background.
  EXPECT_GT(foreground_pixels(image.value()), 320u * 240u / 50u);
}

TEST_F(ViewerProgram, HeadlessRunOfTheGeneratedRigWritesANonEmptyPng) {
  expect_headless_screenshot("gen-rig:24", "viewer_headless_gen_rig.png");
}

TEST_F(ViewerProgram, HeadlessRunOfFoxWritesANonEmptyPng) {
  if (!assets_present()) GTEST_SKIP() << "sample assets absent: " << POSECAST_ASSETS_DIR;
  expect_headless_screenshot(fox_path(), "viewer_headless_fox.png");
}

TEST_F(ViewerProgram, HeadlessOverlayIsDrawnIntoTheImage) {
  const std::string with = std::string(POSECAST_RENDER_OUTPUT_DIR) + "/viewer_overlay_on.png";
  const std::string without = std::string(POSECAST_RENDER_OUTPUT_DIR) + "/viewer_overlay_off.png";
  const std::string common = "--model gen-rig:24 --frames 3 --width 480 --height 320 ";
  const ProgramRun on = run_viewer(common + "--overlay --screenshot '" + with + "'");
#ifdef POSECAST_VIEWER_HAS_IMGUI
  ASSERT_EQ(on.exit_code, 0) << on.output;
  const ProgramRun off = run_viewer(common + "--screenshot '" + without + "'");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  Result<RgbaImage> a = read_png(with);
  Result<RgbaImage> b = read_png(without);
  ASSERT_TRUE(a.ok() && b.ok());
  // The overlay window sits in the top-left corner: that region changes, the far corner not.
  std::size_t changed_top_left = 0;
  for (int y = 10; y < 60; ++y) {
    for (int x = 10; x < 200; ++x) {
      const std::size_t p = static_cast<std::size_t>(y * 480 + x) * 4;
      changed_top_left += a.value().pixels[p] != b.value().pixels[p] ? 1u : 0u;
    }
  }
  EXPECT_GT(changed_top_left, 1000u);
  const std::size_t far_corner = static_cast<std::size_t>(310 * 480 + 470) * 4;
  EXPECT_EQ(a.value().pixels[far_corner], b.value().pixels[far_corner]);
#else
  EXPECT_EQ(on.exit_code, 1);
  EXPECT_NE(on.output.find("built without Dear ImGui"), std::string::npos) << on.output;
#endif
}

TEST_F(ViewerProgram, SkinningDqsDrawsEveryEntityWithDualQuaternions) {
  const std::string png = std::string(POSECAST_RENDER_OUTPUT_DIR) + "/viewer_dqs.png";
  const ProgramRun run = run_viewer("--model gen-rig:24 --count 3 --frames 3 --stats --skinning dqs "
                                    "--width 320 --height 240 --screenshot '" + png + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("skinning (--skinning dqs): 3 entities with dual quaternions, 0 with "
                            "linear blend, 0 of them fallen back"),
            std::string::npos)
      << run.output;
  Result<RgbaImage> image = read_png(png);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_GT(foreground_pixels(image.value()), 320u * 240u / 50u);
  const ProgramRun lbs = run_viewer("--model gen-rig:24 --frames 1 --stats --width 64 --height 64");
  ASSERT_EQ(lbs.exit_code, 0) << lbs.output;
  EXPECT_NE(lbs.output.find("skinning (--skinning lbs): 0 entities with dual quaternions, 1 with"),
            std::string::npos)
      << lbs.output;
}

TEST(ViewerProgramErrors, BadSkinningModeIsOneLineAndExitCode2) {
  const ProgramRun run = run_viewer("--model gen-rig:24 --skinning cheap");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.output,
            "posecast-viewer: --skinning: expected lbs or dqs, got 'cheap'\nRun with --help for more information.\n");
}

// The shared command-line style: one line naming program, flag and reason, the pointer to
// --help, exit code 2; nothing opens a window first.
TEST(ViewerProgramErrors, BadArgumentIsOneLineAndExitCode2) {
  const ProgramRun run = run_viewer("--model gen-rig:24 --count lots");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.output, "posecast-viewer: --count: lots is not in 1..100000\nRun with --help for more information.\n");
  const ProgramRun range = run_viewer("--model gen-rig:24 --width 8");
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_EQ(range.output, "posecast-viewer: --width: 8 is not in 16..16384\nRun with --help for more information.\n");
  const ProgramRun unknown = run_viewer("--model gen-rig:24 --bogus");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.output,
            "posecast-viewer: The following argument was not expected: --bogus\nRun with --help for more information.\n");
}

// Every documented flag of a local run (the --connect ones: viewer_connect_test.sh and
// viewer_session_keys_test.sh).
TEST_F(ViewerProgram, EveryLocalFlagWorks) {
  const std::string png = std::string(POSECAST_RENDER_OUTPUT_DIR) + "/viewer_every_flag.png";
  std::filesystem::remove(png);
  std::string args = "--model gen-rig:24 --clip run --count 2 --frames 3 --screenshot '" + png +
                     "' --stats --width 96 --height 64 --shader-dir '" + POSECAST_SOURCE_DIR + "/shaders' --skinning lbs";
#ifdef POSECAST_VIEWER_HAS_IMGUI
  args += " --overlay";
#endif
  const ProgramRun run = run_viewer(args);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("median"), std::string::npos) << run.output;
  Result<RgbaImage> image = read_png(png);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image.value().width, 96);
  EXPECT_EQ(image.value().height, 64);
}

TEST(ViewerProgramErrors, MissingFileIsOneLineAndExitCode1) {
  const ProgramRun run = run_viewer("--model /nonexistent/model.glb --frames 1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(lines(run.output), 1u) << run.output;
  EXPECT_EQ(run.output.rfind("posecast-viewer: ", 0), 0u) << run.output;
  EXPECT_NE(run.output.find("/nonexistent/model.glb"), std::string::npos) << run.output;
}

TEST(ViewerProgramErrors, BadGeneratedRigSourceIsOneLine) {
  const ProgramRun run = run_viewer("--model gen-rig:1 --frames 1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(lines(run.output), 1u) << run.output;
  EXPECT_NE(run.output.find("gen-rig:N"), std::string::npos) << run.output;
}

TEST(ViewerProgramErrors, UnknownClipListsTheClips) {
  const ProgramRun run = run_viewer("--model gen-rig:24 --clip dance --frames 1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(lines(run.output), 2u) << run.output;  // the reason, then the pointer to --help
  EXPECT_EQ(run.output.rfind("posecast-viewer: --clip: ", 0), 0u) << run.output;
  EXPECT_NE(run.output.find("no clip 'dance'"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("walk"), std::string::npos) << run.output;
}

TEST(ViewerProgramErrors, WindowWithoutDisplaySaysToUseXvfb) {
  const ProgramRun run = run_viewer("--model gen-rig:24", "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.output, "posecast-viewer: no display: run under xvfb-run, see docs/viewer.md\n");
}

// Whether this process can make an OpenGL context (GlTest's shared one, made once): when it
// cannot, neither can the viewer, which then stops at the no-display line.
bool gl_context_available(std::string* why) {
  struct Probe : GlTest {
    static bool available(std::string* reason) {
      SetUpTestSuite();
      *reason = context_error_;
      return context_ != nullptr;
    }
  };
  return Probe::available(why);
}

TEST(ViewerProgramErrors, UnwritableScreenshotIsOneLine) {
  std::string why;
  if (!gl_context_available(&why)) GTEST_SKIP() << "no OpenGL context: " << why;
  const ProgramRun run = run_viewer(
      "--model gen-rig:24 --frames 1 --width 64 --height 64 --screenshot /nonexistent/dir/x.png");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(lines(run.output), 1u) << run.output;
  EXPECT_EQ(run.output.rfind("posecast-viewer: ", 0), 0u) << run.output;
  // The line is the screenshot's error, not an earlier failure.
  EXPECT_NE(run.output.find("/nonexistent/dir/x.png"), std::string::npos) << run.output;
}

TEST(ViewerProgramErrors, HelpPrintsUsageAndExits0) {
  const ProgramRun run = run_viewer("--help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.output.find("Usage: posecast-viewer [OPTIONS]"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--interpolate-poses"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace posecast::render::testing
