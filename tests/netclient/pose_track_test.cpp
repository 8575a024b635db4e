// PoseTrack and the per-joint blends: exact samples, interpolation, bounded extrapolation,
// and convergence without a pop.

#include "posecast/client/pose_track.h"

#include <cmath>
#include <cstring>
#include <random>

#include "netclient_support.h"
#include "posecast/client/pose_blend.h"
#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/palette_batch.h"

namespace posecast::client {
namespace {

using testing::PoseSource;
using testing::same_bits;

// A decoded sample made the way the snapshot buffer makes it.
PoseSample make_sample(PoseSource& source, const testing::TestRig& rig, uint32_t tick) {
  PoseSample s;
  s.quantized = source.quantized(tick, nullptr);
  s.locals.resize(rig.skeleton().node_count());
  protocol::dequantize_pose(rig.format(), s.quantized, s.locals);
  s.skeleton = &rig.skeleton();
  return s;
}

SampleRef ref(const PoseSample& s, uint32_t tick) {
  return SampleRef{&s, tick, static_cast<int64_t>(tick) * 1'000'000 / 60};
}

float max_palette_difference(std::span<const glm::mat4> a, std::span<const glm::mat4> b) {
  float worst = 0.0f;
  for (std::size_t j = 0; j < a.size(); ++j) {
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) worst = std::max(worst, std::fabs(a[j][c][r] - b[j][c][r]));
    }
  }
  return worst;
}

class PoseTrackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(rig.model, nullptr);
    track.reset(rig.skeleton().node_count(), rig.skeleton().joint_count());
  }
  testing::TestRig rig = testing::load_test_rig();
  PoseSource source{rig, 2};  // "run": plenty of motion
  PoseTrack track;
  PresentSettings settings;
};

TEST_F(PoseTrackTest, RenderTimeOnASampleShowsItsDecodedPaletteBitForBit) {
  const PoseSample a = make_sample(source, rig, 3);
  const PoseSample b = make_sample(source, rig, 6);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 6), {}}, ref(a, 3).time_us, settings));
  EXPECT_EQ(track.mode(), PresentMode::kExact);
  EXPECT_TRUE(same_bits(track.palette(), source.palette(a.quantized)));
}

// A sample stored deferred (an exact record: its recipe alone, PoseSample::pending) is
// computed when a frame needs its pose and then shows what a fully decoded one shows; one
// whose prediction fails is refused (present() false), and stays refused without a retry.
TEST_F(PoseTrackTest, DeferredSamplesAreComputedWhenShownAndAFailedOneIsRefused) {
  protocol::ClipDictionary dictionary(rig.skeleton(), rig.rig().clips, rig.format());
  const protocol::QuantizedPose q = source.quantized_with_recipe(3);
  PoseSample deferred;
  deferred.quantized.recipe = q.recipe;
  deferred.quantized.values.assign(q.values.size(), 12345);  // stale codes of a recycled slot
  deferred.locals.resize(rig.skeleton().node_count());
  deferred.skeleton = &rig.skeleton();
  deferred.format = &rig.format();
  deferred.pending = &dictionary;
  deferred.recipe_verified = true;
  const PoseSample full = make_sample(source, rig, 3);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(deferred, 3), {}, {}},
                            ref(deferred, 3).time_us, settings));
  EXPECT_EQ(deferred.pending, nullptr);
  EXPECT_EQ(deferred.quantized.values, q.values);
  EXPECT_TRUE(same_bits(track.palette(), source.palette(full.quantized)));

  PoseSample broken = deferred;
  broken.pending = &dictionary;
  broken.quantized.recipe.count = 0;  // no recipe: the prediction fails
  PoseTrack other;
  other.reset(rig.skeleton().node_count(), rig.skeleton().joint_count());
  EXPECT_FALSE(other.present(rig.skeleton(), SampleWindow{ref(broken, 3), {}, {}},
                             ref(broken, 3).time_us, settings));
  EXPECT_TRUE(broken.undecodable);
  EXPECT_EQ(broken.pending, nullptr);
  EXPECT_FALSE(broken.decoded());
  std::vector<glm::mat4> models(rig.skeleton().node_count()), palette(rig.skeleton().joint_count());
  EXPECT_FALSE(broken.compute_palette(models, palette));
}

TEST_F(PoseTrackTest, InterpolationBlendsEachJointBetweenTheNeighbours) {
  const PoseSample a = make_sample(source, rig, 3);
  const PoseSample b = make_sample(source, rig, 6);
  const int64_t mid = (ref(a, 3).time_us + ref(b, 6).time_us) / 2;
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(a, 3), ref(b, 6), {}}, mid, settings));
  EXPECT_EQ(track.mode(), PresentMode::kInterpolate);
  std::vector<Transform> expected(a.locals.size());
  interpolate_locals(a.locals, b.locals, 0.5f, RotationBlend::kSlerp, expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(track.locals()[i].translation, expected[i].translation);
    EXPECT_EQ(track.locals()[i].rotation, expected[i].rotation);
  }
  // Halfway in pose space lies between the two palettes.
  EXPECT_LE(max_palette_difference(track.palette(), source.palette(a.quantized)),
            max_palette_difference(source.palette(a.quantized), source.palette(b.quantized)));
}

TEST_F(PoseTrackTest, ADeferredPaletteIsLeftToTheCallerAndAReusedFrameNeedsNone) {
  const PoseSample a = make_sample(source, rig, 3);
  const PoseSample b = make_sample(source, rig, 6);
  const SampleWindow window{ref(a, 3), ref(b, 6), {}};
  const int64_t mid = (ref(a, 3).time_us + ref(b, 6).time_us) / 2;
  PoseTrack direct;
  direct.reset(rig.skeleton().node_count(), rig.skeleton().joint_count());
  ASSERT_TRUE(direct.present(rig.skeleton(), window, mid, settings));
  EXPECT_FALSE(direct.palette_pending());

  ASSERT_TRUE(track.present(rig.skeleton(), window, mid, settings, {}, nullptr, /*defer_palette=*/true));
  ASSERT_TRUE(track.palette_pending());
  // What NetClient does: the batch job (one lane here) into the pending palette.
  std::vector<float> scratch(PaletteBatchJob::scratch_floats(rig.skeleton()));
  const std::span<const Transform> locals[1] = {track.locals()};
  const std::span<glm::mat4> palettes[1] = {track.pending_palette()};
  PaletteBatchJob job;
  job.skeleton = &rig.skeleton();
  job.locals = locals;
  job.palettes = palettes;
  job.scratch = scratch;
  ASSERT_EQ(job.Run(), 1u);
  track.finish_palette(true);
  EXPECT_FALSE(track.palette_pending());
  EXPECT_FALSE(track.palette_refused());
  EXPECT_TRUE(same_bits(track.palette(), direct.palette()));

  // The same frame again: the last palette stands, nothing is pending.
  ASSERT_TRUE(track.present(rig.skeleton(), window, mid, settings, {}, nullptr, true));
  EXPECT_FALSE(track.palette_pending());
  EXPECT_EQ(track.reused_frames(), 1u);
  // A refused palette: the next frame cannot reuse it and computes again.
  ASSERT_TRUE(track.present(rig.skeleton(), window, mid + 1000, settings, {}, nullptr, true));
  ASSERT_TRUE(track.palette_pending());
  track.finish_palette(false);
  EXPECT_TRUE(track.palette_refused());
  ASSERT_TRUE(track.present(rig.skeleton(), window, mid + 1000, settings, {}, nullptr, true));
  EXPECT_TRUE(track.palette_pending()) << "a refused palette is never reused";
  EXPECT_FALSE(track.palette_refused());
}

TEST_F(PoseTrackTest, InterpolationEndpointsCopyTheSamplesExactly) {
  const PoseSample a = make_sample(source, rig, 3);
  const PoseSample b = make_sample(source, rig, 6);
  std::vector<Transform> out(a.locals.size());
  interpolate_locals(a.locals, b.locals, 0.0f, RotationBlend::kNlerp, out);
  EXPECT_EQ(0, std::memcmp(out.data(), a.locals.data(), out.size() * sizeof(Transform)));
  interpolate_locals(a.locals, b.locals, 1.0f, RotationBlend::kSlerp, out);
  EXPECT_EQ(0, std::memcmp(out.data(), b.locals.data(), out.size() * sizeof(Transform)));
}

TEST_F(PoseTrackTest, ExtrapolationStopsAtTheConfiguredBound) {
  const PoseSample a = make_sample(source, rig, 3);
  const PoseSample b = make_sample(source, rig, 6);
  const SampleWindow w{ref(b, 6), {}, ref(a, 3)};
  ASSERT_TRUE(track.present(rig.skeleton(), w, ref(b, 6).time_us + 50'000, settings));
  EXPECT_EQ(track.mode(), PresentMode::kExtrapolate);
  EXPECT_EQ(track.extrapolated_us(), 50'000);
  ASSERT_TRUE(track.present(rig.skeleton(), w, ref(b, 6).time_us + 400'000, settings));
  EXPECT_EQ(track.mode(), PresentMode::kStalled);
  EXPECT_EQ(track.extrapolated_us(), settings.max_extrapolation_us);
  const std::vector<glm::mat4> frozen(track.palette().begin(), track.palette().end());
  ASSERT_TRUE(track.present(rig.skeleton(), w, ref(b, 6).time_us + 900'000, settings));
  EXPECT_TRUE(same_bits(track.palette(), frozen));
}

TEST_F(PoseTrackTest, ExtrapolationContinuesAConstantVelocityExactly) {
  // Translation moving linearly: a -> b -> (b + (b - a) * s).
  std::vector<Transform> a(2), b(2), out(2);
  a[0].translation = {0, 0, 0};
  b[0].translation = {1, 2, 3};
  extrapolate_locals(a, b, 0.5f, out);
  EXPECT_EQ(out[0].translation, glm::vec3(1.5f, 3.0f, 4.5f));
  EXPECT_EQ(out[1].rotation, glm::quat(1, 0, 0, 0));
}

TEST_F(PoseTrackTest, AfterAGapThePoseConvergesWithoutAJump) {
  // Samples every 3 ticks; 6 to 15 are "lost": the track extrapolates from 0,3 then 18 arrives.
  std::vector<PoseSample> s;
  for (uint32_t tick : {0u, 3u, 18u, 21u}) s.push_back(make_sample(source, rig, tick));
  const int64_t frame = 16'667 / 2;  // a 120 Hz display
  std::vector<glm::mat4> last;
  float worst_step_gap = 0.0f;
  const int64_t t3 = ref(s[1], 3).time_us;
  const int64_t t12 = ref(s[2], 18).time_us;
  const int64_t t15 = ref(s[3], 21).time_us;
  // Frames during the gap (12 not yet received).
  int64_t r = t3;
  for (; r < t3 + 60'000; r += frame) {
    ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(s[1], 3), {}, ref(s[0], 0)}, r, settings));
    last.assign(track.palette().begin(), track.palette().end());
  }
  // 18 and 21 arrive; the render time is between 3 and 18 (interpolation across the gap).
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(s[1], 3), ref(s[2], 18), ref(s[0], 0)}, r, settings));
  EXPECT_TRUE(track.correcting());
  EXPECT_EQ(track.corrections(), 1u);
  worst_step_gap = max_palette_difference(track.palette(), last);
  // The first corrected frame starts from what was shown: it moves no more than one frame of
  // motion would (bounded by the distance between neighbouring samples).
  EXPECT_LT(worst_step_gap, max_palette_difference(source.palette(s[1].quantized), source.palette(s[2].quantized)));
  // Once the convergence time has passed the track shows the plain interpolation.
  r += settings.convergence_us;
  ASSERT_LT(r, t12);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(s[1], 3), ref(s[2], 18), ref(s[0], 0)}, r, settings));
  EXPECT_FALSE(track.correcting());
  // Moving on over exact samples starts no new correction.
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(s[2], 18), ref(s[3], 21), ref(s[1], 3)}, t12, settings));
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{ref(s[2], 18), ref(s[3], 21), ref(s[1], 3)}, (t12 + t15) / 2, settings));
  EXPECT_EQ(track.corrections(), 1u);
}

TEST_F(PoseTrackTest, HoldsTheFirstSampleUntilTheRenderTimeReachesIt) {
  const PoseSample a = make_sample(source, rig, 30);
  ASSERT_TRUE(track.present(rig.skeleton(), SampleWindow{{}, ref(a, 30), {}}, 0, settings));
  EXPECT_EQ(track.mode(), PresentMode::kHold);
  EXPECT_TRUE(same_bits(track.palette(), source.palette(a.quantized)));
  EXPECT_FALSE(track.present(rig.skeleton(), SampleWindow{}, 0, settings));
  EXPECT_EQ(track.mode(), PresentMode::kNone);
}

TEST_F(PoseTrackTest, CorrectionWithZeroWeightIsTheTargetExactly) {
  const PoseSample a = make_sample(source, rig, 3);
  const PoseSample b = make_sample(source, rig, 9);
  std::vector<Transform> delta(a.locals.size()), out(a.locals.size());
  difference_locals(b.locals, a.locals, delta);
  apply_correction(a.locals, delta, 0.0f, out);
  EXPECT_EQ(0, std::memcmp(out.data(), a.locals.data(), out.size() * sizeof(Transform)));
  apply_correction(a.locals, delta, 1.0f, out);
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_NEAR(out[i].translation.x, b.locals[i].translation.x, 1e-5f);
    EXPECT_NEAR(std::fabs(det_dot(out[i].rotation, b.locals[i].rotation)), 1.0f, 1e-5f);
  }
}

// interpolate_locals(kSlerp) runs eight slerps at a time (InterpolatePosesJob): it must give
// the bits of the plain det_lerp / det_slerp loop, for near and far rotation pairs, opposite
// hemispheres, equal and antipodal pairs, node counts that are not multiples of eight, and t
// across (0, 1).
TEST(PoseBlendTest, SlerpInterpolationMatchesTheScalarDetSlerpBitForBit) {
  std::mt19937 random(1234);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  auto random_quat = [&] {
    return det_normalize(glm::quat(unit(random), unit(random), unit(random), unit(random)));
  };
  std::size_t compared = 0;
  for (std::size_t nodes : {1u, 7u, 8u, 9u, 24u, 37u}) {
    for (int round = 0; round < 40; ++round) {
      std::vector<Transform> a(nodes), b(nodes), out(nodes);
      for (std::size_t i = 0; i < nodes; ++i) {
        a[i].translation = {unit(random), unit(random), unit(random)};
        b[i].translation = {unit(random), unit(random), unit(random)};
        a[i].scale = {1.0f + unit(random), 1.0f, 1.0f};
        b[i].scale = {1.0f, 1.0f + unit(random), 1.0f};
        a[i].rotation = random_quat();
        switch ((i + static_cast<std::size_t>(round)) % 5) {
          case 0: b[i].rotation = random_quat(); break;                             // far
          case 1: b[i].rotation = det_normalize(a[i].rotation * glm::quat(1.0f, 0.01f * unit(random), 0.0f, 0.0f)); break;  // near
          case 2: b[i].rotation = -random_quat(); break;                            // any hemisphere
          case 3: b[i].rotation = a[i].rotation; break;                             // equal
          default: b[i].rotation = -a[i].rotation; break;                           // antipodal
        }
      }
      const float t = 0.001f + 0.998f * (0.5f + 0.5f * unit(random));
      interpolate_locals(a, b, t, RotationBlend::kSlerp, out);
      for (std::size_t i = 0; i < nodes; ++i) {
        const Transform expected{det_lerp(a[i].translation, b[i].translation, t),
                                 det_slerp(a[i].rotation, b[i].rotation, t),
                                 det_lerp(a[i].scale, b[i].scale, t)};
        ASSERT_EQ(0, std::memcmp(&out[i], &expected, sizeof(Transform)))
            << nodes << " nodes, round " << round << ", node " << i << ", t " << t;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 40u * (1 + 7 + 8 + 9 + 24 + 37));
}

}  // namespace
}  // namespace posecast::client
