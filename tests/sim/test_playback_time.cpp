// Integer time: tick boundaries, phase wrapping, speeds (playback_time.h); which animation
// states are a plain base motion (animation_state.h).
#include <gtest/gtest.h>

#include "posecast/sim/animation_state.h"
#include "posecast/sim/playback_time.h"

namespace posecast::sim {
namespace {

constexpr int64_t kOne = int64_t{1} << kPhaseFractionBits;  // one microsecond of phase

TEST(TickClock, SixtyHertzTicksAlternateAndLandExactlyOnTheSecond) {
  EXPECT_EQ(tick_start_us(0, 60), 0);
  EXPECT_EQ(tick_start_us(1, 60), 16666);
  EXPECT_EQ(tick_start_us(2, 60), 33333);
  EXPECT_EQ(tick_start_us(60, 60), 1000000);
  EXPECT_EQ(tick_start_us(60 * 3600, 60), 3600000000);
  int64_t total = 0;
  for (uint64_t t = 0; t < 600; ++t) {
    const int64_t d = tick_duration_us(t, 60);
    EXPECT_TRUE(d == 16666 || d == 16667) << t;
    total += d;
  }
  EXPECT_EQ(total, 10000000);  // ten seconds, no drift
}

TEST(TickClock, HugeTickCountsDoNotOverflow) {
  const uint64_t tick = uint64_t{1} << 40;  // about 580 years at 60 Hz
  EXPECT_EQ(tick_start_us(tick, 60), static_cast<int64_t>((tick / 60) * 1000000 + (tick % 60) * 1000000 / 60));
  EXPECT_GT(tick_duration_us(tick, 60), 0);
}

TEST(WrapPhase, LoopWrapsWithinOneTick) {
  const int64_t duration = 1000000;  // 1 s
  // 10 ms before the end, advance 16667 us at 1x: lands 6667 us into the next cycle.
  const int64_t phase = (duration - 10000) * kOne;
  EXPECT_EQ(advance_phase(phase, 16667, kSpeedOne, duration, WrapMode::kLoop), 6667 * kOne);
  // Exactly at the end shows time 0.
  EXPECT_EQ(wrap_phase(duration * kOne, duration, WrapMode::kLoop), 0);
}

TEST(WrapPhase, LoopWrapsSeveralCyclesInOneTick) {
  // A 10 ms clip at 1x over a 16667 us tick wraps once; at 3x it wraps five times.
  EXPECT_EQ(advance_phase(0, 16667, kSpeedOne, 10000, WrapMode::kLoop), 6667 * kOne);
  EXPECT_EQ(advance_phase(0, 16667, 3 * kSpeedOne, 10000, WrapMode::kLoop), 1 * kOne);
}

TEST(WrapPhase, NegativeSpeedWrapsToTheEnd) {
  const int64_t duration = 1000000;
  const int64_t after = advance_phase(5000 * kOne, 16667, -kSpeedOne, duration, WrapMode::kLoop);
  EXPECT_EQ(after, (duration + 5000 - 16667) * kOne);
  EXPECT_EQ(sample_time_us(after, duration, WrapMode::kLoop), duration - 11667);
}

TEST(WrapPhase, FractionalSpeedKeepsSubMicrosecondPhaseExactly) {
  // 0.3x is 19661/65536: the phase advances by 16667 * 19661 units, no rounding anywhere.
  const SpeedQ16 speed = 19661;
  int64_t phase = 0;
  for (int t = 0; t < 1000; ++t) phase = advance_phase(phase, 16667, speed, int64_t{1} << 30, WrapMode::kLoop);
  EXPECT_EQ(phase, int64_t{1000} * 16667 * speed);
}

TEST(WrapPhase, PingPongReflectsAtBothEnds) {
  const int64_t duration = 1000;
  int64_t phase = advance_phase(900 * kOne, 300, kSpeedOne, duration, WrapMode::kPingPong);
  EXPECT_EQ(phase, 1200 * kOne);
  EXPECT_EQ(sample_time_us(phase, duration, WrapMode::kPingPong), 800);  // 200 us back from the end
  phase = advance_phase(phase, 900, kSpeedOne, duration, WrapMode::kPingPong);
  EXPECT_EQ(sample_time_us(phase, duration, WrapMode::kPingPong), 100);  // wrapped past 0 again
  // Backwards from 50 us: reflects at 0 and shows 50 us going up... i.e. time 50 -> -50 -> 50.
  phase = advance_phase(50 * kOne, 100, -kSpeedOne, duration, WrapMode::kPingPong);
  EXPECT_EQ(sample_time_us(phase, duration, WrapMode::kPingPong), 50);
}

TEST(WrapPhase, ClampHoldsBothEnds) {
  const int64_t duration = 1000;
  EXPECT_EQ(advance_phase(900 * kOne, 300, kSpeedOne, duration, WrapMode::kClamp), 1000 * kOne);
  EXPECT_EQ(advance_phase(100 * kOne, 300, -kSpeedOne, duration, WrapMode::kClamp), 0);
  EXPECT_EQ(sample_time_us(1000 * kOne, duration, WrapMode::kClamp), 1000);
}

// wrap_phase answers a phase within one cycle of [0, cycle) without a division: at and around
// every boundary of those shortcuts it equals the floored modulo.
TEST(WrapPhase, ShortcutsAgreeWithTheFlooredModuloAtEveryBoundary) {
  const auto floored = [](int64_t phase, int64_t cycle) {
    const int64_t r = phase % cycle;
    return r < 0 ? r + cycle : r;
  };
  for (const int64_t duration : {int64_t{1}, int64_t{7}, int64_t{1000000}, kMaxClipDurationUs}) {
    for (const WrapMode mode : {WrapMode::kLoop, WrapMode::kPingPong}) {
      const int64_t cycle = cycle_length(duration, mode);
      for (const int64_t base : {-3 * cycle, -2 * cycle, -cycle, int64_t{0}, cycle, 2 * cycle, 3 * cycle}) {
        for (const int64_t offset : {int64_t{-1}, int64_t{0}, int64_t{1}}) {
          const int64_t phase = base + offset;
          EXPECT_EQ(wrap_phase(phase, duration, mode), floored(phase, cycle))
              << "duration " << duration << " mode " << to_string(mode) << " phase " << phase;
        }
      }
    }
  }
}

TEST(WrapPhase, ZeroLengthClipStaysAtZero) {
  EXPECT_EQ(advance_phase(0, 16667, kSpeedOne, 0, WrapMode::kLoop), 0);
  EXPECT_EQ(advance_phase(0, 16667, -kSpeedOne, 0, WrapMode::kPingPong), 0);
  EXPECT_EQ(advance_phase(0, 16667, kSpeedOne, 0, WrapMode::kClamp), 0);
}

TEST(RescalePhase, KeepsNormalisedTime) {
  const int64_t walk = cycle_length(1000000, WrapMode::kLoop);
  const int64_t run = cycle_length(600000, WrapMode::kLoop);
  EXPECT_EQ(rescale_phase(walk / 4, walk, run), run / 4);
  EXPECT_EQ(rescale_phase(0, walk, run), 0);
  EXPECT_EQ(rescale_phase(walk / 2, walk, 0), 0);
  EXPECT_EQ(rescale_phase(walk / 2, 0, run), 0);
  // The largest phases do not overflow.
  const int64_t longest = cycle_length(kMaxClipDurationUs, WrapMode::kPingPong);
  EXPECT_EQ(rescale_phase(longest - 1, longest, longest), longest - 1);
}

}  // namespace
}  // namespace posecast::sim

namespace posecast::sim {
namespace {

// What the server attaches clip recipes for: layer 0's motion alone, in full.
TEST(ShowsBaseMotionOnly, OnlyAFullUnmaskedUnfadedBaseLayerQualifies) {
  EntityState state;
  EXPECT_FALSE(shows_base_motion_only(state)) << "no layer";
  state.layers.resize(2);
  EXPECT_FALSE(shows_base_motion_only(state)) << "layer 0 plays nothing";
  state.layers[0].target.count = 2;  // a blend of two clips
  EXPECT_TRUE(shows_base_motion_only(state));
  state.layers[1].target.count = 1;
  EXPECT_FALSE(shows_base_motion_only(state)) << "a second active layer";
  state.layers[1].weight = 0.0f;
  EXPECT_TRUE(shows_base_motion_only(state)) << "a layer at weight 0 is inactive";
  state.layers[0].fade_source = FadeSource::kMotion;
  EXPECT_FALSE(shows_base_motion_only(state)) << "crossfading";
  state.layers[0].fade_source = FadeSource::kNone;
  state.layers[0].mask = 0;
  EXPECT_FALSE(shows_base_motion_only(state)) << "masked";
  state.layers[0].mask = kNoMask;
  state.layers[0].weight = 0.5f;
  EXPECT_FALSE(shows_base_motion_only(state)) << "partial weight";
  state.layers[0].weight = 1.0f;
  state.layers[0].mode = LayerMode::kAdditive;
  EXPECT_FALSE(shows_base_motion_only(state)) << "additive";
}

}  // namespace
}  // namespace posecast::sim
