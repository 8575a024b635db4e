// Render-time recipes: the derivation (interpolation, loop wrap, reversed clips, extrapolation,
// weights, clip-set changes) and PoseTrack evaluating them (the server's pose at server ticks
// bit for bit, the extrapolation bound, the fallbacks to pose interpolation).

#include "posecast/sim/recipe_at_time.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "netclient_support.h"
#include "posecast/client/pose_blend.h"
#include "posecast/client/pose_track.h"
#include "posecast/protocol/clip_dictionary.h"

namespace posecast::client {
namespace {

using protocol::PoseRecipe;
using sim::kMaxRecipeSpanUs;
using sim::max_clip_tracks;
using sim::recipe_at_time;
using sim::RecipeTiming;

PoseRecipe one_clip(uint16_t clip, int64_t time_us, float weight = 1.0f) {
  PoseRecipe r;
  r.count = 1;
  r.inputs[0] = PoseRecipe::Input{clip, time_us, weight};
  return r;
}

PoseRecipe two_clips(int64_t t0, float w0, int64_t t1, float w1) {
  PoseRecipe r;
  r.count = 2;
  r.inputs[0] = PoseRecipe::Input{0, t0, w0};
  r.inputs[1] = PoseRecipe::Input{1, t1, w1};
  return r;
}

const std::vector<int64_t> kDurations{1'000'000, 600'000, 0};

int64_t time_at(const PoseRecipe& a, int64_t a_us, const PoseRecipe& b, int64_t b_us, int64_t r_us) {
  PoseRecipe out;
  EXPECT_EQ(recipe_at_time(a, a_us, b, b_us, r_us, kDurations, out), RecipeTiming::kOk);
  return out.inputs[0].time_us;
}

TEST(RecipeAtTimeTest, ClipTimeMovesLinearlyBetweenTheNeighbours) {
  const PoseRecipe a = one_clip(0, 100'000), b = one_clip(0, 150'000);
  EXPECT_EQ(time_at(a, 1'000'000, b, 1'050'000, 1'025'000), 125'000);
  EXPECT_EQ(time_at(a, 1'000'000, b, 1'050'000, 1'016'666), 116'666);
  // At half speed (25 ms of clip per 50 ms), rounded down like the server's phase.
  EXPECT_EQ(time_at(a, 1'000'000, one_clip(0, 125'000), 1'050'000, 1'016'667), 108'333);
}

TEST(RecipeAtTimeTest, TheNeighboursThemselvesAreReturnedExactly) {
  const PoseRecipe a = two_clips(10, 0.3f, 20, 0.7f), b = two_clips(50'010, 0.1f, 50'020, 0.9f);
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 0, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out, a);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 50'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out, b);
}

TEST(RecipeAtTimeTest, ALoopWrapBetweenTheNeighboursIsASmallStepForwards) {
  // 980 ms -> 30 ms of a 1 s loop over 50 ms: the clip crossed its end after 20 ms.
  const PoseRecipe a = one_clip(0, 980'000), b = one_clip(0, 30'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 10'000), 990'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 19'999), 999'999);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 20'000), 0);  // the loop's end shows as its start
  EXPECT_EQ(time_at(a, 0, b, 50'000, 45'000), 25'000);
}

TEST(RecipeAtTimeTest, AReversedClipStepsBackwardsAcrossItsStart) {
  const PoseRecipe a = one_clip(0, 30'000), b = one_clip(0, 980'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 10'000), 20'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 40'000), 990'000);
}

TEST(RecipeAtTimeTest, ExtrapolationContinuesTheNewestTwoAndWraps) {
  const PoseRecipe a = one_clip(0, 900'000), b = one_clip(0, 950'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 100'000), 1'000'000 % 1'000'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 130'000), 30'000);
  // A gap: the older neighbour three snapshots back.
  EXPECT_EQ(time_at(one_clip(0, 800'000), 0, b, 150'000, 200'000), 0);
}

TEST(RecipeAtTimeTest, BeforeTheOlderNeighbourTheLineContinuesBackwards) {
  EXPECT_EQ(time_at(one_clip(0, 10'000), 0, one_clip(0, 60'000), 50'000, -20'000), 990'000);
  EXPECT_EQ(time_at(one_clip(0, 10'000), 0, one_clip(0, 60'000), 50'000, -1), 9'999);
}

TEST(RecipeAtTimeTest, AClipHeldAtItsEndStaysThere) {
  // A clamped clip at its last key (time == duration) is not wrapped to its start.
  const PoseRecipe a = one_clip(1, 600'000), b = one_clip(1, 600'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 25'000), 600'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 90'000), 600'000);
}

TEST(RecipeAtTimeTest, AZeroLengthClipKeepsTimeZero) {
  EXPECT_EQ(time_at(one_clip(2, 0), 0, one_clip(2, 0), 50'000, 70'000), 0);
}

TEST(RecipeAtTimeTest, WeightsLerpStayBitEqualWhenUnchangedAndClampAtZero) {
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(two_clips(0, 0.25f, 0, 0.75f), 0, two_clips(50'000, 0.5f, 30'000, 0.75f), 50'000,
                           25'000, kDurations, out),
            RecipeTiming::kOk);
  EXPECT_FLOAT_EQ(out.inputs[0].weight, 0.375f);
  EXPECT_EQ(out.inputs[1].weight, 0.75f);  // unchanged: the same bits
  EXPECT_EQ(out.inputs[1].time_us, 15'000);
  // Extrapolated past zero: clamped; the other input still carries weight.
  ASSERT_EQ(recipe_at_time(two_clips(0, 0.6f, 0, 0.5f), 0, two_clips(50'000, 0.2f, 30'000, 0.5f), 50'000,
                           150'000, kDurations, out),
            RecipeTiming::kOk);
  EXPECT_EQ(out.inputs[0].weight, 0.0f);
  EXPECT_EQ(out.inputs[1].weight, 0.5f);
  // Every weight extrapolated to zero: nothing to show, no recipe.
  EXPECT_EQ(recipe_at_time(one_clip(0, 0, 0.5f), 0, one_clip(0, 50'000, 0.25f), 50'000, 200'000, kDurations, out),
            RecipeTiming::kInvalid);
}

TEST(RecipeAtTimeTest, AChangedClipSetOrAMissingRecipeGivesNoRecipe) {
  PoseRecipe out = one_clip(0, 123);
  const PoseRecipe before = out;
  EXPECT_EQ(recipe_at_time(one_clip(0, 0), 0, one_clip(1, 0), 50'000, 25'000, kDurations, out),
            RecipeTiming::kClipSetChanged);
  EXPECT_EQ(recipe_at_time(one_clip(0, 0), 0, two_clips(0, 1, 0, 1), 50'000, 25'000, kDurations, out),
            RecipeTiming::kClipSetChanged);
  PoseRecipe swapped = two_clips(0, 1, 0, 1);
  std::swap(swapped.inputs[0], swapped.inputs[1]);
  EXPECT_EQ(recipe_at_time(two_clips(0, 1, 0, 1), 0, swapped, 50'000, 25'000, kDurations, out),
            RecipeTiming::kClipSetChanged);
  EXPECT_EQ(recipe_at_time(PoseRecipe{}, 0, one_clip(0, 0), 50'000, 25'000, kDurations, out),
            RecipeTiming::kMissing);
  EXPECT_EQ(out, before);  // untouched unless kOk
}

TEST(RecipeAtTimeTest, BadInputIsRefusedNotTrusted) {
  PoseRecipe out;
  EXPECT_EQ(recipe_at_time(one_clip(7, 0), 0, one_clip(7, 0), 50'000, 25'000, kDurations, out),
            RecipeTiming::kInvalid);  // no such clip
  EXPECT_EQ(recipe_at_time(one_clip(0, 0), 50'000, one_clip(0, 0), 50'000, 50'000, kDurations, out),
            RecipeTiming::kInvalid);  // neighbours at the same time
  EXPECT_EQ(recipe_at_time(one_clip(0, 0), 0, one_clip(0, 50'000), 50'000, -kMaxRecipeSpanUs - 1, kDurations, out),
            RecipeTiming::kInvalid);
  EXPECT_EQ(recipe_at_time(one_clip(0, 0), 0, one_clip(0, 50'000), 50'000, kMaxRecipeSpanUs + 1, kDurations, out),
            RecipeTiming::kInvalid);
  EXPECT_EQ(recipe_at_time(one_clip(0, -5), 0, one_clip(0, 50'000), 50'000, 10, kDurations, out),
            RecipeTiming::kInvalid);
}

// ---- PoseTrack with recipes, on the generated rig's "run" clip.

class RecipeTrackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(rig.model, nullptr);
    track.reset(rig.skeleton().node_count(), rig.skeleton().joint_count(), true, max_clip_tracks(rig.rig().clips));
    recipes.clips = rig.rig().clips;
    recipes.clip_durations_us = rig.format().clip_durations_us;
    recipes.assets_validated = true;
  }
  // A decoded record of `tick` carrying the recipe the server would attach.
  PoseSample sample(uint32_t tick, int clip = 2) {
    testing::PoseSource& s = clip == 2 ? run : walk;
    PoseSample out;
    out.quantized = s.quantized_with_recipe(tick);
    out.locals.resize(rig.skeleton().node_count());
    protocol::dequantize_pose(rig.format(), out.quantized, out.locals);
    out.skeleton = &rig.skeleton();
    out.recipe_verified = true;  // the snapshot buffer's check (its own test)
    return out;
  }
  static SampleRef ref(const PoseSample& s, uint32_t tick, bool own = true) {
    return SampleRef{&s, tick, static_cast<int64_t>(tick) * 1'000'000 / 60, own};
  }
  static int64_t at(uint32_t tick) { return static_cast<int64_t>(tick) * 1'000'000 / 60; }
  bool shows_exactly(const std::vector<Transform>& expected) const {
    return track.locals().size() == expected.size() &&
           std::memcmp(track.locals().data(), expected.data(), expected.size() * sizeof(Transform)) == 0;
  }

  testing::TestRig rig = testing::load_test_rig();
  testing::PoseSource run{rig, 2};
  testing::PoseSource walk{rig, 1};
  PoseTrack track;
  PresentSettings settings;
  RecipeSource recipes;
};

TEST_F(RecipeTrackTest, BetweenSnapshotsTheServersPoseAtEachTickIsShownBitForBit) {
  const PoseSample a = sample(3), b = sample(6);
  for (uint32_t tick : {4u, 5u}) {
    ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 6), {}}, at(tick), settings, recipes));
    EXPECT_EQ(track.mode(), PresentMode::kInterpolate);
    EXPECT_TRUE(track.recipe());
    EXPECT_TRUE(shows_exactly(run.exact(tick))) << "tick " << tick;  // unquantised: the server's own pose
  }
  EXPECT_FALSE(track.correcting());
}

TEST_F(RecipeTrackTest, AcrossTheClipsLoopEndTheServersPoseIsShownBitForBit) {
  const int64_t duration = rig.rig().clips[2].duration_us;
  ASSERT_GT(duration, 100'000);
  // Two snapshots three ticks apart with the loop's end strictly between them.
  uint32_t t0 = 0;
  while (t0 < 1000 && !(run.clip_time(t0 + 3) < run.clip_time(t0) && run.clip_time(t0 + 3) > 0)) ++t0;
  const uint32_t t1 = t0 + 3;
  ASSERT_LT(run.clip_time(t1), run.clip_time(t0));  // it wraps between them
  const PoseSample a = sample(t0), b = sample(t1);
  for (uint32_t tick = t0 + 1; tick < t1; ++tick) {
    ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, t0), ref(b, t1), {}}, at(tick), settings, recipes));
    EXPECT_TRUE(track.recipe());
    EXPECT_TRUE(shows_exactly(run.exact(tick))) << "tick " << tick;
  }
}

TEST_F(RecipeTrackTest, ExtrapolationFollowsTheClipsUntilItsBoundThenFreezes) {
  const PoseSample a = sample(3), b = sample(6);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(b, 6), {}, ref(a, 3)}, at(9), settings, recipes));
  EXPECT_EQ(track.mode(), PresentMode::kExtrapolate);
  EXPECT_TRUE(track.recipe());
  EXPECT_TRUE(shows_exactly(run.exact(9)));
  // 100 ms past tick 6 (tick 12) is as far as it goes.
  ASSERT_EQ(settings.max_extrapolation_us, 100'000);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(b, 6), {}, ref(a, 3)}, at(6) + 400'000, settings, recipes));
  EXPECT_EQ(track.mode(), PresentMode::kStalled);
  EXPECT_TRUE(track.recipe());
  EXPECT_EQ(track.extrapolated_us(), 100'000);
  EXPECT_TRUE(shows_exactly(run.exact(12)));
}

TEST_F(RecipeTrackTest, AChangedClipSetACarriedPoseOrTheSettingFallBackToPoseInterpolation) {
  const PoseSample a = sample(3), b = sample(6), other = sample(6, 1);
  PoseSample unverified = sample(6);
  unverified.recipe_verified = false;
  std::vector<Transform> expected(rig.skeleton().node_count());
  const int64_t mid = (at(3) + at(6)) / 2;
  const float t = static_cast<float>(static_cast<double>(mid - at(3)) / static_cast<double>(at(6) - at(3)));
  struct Case {
    const char* what;
    SampleWindow window;
    bool evaluate;
  };
  const Case cases[] = {
      {"clip set changed", SampleWindow{ref(a, 3), ref(other, 6), {}}, true},
      {"carried pose", SampleWindow{ref(a, 3), ref(b, 6, false), {}}, true},
      {"recipe not reproducing its pose", SampleWindow{ref(a, 3), ref(unverified, 6), {}}, true},
      {"setting off", SampleWindow{ref(a, 3), ref(b, 6), {}}, false},
  };
  for (const Case& c : cases) {
    PoseTrack fresh;
    fresh.reset(rig.skeleton().node_count(), rig.skeleton().joint_count(), true, max_clip_tracks(rig.rig().clips));
    PresentSettings s = settings;
    s.evaluate_recipes = c.evaluate;
    ASSERT_TRUE(fresh.present(rig.skeleton(), c.window, mid, s, recipes)) << c.what;
    EXPECT_EQ(fresh.mode(), PresentMode::kInterpolate) << c.what;
    EXPECT_FALSE(fresh.recipe()) << c.what;
    interpolate_locals(c.window.before.sample->locals, c.window.after.sample->locals, t, s.rotation, expected);
    EXPECT_EQ(std::memcmp(fresh.locals().data(), expected.data(), expected.size() * sizeof(Transform)), 0) << c.what;
  }
}

// A plain record (run) followed by a crossfade record (run -> walk over 250 ms, started at
// tick 5): at every tick between them the track shows the server's pose bit for bit — the run
// alone before the fade, the fade's first tick (alpha 0: the run exactly), then the crossfade —
// as the clip dictionary (the server's evaluation, server_tests CrossfadeRecipes) gives it.
TEST_F(RecipeTrackTest, FromAPlainRecordIntoACrossfadeTheServersPoseIsShownBitForBit) {
  const PoseSample a = sample(3);
  const auto fade_at = [&](uint32_t tick) {
    protocol::PoseRecipe r;
    r.count = 2;
    r.source_count = 1;
    r.inputs[0] = {2, run.clip_time(tick), 1.0f};
    r.inputs[1] = {1, at(tick) - at(5), 1.0f};  // walk from its start at 1x
    r.fade_elapsed_us = at(tick) - at(5);
    r.fade_duration_us = 250'000;
    r.steady_us = r.fade_elapsed_us;
    return r;
  };
  protocol::ClipDictionary dictionary(rig.skeleton(), rig.rig().clips, rig.format());
  PoseSample b;
  b.quantized.recipe = fade_at(8);
  ASSERT_TRUE(dictionary.predict(b.quantized.recipe, b.quantized));
  b.quantized.recipe = fade_at(8);
  b.locals.resize(rig.skeleton().node_count());
  protocol::dequantize_pose(rig.format(), b.quantized, b.locals);
  b.skeleton = &rig.skeleton();
  b.recipe_verified = true;
  std::vector<Transform> expected(rig.skeleton().node_count());
  for (uint32_t tick = 4; tick < 8; ++tick) {
    ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 8), {}}, at(tick), settings, recipes));
    EXPECT_TRUE(track.recipe()) << "tick " << tick;
    EXPECT_EQ(track.recipe_miss(), RecipeMiss::kNone);
    if (tick < 5) {
      EXPECT_TRUE(shows_exactly(run.exact(tick))) << "tick " << tick;
    } else {
      ASSERT_TRUE(dictionary.evaluate(fade_at(tick), expected));
      EXPECT_TRUE(shows_exactly(expected)) << "tick " << tick;
      if (tick == 5) {
        EXPECT_TRUE(shows_exactly(run.exact(5))) << "alpha 0 shows the source exactly";
      }
    }
  }
  EXPECT_FALSE(track.correcting());
  // Without the command's time (steady_us saturated) the pair is not derivable.
  b.quantized.recipe.steady_us = protocol::kMaxRecipeTimeUs;
  PoseTrack fresh;
  fresh.reset(rig.skeleton().node_count(), rig.skeleton().joint_count(), true, max_clip_tracks(rig.rig().clips));
  ASSERT_TRUE(fresh.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 8), {}}, at(6), settings, recipes));
  EXPECT_FALSE(fresh.recipe());
  EXPECT_EQ(fresh.recipe_miss(), RecipeMiss::kNotDerivable);
}

TEST_F(RecipeTrackTest, SwitchingBetweenRecipeAndPoseInterpolationFadesInsteadOfJumping) {
  const PoseSample a = sample(3), b = sample(6), c = sample(9, 1);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 6), {}}, at(5), settings, recipes));
  ASSERT_TRUE(track.recipe());
  // The next pair changes clips: pose interpolation, entered through a correction that starts
  // where the last frame was.
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(b, 6), ref(c, 9), {}}, at(6) + 1, settings, recipes));
  EXPECT_FALSE(track.recipe());
  EXPECT_TRUE(track.correcting());
  EXPECT_EQ(track.corrections(), 1u);
}

TEST_F(RecipeTrackTest, AnExtrapolationEndingOnTheMissingSnapshotFadesOnlyTheJumpNotTheMotion) {
  const PoseSample a = sample(3), b = sample(6), c = sample(9);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(b, 6), {}, ref(a, 3)}, at(7), settings, recipes));
  ASSERT_EQ(track.mode(), PresentMode::kExtrapolate);
  // Tick 9's snapshot arrives late: the source changes (a correction), but the extrapolated
  // recipe was the server's state, so there is nothing to fade: the frame shows tick 8's pose.
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(b, 6), ref(c, 9), ref(a, 3)}, at(8), settings, recipes));
  EXPECT_EQ(track.mode(), PresentMode::kInterpolate);
  EXPECT_TRUE(track.recipe());
  EXPECT_EQ(track.corrections(), 1u);
  const std::vector<Transform>& truth = run.exact(8);
  float worst = 0.0f;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    worst = std::max(worst, glm::length(track.locals()[i].translation - truth[i].translation));
    worst = std::max(worst, 1.0f - std::fabs(glm::dot(track.locals()[i].rotation, truth[i].rotation)));
  }
  EXPECT_LT(worst, 1e-6f);
}

TEST_F(RecipeTrackTest, AFrameWithTheLastFramesSourceKeepsItsPaletteAndMatchesAFreshEvaluation) {
  const PoseSample a = sample(3), b = sample(6);
  const SampleWindow between{ref(a, 3), ref(b, 6), {}};
  const SampleWindow past{ref(b, 6), {}, ref(a, 3)};
  const auto fresh_palette = [&](const SampleWindow& w, int64_t r) {
    PoseTrack fresh;
    fresh.reset(rig.skeleton().node_count(), rig.skeleton().joint_count(), true, max_clip_tracks(rig.rig().clips));
    EXPECT_TRUE(fresh.present(rig.skeleton(), w, r, settings, recipes));
    return std::vector<glm::mat4>(fresh.palette().begin(), fresh.palette().end());
  };
  const auto same_palette = [&](const std::vector<glm::mat4>& expected) {
    return track.palette().size() == expected.size() &&
           std::memcmp(track.palette().data(), expected.data(), expected.size() * sizeof(glm::mat4)) == 0;
  };
  // The same render time twice (a paused playout clock): the second frame reuses.
  ASSERT_TRUE(track.present(rig.skeleton(), between, at(4) + 1234, settings, recipes));
  EXPECT_EQ(track.reused_frames(), 0u);
  ASSERT_TRUE(track.present(rig.skeleton(), between, at(4) + 1234, settings, recipes));
  EXPECT_EQ(track.reused_frames(), 1u);
  EXPECT_TRUE(track.recipe());
  EXPECT_EQ(track.recipe_frames(), 2u);
  EXPECT_TRUE(same_palette(fresh_palette(between, at(4) + 1234)));
  // A new render time is a new source.
  ASSERT_TRUE(track.present(rig.skeleton(), between, at(5), settings, recipes));
  EXPECT_EQ(track.reused_frames(), 1u);
  EXPECT_TRUE(same_palette(fresh_palette(between, at(5))));
  EXPECT_TRUE(shows_exactly(run.exact(5)));
  // Extrapolation frozen at its bound: every frame past it has the same recipe.
  ASSERT_TRUE(track.present(rig.skeleton(), past, at(6) + 300'000, settings, recipes));
  ASSERT_EQ(track.mode(), PresentMode::kStalled);
  const uint64_t reused = track.reused_frames();
  ASSERT_TRUE(track.present(rig.skeleton(), past, at(6) + 400'000, settings, recipes));
  EXPECT_EQ(track.mode(), PresentMode::kStalled);
  EXPECT_EQ(track.extrapolated_us(), 100'000);
  EXPECT_EQ(track.reused_frames(), reused + 1);
  EXPECT_TRUE(shows_exactly(run.exact(12)));
  EXPECT_TRUE(same_palette(fresh_palette(past, at(6) + 400'000)));
}

TEST_F(RecipeTrackTest, FramesFadingACorrectionAreNeverReused) {
  const PoseSample a = sample(3), b = sample(6), c = sample(9, 1);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 6), {}}, at(5), settings, recipes));
  // A clip change: pose interpolation entered through a fade.
  const SampleWindow changed{ref(b, 6), ref(c, 9), {}};
  ASSERT_TRUE(track.present(rig.skeleton(), changed, at(7), settings, recipes));
  ASSERT_TRUE(track.correcting());
  std::vector<glm::mat4> first(track.palette().begin(), track.palette().end());
  // The same source again while the fade runs: the fade weight depends on the render time, and
  // the frame is recomputed (here the same time: the same weight, so the same palette).
  ASSERT_TRUE(track.present(rig.skeleton(), changed, at(7), settings, recipes));
  EXPECT_EQ(track.reused_frames(), 0u);
  EXPECT_EQ(std::memcmp(track.palette().data(), first.data(), first.size() * sizeof(glm::mat4)), 0);
}

TEST_F(RecipeTrackTest, TracksSharingOneScratchGiveTheBitsOfTracksWithTheirOwn) {
  const PoseSample a = sample(3), b = sample(6), c = sample(9);
  const PoseSample wa = sample(3, 1), wb = sample(6, 1), wc = sample(9, 1);
  const std::size_t nodes = rig.skeleton().node_count(), joints = rig.skeleton().joint_count();
  const std::size_t tracks = max_clip_tracks(rig.rig().clips);
  PoseTrack own_run, own_walk, shared_run, shared_walk;
  own_run.reset(nodes, joints, true, tracks);
  own_walk.reset(nodes, joints, true, tracks);
  shared_run.reset(nodes, joints, true, tracks, /*external_scratch=*/true);
  shared_walk.reset(nodes, joints, true, tracks, /*external_scratch=*/true);
  PresentScratch scratch;
  // Without a scratch a track reset for an external one refuses (nothing to work in).
  EXPECT_FALSE(shared_run.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 6), {}}, at(4), settings, recipes));
  scratch.reserve(nodes);
  // Interpolation, an exact frame, a fade (clip change to walk and back), extrapolation.
  struct Frame {
    SampleWindow run_window, walk_window;
    int64_t r;
  };
  const Frame frames[] = {
      {{ref(a, 3), ref(b, 6), {}}, {ref(wa, 3), ref(wb, 6), {}}, at(4) + 77},
      {{ref(b, 6), ref(c, 9), ref(a, 3)}, {ref(wb, 6), ref(wc, 9), ref(wa, 3)}, at(6)},
      {{ref(b, 6), ref(wc, 9), {}}, {ref(wb, 6), ref(c, 9), {}}, at(7)},
      {{ref(b, 6), ref(c, 9), {}}, {ref(wb, 6), ref(wc, 9), {}}, at(8)},
      {{ref(c, 9), {}, ref(b, 6)}, {ref(wc, 9), {}, ref(wb, 6)}, at(10)},
  };
  for (const Frame& f : frames) {
    ASSERT_TRUE(own_run.present(rig.skeleton(), f.run_window, f.r, settings, recipes));
    ASSERT_TRUE(own_walk.present(rig.skeleton(), f.walk_window, f.r, settings, recipes));
    ASSERT_TRUE(shared_run.present(rig.skeleton(), f.run_window, f.r, settings, recipes, &scratch));
    ASSERT_TRUE(shared_walk.present(rig.skeleton(), f.walk_window, f.r, settings, recipes, &scratch));
    for (const auto& [own, shared] : {std::pair{&own_run, &shared_run}, std::pair{&own_walk, &shared_walk}}) {
      EXPECT_EQ(own->mode(), shared->mode());
      EXPECT_EQ(own->correcting(), shared->correcting());
      EXPECT_EQ(std::memcmp(own->locals().data(), shared->locals().data(), nodes * sizeof(Transform)), 0);
      EXPECT_EQ(std::memcmp(own->palette().data(), shared->palette().data(), joints * sizeof(glm::mat4)), 0);
    }
  }
  EXPECT_GT(shared_run.corrections(), 0u);  // the fade was exercised
}

// ---- Across changes: crossfade recipes, commands (PoseRecipe::steady_us) ----

PoseRecipe fading(int64_t source_time, int64_t target_time, int64_t elapsed, int64_t duration,
                  int32_t target_speed = 1 << 16) {
  PoseRecipe r;
  r.count = 2;
  r.source_count = 1;
  r.inputs[0] = PoseRecipe::Input{0, source_time, 1.0f};
  r.inputs[1] = PoseRecipe::Input{1, target_time, 1.0f};
  r.speed = target_speed;
  r.fade_elapsed_us = elapsed;
  r.fade_duration_us = duration;
  r.steady_us = elapsed;
  return r;
}

TEST(RecipeAtTimeTest, APlainRecordFollowedByACrossfadeIsThePlainMotionUntilTheFadeStarts) {
  // The fade (to clip 1 at 0.5x) started at 30 ms, 20 ms before the newer record.
  const PoseRecipe a = one_clip(0, 100'000);
  const PoseRecipe b = fading(150'000, 10'000, 20'000, 250'000, 1 << 15);
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_FALSE(out.crossfade());
  EXPECT_EQ(out.inputs[0].time_us, 120'000);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 30'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.crossfade());  // the fade's first tick: alpha 0 (the source exactly)
  EXPECT_EQ(out.fade_elapsed_us, 0);
  EXPECT_EQ(out.inputs[0].time_us, 130'000);
  EXPECT_EQ(out.inputs[1].time_us, 0);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 40'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.crossfade());
  EXPECT_EQ(out.fade_elapsed_us, 10'000);
  EXPECT_EQ(out.fade_duration_us, 250'000);
  EXPECT_EQ(out.inputs[0].time_us, 140'000);
  EXPECT_EQ(out.inputs[1].time_us, 5'000);  // backwards from b at half speed
  EXPECT_EQ(out.speed, 1 << 15);
}

TEST(RecipeAtTimeTest, ACrossfadeFollowedByItsTargetEndsTheFadeWhereItsDurationRunsOut) {
  const PoseRecipe a = fading(500'000, 300'000, 380'000, 400'000);  // ends 20 ms after a
  PoseRecipe b = one_clip(1, 350'000);
  b.steady_us = 430'000;  // no command since the crossfade's
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 10'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.crossfade());
  EXPECT_EQ(out.fade_elapsed_us, 390'000);
  EXPECT_EQ(out.inputs[0].time_us, 510'000);
  EXPECT_EQ(out.inputs[1].time_us, 310'000);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_FALSE(out.crossfade());
  EXPECT_EQ(out.count, 1);
  EXPECT_EQ(out.inputs[0].clip, 1);
  EXPECT_EQ(out.inputs[0].time_us, 320'000);
  // A record that is not the fade's target, or a fade not over by b: no recipe between.
  EXPECT_EQ(recipe_at_time(a, 0, one_clip(0, 350'000), 50'000, 25'000, kDurations, out),
            RecipeTiming::kClipSetChanged);
  EXPECT_EQ(recipe_at_time(fading(500'000, 300'000, 100'000, 400'000), 0, b, 50'000, 25'000, kDurations, out),
            RecipeTiming::kClipSetChanged);
}

TEST(RecipeAtTimeTest, CrossfadeRecordsInterpolateTheirTimesAndTheFadeMovesWithWorldTime) {
  const PoseRecipe a = fading(500'000, 100'000, 100'000, 400'000);
  const PoseRecipe b = fading(550'000, 150'000, 150'000, 400'000);
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 16'667, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out.fade_elapsed_us, 116'667);
  EXPECT_EQ(out.inputs[0].time_us, 516'667);
  EXPECT_EQ(out.inputs[1].time_us, 116'667);
  // Extrapolated past the fade's end: the target alone.
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 310'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_FALSE(out.crossfade());
  EXPECT_EQ(out.inputs[0].clip, 1);
  EXPECT_EQ(out.inputs[0].time_us, 410'000 % 600'000);
}

TEST(RecipeAtTimeTest, ASpeedChangeBetweenTheRecordsBendsTheClipTimeWhereTheCommandApplied) {
  const PoseRecipe a = one_clip(0, 100'000);
  PoseRecipe b = one_clip(0, 180'000);  // 2x from 20 ms on: 120 ms there, +60 ms by b
  b.speed = 2 << 16;
  b.steady_us = 30'000;
  EXPECT_EQ(time_at(a, 0, b, 50'000, 10'000), 110'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 20'000), 120'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 40'000), 160'000);
  EXPECT_EQ(time_at(a, 0, b, 50'000, 70'000), 220'000);  // past b: b's speed
  // Without the command's time the interval would be spread linearly (the old limit):
  b.steady_us = protocol::kMaxRecipeTimeUs;
  EXPECT_EQ(time_at(a, 0, b, 50'000, 10'000), 116'000);
}

TEST(RecipeAtTimeTest, NewBlendWeightsStepAtTheCommandInsteadOfRamping) {
  const PoseRecipe a = two_clips(0, 0.6f, 0, 0.4f);
  PoseRecipe b = two_clips(50'000, 0.3f, 50'000, 0.7f);
  b.steady_us = 10'000;
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 39'999, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out.inputs[0].weight, 0.6f);
  EXPECT_EQ(out.inputs[1].weight, 0.4f);
  EXPECT_EQ(out.inputs[0].time_us, 39'999);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 40'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out.inputs[0].weight, 0.3f);
  EXPECT_EQ(out.inputs[1].weight, 0.7f);
  EXPECT_EQ(out.inputs[1].time_us, 40'000);
}

TEST(RecipeAtTimeTest, ACutToOtherClipsIsDerivedOnBothSidesOfTheCommand) {
  const PoseRecipe a = one_clip(0, 100'000);
  PoseRecipe b = two_clips(20'000, 0.6f, 20'000, 0.4f);  // played from 0 at 30 ms
  b.steady_us = 20'000;
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 29'999, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out.count, 1);
  EXPECT_EQ(out.inputs[0].time_us, 129'999);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 35'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_EQ(out.count, 2);
  EXPECT_EQ(out.inputs[1].time_us, 5'000);
}

TEST(RecipeAtTimeTest, APingPongMotionAcrossACommandIsNotDerived) {
  PoseRecipe a = one_clip(0, 100'000), b = one_clip(0, 150'000);
  a.wrap = b.wrap = 2;
  b.steady_us = 10'000;
  PoseRecipe out;
  EXPECT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kNotDerivable);
  b.steady_us = protocol::kMaxRecipeTimeUs;  // no command between: linear as before
  EXPECT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kOk);
}

TEST(RecipeAtTimeTest, MalformedCrossfadeRecipesAreRefused) {
  PoseRecipe bad = fading(0, 0, 10, 5);  // elapsed beyond the duration
  PoseRecipe out;
  EXPECT_EQ(recipe_at_time(bad, 0, fading(0, 0, 0, 400'000), 50'000, 25'000, kDurations, out),
            RecipeTiming::kInvalid);
  bad = fading(0, 0, 0, 400'000);
  bad.source_count = 2;  // no target input
  EXPECT_EQ(recipe_at_time(one_clip(0, 0), 0, bad, 50'000, 25'000, kDurations, out), RecipeTiming::kInvalid);
}

// A fade from a frozen pose: the interrupted fade (clip 0 -> clip 1, 400 ms, `frozen_elapsed`
// in) fixed at clip times 300 ms and 200 ms, and the new target (clip 1 again, at
// `target_time`) fading in over 200 ms, `elapsed` in (the interrupt was `elapsed` ago).
PoseRecipe fading_from_frozen(int64_t target_time, int64_t elapsed, int64_t frozen_elapsed = 100'000) {
  PoseRecipe r;
  r.count = 3;
  r.source_count = 2;
  r.frozen_source_count = 1;
  r.inputs[0] = PoseRecipe::Input{0, 300'000, 1.0f};
  r.inputs[1] = PoseRecipe::Input{1, 200'000, 1.0f};
  r.inputs[2] = PoseRecipe::Input{1, target_time, 1.0f};
  r.source_speed = 0;
  r.frozen_mix_count = 1;
  r.frozen_mixes[0] = {frozen_elapsed, 400'000, 2};
  r.fade_elapsed_us = elapsed;
  r.fade_duration_us = 200'000;
  r.steady_us = elapsed;
  return r;
}

TEST(RecipeAtTimeTest, AFadeFromAFrozenPoseKeepsTheFrozenInputsWhileTheTargetAndTheFadeMove) {
  const PoseRecipe a = fading_from_frozen(250'000, 50'000), b = fading_from_frozen(300'000, 100'000);
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.frozen());
  EXPECT_EQ(out.frozen_source_count, 1);
  EXPECT_EQ(out.source_count, 2);
  ASSERT_EQ(out.frozen_mix_count, 1);
  EXPECT_EQ(out.frozen_mixes[0].elapsed_us, 100'000);
  EXPECT_EQ(out.frozen_mixes[0].duration_us, 400'000);
  EXPECT_TRUE(out.inputs[0] == a.inputs[0]);
  EXPECT_TRUE(out.inputs[1] == a.inputs[1]);
  EXPECT_EQ(out.inputs[2].time_us, 270'000);
  EXPECT_EQ(out.fade_elapsed_us, 70'000);
  // Extrapolated: the frozen inputs stay; past the fade's end, the target alone.
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 90'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.frozen());
  EXPECT_TRUE(out.inputs[0] == a.inputs[0]);
  EXPECT_EQ(out.inputs[2].time_us, 340'000);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 160'000, kDurations, out), RecipeTiming::kOk);
  EXPECT_FALSE(out.crossfade());
  EXPECT_EQ(out.count, 1);
  EXPECT_EQ(out.inputs[0].clip, 1);
  EXPECT_EQ(out.inputs[0].time_us, 410'000);
  // Before the fade's start (backwards past its command): the frozen pose, at alpha 0.
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, -60'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.frozen());
  EXPECT_EQ(out.fade_elapsed_us, 0);
  EXPECT_TRUE(out.inputs[1] == a.inputs[1]);
}

// A fade in from the rest pose (protocol::kRestInput as its source, at speed 0), and that fade
// interrupted (the rest pose as a frozen chain's base): the rest input stays as it is, the
// target and the fade move; a second interrupt adds a mix that stays fixed too.
TEST(RecipeAtTimeTest, FadesFromTheRestPoseAndFromChainsOfFrozenFadesKeepTheirFixedInputs) {
  // `source` (a source block) fading to clip 1 at `target_time`, `elapsed` into `duration`.
  const auto fading_to_clip_1 = [](PoseRecipe r, int64_t target_time, int64_t elapsed, int64_t duration) {
    r.source_count = r.count;
    r.source_speed = 0;
    r.inputs[r.count++] = PoseRecipe::Input{1, target_time, 1.0f};
    r.fade_elapsed_us = elapsed;
    r.fade_duration_us = duration;
    r.steady_us = elapsed;
    return r;
  };
  PoseRecipe rest;
  rest.inputs[rest.count++] = protocol::kRestInput;
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(fading_to_clip_1(rest, 100'000, 100'000, 300'000), 0,
                           fading_to_clip_1(rest, 150'000, 150'000, 300'000), 50'000, 20'000, kDurations, out),
            RecipeTiming::kOk);
  EXPECT_TRUE(out.inputs[0] == protocol::kRestInput);
  EXPECT_EQ(out.inputs[1].time_us, 120'000);
  EXPECT_EQ(out.fade_elapsed_us, 120'000);
  // Interrupted twice: rest, clip 1 frozen at 200 ms (its fade 100 of 300 ms in), clip 0
  // frozen at 40 ms (its fade 40 of 200 ms in), then clip 1 again fading in.
  PoseRecipe frozen = rest;
  frozen.frozen_source_count = 1;
  frozen.inputs[frozen.count++] = PoseRecipe::Input{1, 200'000, 1.0f};
  frozen.frozen_mixes[frozen.frozen_mix_count++] = {100'000, 300'000, frozen.count};
  frozen.inputs[frozen.count++] = PoseRecipe::Input{0, 40'000, 1.0f};
  frozen.frozen_mixes[frozen.frozen_mix_count++] = {40'000, 200'000, frozen.count};
  const auto chain = [&](int64_t target_time, int64_t elapsed) {
    return fading_to_clip_1(frozen, target_time, elapsed, 200'000);
  };
  const PoseRecipe a = chain(300'000, 10'000), b = chain(350'000, 60'000);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 30'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_EQ(out.frozen_mix_count, 2);
  for (uint8_t i = 0; i < out.source_count; ++i) EXPECT_TRUE(out.inputs[i] == a.inputs[i]) << int{i};
  EXPECT_EQ(out.inputs[3].time_us, 330'000);
  EXPECT_EQ(out.fade_elapsed_us, 40'000);
  // A different chain at the newer record (a mix's state differs) is another motion.
  PoseRecipe other = b;
  other.frozen_mixes[1].elapsed_us = 50'000;
  EXPECT_EQ(recipe_at_time(a, 0, other, 50'000, 30'000, kDurations, out), RecipeTiming::kClipSetChanged);
  // A frozen mix without weight shows nothing the server evaluated: refused.
  PoseRecipe weightless_a = a, weightless_b = b;
  weightless_a.inputs[2].weight = weightless_b.inputs[2].weight = 0.0f;
  EXPECT_EQ(recipe_at_time(weightless_a, 0, weightless_b, 50'000, 30'000, kDurations, out),
            RecipeTiming::kInvalid);
}

TEST(RecipeAtTimeTest, ACrossfadeInterruptedBetweenTheRecordsIsThatFadeUntilTheCommandThenTheFrozenFade) {
  // a: clip 0 -> clip 1 over 400 ms, 70 ms in; interrupted 30 ms later (at 30 ms), so b (at
  // 50 ms) fades from that fade frozen 100 ms in, 20 ms into the new fade.
  const PoseRecipe a = fading(270'000, 170'000, 70'000, 400'000);
  const PoseRecipe b = fading_from_frozen(220'000, 20'000);
  PoseRecipe out;
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 29'999, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.crossfade());
  EXPECT_FALSE(out.frozen());
  EXPECT_EQ(out.fade_elapsed_us, 99'999);
  EXPECT_EQ(out.inputs[0].time_us, 299'999);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 30'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.frozen());
  EXPECT_EQ(out.fade_elapsed_us, 0);  // the interrupt's tick: the frozen pose exactly
  EXPECT_EQ(out.inputs[2].time_us, 200'000);
  ASSERT_EQ(recipe_at_time(a, 0, b, 50'000, 40'000, kDurations, out), RecipeTiming::kOk);
  ASSERT_TRUE(out.frozen());
  EXPECT_EQ(out.fade_elapsed_us, 10'000);
  EXPECT_EQ(out.inputs[2].time_us, 210'000);
  EXPECT_TRUE(out.inputs[0] == b.inputs[0]);
}

TEST(RecipeAtTimeTest, FadesFromDifferentFrozenPosesAreNotInterpolatedAndMalformedOnesAreRefused) {
  const PoseRecipe a = fading_from_frozen(250'000, 50'000);
  PoseRecipe b = fading_from_frozen(300'000, 100'000, 120'000);  // another frozen pose, no command
  PoseRecipe out;
  EXPECT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kClipSetChanged);
  b = fading_from_frozen(300'000, 100'000);
  b.inputs[0].time_us += 1;  // the frozen pose moved
  EXPECT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kClipSetChanged);
  b = fading_from_frozen(300'000, 100'000);
  b.source_speed = 1 << 16;  // frozen poses do not move: an invalid shape
  EXPECT_EQ(recipe_at_time(a, 0, b, 50'000, 20'000, kDurations, out), RecipeTiming::kInvalid);
  b = fading_from_frozen(300'000, 100'000);
  b.inputs[1].weight = 0.0f;  // the frozen fade's target shows nothing
  b.inputs[1].clip = 1;
  EXPECT_EQ(recipe_at_time(b, 0, fading_from_frozen(350'000, 150'000), 50'000, 20'000, kDurations, out),
            RecipeTiming::kClipSetChanged);
  PoseRecipe c = b;
  c.inputs[2].time_us = 350'000;
  c.fade_elapsed_us = c.steady_us = 150'000;
  EXPECT_EQ(recipe_at_time(b, 0, c, 50'000, 20'000, kDurations, out), RecipeTiming::kInvalid);
}

// A crossfade record (run -> walk, started at tick 0 over 500 ms) and a record of the fade that
// interrupted it at tick 6 (to clip 0 over 200 ms, from the pose frozen then): at every tick
// between them the track shows the server's pose bit for bit (the clip dictionary's
// evaluation, which server_tests CrossfadeRecipes checks against the World): the first fade
// until the interrupt, then the frozen pose (alpha 0) and the new fade over it.
TEST_F(RecipeTrackTest, AcrossAnInterruptedCrossfadeTheServersPoseIsShownBitForBit) {
  const auto motion_fade_at = [&](uint32_t tick) {
    protocol::PoseRecipe r;
    r.count = 2;
    r.source_count = 1;
    r.inputs[0] = {2, run.clip_time(tick), 1.0f};
    r.inputs[1] = {1, at(tick), 1.0f};  // walk from its start at 1x
    r.fade_elapsed_us = at(tick);
    r.fade_duration_us = 500'000;
    r.steady_us = r.fade_elapsed_us;
    return r;
  };
  const auto frozen_fade_at = [&](uint32_t tick) {
    const protocol::PoseRecipe interrupted = motion_fade_at(6);
    protocol::PoseRecipe r;
    r.count = 3;
    r.inputs[0] = interrupted.inputs[0];
    r.inputs[1] = interrupted.inputs[1];
    r.frozen_source_count = 1;
    r.source_count = 2;
    r.source_speed = 0;
    r.frozen_mix_count = 1;
    r.frozen_mixes[0] = {interrupted.fade_elapsed_us, interrupted.fade_duration_us, 2};
    r.inputs[2] = {0, at(tick) - at(6), 1.0f};
    r.fade_elapsed_us = at(tick) - at(6);
    r.fade_duration_us = 200'000;
    r.steady_us = r.fade_elapsed_us;
    return r;
  };
  protocol::ClipDictionary dictionary(rig.skeleton(), rig.rig().clips, rig.format());
  const auto record = [&](const protocol::PoseRecipe& recipe) {
    PoseSample s;
    EXPECT_TRUE(dictionary.predict(recipe, s.quantized));
    s.quantized.recipe = recipe;
    s.locals.resize(rig.skeleton().node_count());
    protocol::dequantize_pose(rig.format(), s.quantized, s.locals);
    s.skeleton = &rig.skeleton();
    s.recipe_verified = true;
    return s;
  };
  const PoseSample a = record(motion_fade_at(3)), b = record(frozen_fade_at(9)), c = record(frozen_fade_at(12));
  std::vector<Transform> expected(rig.skeleton().node_count());
  for (uint32_t tick = 4; tick < 12; ++tick) {
    const bool second = tick > 9;
    const SampleWindow window = second ? SampleWindow{ref(b, 9), ref(c, 12), {}} : SampleWindow{ref(a, 3), ref(b, 9), {}};
    ASSERT_TRUE(track.present(rig.skeleton(), window, at(tick), settings, recipes));
    EXPECT_TRUE(track.recipe()) << "tick " << tick;
    EXPECT_EQ(track.recipe_miss(), RecipeMiss::kNone);
    ASSERT_TRUE(dictionary.evaluate(tick < 6 ? motion_fade_at(tick) : frozen_fade_at(tick), expected));
    EXPECT_TRUE(shows_exactly(expected)) << "tick " << tick;
    if (tick == 6) {  // alpha 0: the first fade's pose at the interrupt, as it was frozen
      ASSERT_TRUE(dictionary.evaluate(motion_fade_at(6), expected));
      EXPECT_TRUE(shows_exactly(expected)) << "the frozen pose";
    }
  }
  EXPECT_FALSE(track.correcting());
  // Past the newest record, extrapolated: the frozen inputs stay, the new fade moves on.
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(c, 12), {}, ref(b, 9)}, at(14), settings, recipes));
  EXPECT_EQ(track.mode(), PresentMode::kExtrapolate);
  ASSERT_TRUE(dictionary.evaluate(frozen_fade_at(14), expected));
  EXPECT_TRUE(shows_exactly(expected));
}

}  // namespace
}  // namespace posecast::client
