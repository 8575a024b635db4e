// posecast-viewer's command line and frame statistics (no GL).

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "frame_stats.h"
#include "viewer_options.h"

namespace posecast::viewer {
namespace {

Result<ViewerOptions> parse(std::initializer_list<const char*> args) {
  return parse_viewer_options(std::vector<std::string>(args.begin(), args.end()));
}

TEST(ViewerOptionsTest, ParsesEveryOption) {
  Result<ViewerOptions> o = parse({"--model", "gen-rig:24", "--clip", "run", "--count", "100",
                                   "--frames", "200", "--screenshot", "x.png", "--stats",
                                   "--width", "320", "--height", "240", "--shader-dir", "s", "--overlay"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->model, "gen-rig:24");
  EXPECT_EQ(o->clip, "run");
  EXPECT_EQ(o->count, 100u);
  EXPECT_EQ(o->frames, 200u);
  EXPECT_EQ(o->screenshot, "x.png");
  EXPECT_TRUE(o->stats);
  EXPECT_EQ(o->width, 320);
  EXPECT_EQ(o->height, 240);
  EXPECT_EQ(o->shader_dir, "s");
  EXPECT_TRUE(o->overlay);
  EXPECT_TRUE(o->headless());
}

TEST(ViewerOptionsTest, ScreenshotAloneRendersOneFrame) {
  Result<ViewerOptions> o = parse({"--model", "a.glb", "--screenshot", "x.png"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->frames, 1u);
  EXPECT_TRUE(o->headless());
  EXPECT_FALSE(parse({"--model", "a.glb"})->headless());
}

TEST(ViewerOptionsTest, ErrorsNameTheOption) {
  EXPECT_EQ(parse({}).error().message, "--model FILE|gen-rig:N or --connect HOST:PORT is required");
  EXPECT_EQ(parse({"--model", "a", "--count", "0"}).error().message, "--count: 0 is not in 1..100000");
  EXPECT_EQ(parse({"--model", "a", "--width", "12x"}).error().message, "--width: 12x is not in 16..16384");
  EXPECT_EQ(parse({"--model", "a", "--frames", "0"}).error().message, "--frames: 0 is not in 1..10000000");
  EXPECT_EQ(parse({"--model"}).error().message.rfind("--model: ", 0), 0u);
  EXPECT_EQ(parse({"--model", "a", "--bogus"}).error().message, "The following argument was not expected: --bogus");
  EXPECT_EQ(parse({"stray"}).error().message, "The following argument was not expected: stray");
}

TEST(ViewerOptionsTest, ConnectExcludesModelAndTakesModelsDirAndScriptedKeys) {
  Result<ViewerOptions> o = parse({"--connect", "127.0.0.1:7777", "--models-dir", "assets", "--frames", "30",
                                   "--act", "20:walk,5:run,20:replay-toggle"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->connect, "127.0.0.1:7777");
  EXPECT_EQ(o->models_dir, "assets");
  ASSERT_EQ(o->actions.size(), 3u);  // sorted by frame, stable within a frame
  EXPECT_EQ(o->actions[0].frame, 5u);
  EXPECT_EQ(o->actions[0].action, ViewerAction::kRun);
  EXPECT_EQ(o->actions[1].action, ViewerAction::kWalk);
  EXPECT_EQ(o->actions[2].action, ViewerAction::kReplayToggle);
  EXPECT_EQ(parse({"--connect", "h:1", "--model", "gen-rig:4"}).error().message,
            "--model and --connect exclude each other: give exactly one");
  EXPECT_EQ(parse({"--model", "gen-rig:4", "--models-dir", "x"}).error().message, "--models-dir: only with --connect");
  EXPECT_FALSE(o->interpolate_poses);  // render-time recipes by default
  Result<ViewerOptions> interpolating = parse({"--connect", "h:1", "--interpolate-poses"});
  ASSERT_TRUE(interpolating.ok()) << interpolating.error().message;
  EXPECT_TRUE(interpolating->interpolate_poses);
  EXPECT_EQ(parse({"--model", "gen-rig:4", "--interpolate-poses"}).error().message,
            "--interpolate-poses: only with --connect");
  EXPECT_EQ(parse({"--connect", "h:1", "--act", "5:jump"}).error().message.rfind("--act: unknown action 'jump'", 0), 0u);
  EXPECT_EQ(parse({"--connect", "h:1", "--act", "x:run"}).error().message, "--act: 'x' is not a frame number");
  EXPECT_EQ(parse({"--connect", "h:1", "--act", "run"}).error().message, "--act: 'run' is not FRAME:ACTION");
}

TEST(ViewerOptionsTest, EveryActionNameRoundTrips) {
  for (int a = 0; a <= static_cast<int>(ViewerAction::kReplayFaster); ++a) {
    const auto action = static_cast<ViewerAction>(a);
    EXPECT_EQ(parse_viewer_action(to_string(action)), action) << to_string(action);
  }
  EXPECT_FALSE(parse_viewer_action("unknown").has_value());
}

TEST(ViewerOptionsTest, HelpNeedsNoModel) {
  Result<ViewerOptions> o = parse({"--help"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
}

TEST(ViewerOptionsTest, SkinningIsLbsUnlessDqsIsAsked) {
  EXPECT_EQ(parse({"--model", "gen-rig:4"})->skinning, render::SkinningMode::kLinearBlend);
  EXPECT_EQ(parse({"--model", "gen-rig:4", "--skinning", "dqs"})->skinning,
            render::SkinningMode::kDualQuaternion);
  EXPECT_EQ(parse({"--connect", "h:1", "--skinning", "lbs"})->skinning,
            render::SkinningMode::kLinearBlend);
  EXPECT_EQ(parse({"--model", "gen-rig:4", "--skinning", "DQS"}).error().message,
            "--skinning: expected lbs or dqs, got 'DQS'");
  EXPECT_EQ(parse({"--model", "gen-rig:4", "--skinning"}).error().message,
            "--skinning: 1 required lbs|dqs missing");  // CLI11's wording, as for every option
}

TEST(FrameStatsTest, MedianAndNearestRankP99) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i * 1000.0);  // 1..100 ms, unsorted
  const FrameSummary s = summarise(samples);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.median_us, 50500.0);
  EXPECT_DOUBLE_EQ(s.p99_us, 99000.0);
  EXPECT_DOUBLE_EQ(s.min_us, 1000.0);
  EXPECT_DOUBLE_EQ(s.max_us, 100000.0);
  EXPECT_DOUBLE_EQ(s.mean_us, 50500.0);
  EXPECT_EQ(summarise({}).count, 0u);
}

}  // namespace
}  // namespace posecast::viewer
