// PlayoutClock: the delay law (docs/client.md) under steady, jittery and lossy arrivals.

#include "posecast/client/playout_clock.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace posecast::client {
namespace {

constexpr uint32_t kTickRate = 60;
constexpr uint32_t kSendRate = 20;
constexpr int64_t kSnapshotIntervalUs = 50'000;

int64_t tick_time(uint32_t tick) { return static_cast<int64_t>(tick) * 1'000'000 / kTickRate; }

// A deterministic generator for the tests' jitter and loss.
struct Lcg {
  uint64_t state = 12345;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  }
  double unit() { return static_cast<double>(next() % 1'000'000) / 1'000'000.0; }
};

// Feeds snapshots every 3 ticks for `seconds`, arriving at server time + latency + jitter in
// [-jitter, jitter], each lost with probability `loss`; advances the clock at 60 Hz frames.
// Returns the largest backwards step of the render time (must be 0) and checks the rate.
void run(PlayoutClock& clock, double seconds, int64_t latency, int64_t jitter, double loss,
         uint64_t seed = 1) {
  Lcg rng{seed};
  const uint32_t last_tick = static_cast<uint32_t>(seconds * kTickRate);
  // Arrival events sorted by time, interleaved with frames.
  struct Event { int64_t at; uint32_t tick; };
  std::vector<Event> arrivals;
  for (uint32_t tick = 3; tick <= last_tick; tick += 3) {
    const double u = rng.unit();
    const int64_t j = jitter == 0 ? 0 : static_cast<int64_t>((rng.unit() * 2.0 - 1.0) * static_cast<double>(jitter));
    if (u < loss) continue;
    arrivals.push_back({tick_time(tick) + latency + j + 1'000'000, tick});  // +1 s client clock offset
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
  std::size_t next = 0;
  int64_t previous_render = INT64_MIN;
  int64_t previous_now = 0;
  for (int64_t now = 1'000'000; now < 1'000'000 + tick_time(last_tick); now += 16'667) {
    while (next < arrivals.size() && arrivals[next].at <= now) {
      clock.on_packet(arrivals[next].tick, 1, arrivals[next].at);
      ++next;
    }
    clock.advance(now);
    if (!clock.started()) continue;
    if (previous_render != INT64_MIN) {
      ASSERT_GE(clock.render_time_us(), previous_render);
      const int64_t step = clock.render_time_us() - previous_render;
      const int64_t dt = now - previous_now;
      // Steering changes the rate by at most 10 % (+1 us rounding), unless it snapped.
      if (step <= dt * 2) {
        EXPECT_LE(step, dt + dt / 10 + 1);
        EXPECT_GE(step, dt - dt / 10 - 1);
      }
    }
    previous_render = clock.render_time_us();
    previous_now = now;
  }
}

TEST(PlayoutClockTest, StartsAtTwoSendIntervals) {
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  EXPECT_EQ(clock.target_delay_us(), 2 * kSnapshotIntervalUs);
  clock.on_packet(30, 1, 5'000'000);
  clock.advance(5'000'000);
  ASSERT_TRUE(clock.started());
  EXPECT_EQ(clock.current_delay_us(5'000'000), 2 * kSnapshotIntervalUs);
  EXPECT_EQ(clock.render_time_us(), tick_time(30) - 2 * kSnapshotIntervalUs);
}

TEST(PlayoutClockTest, WithoutLossOrJitterTheDelaySettlesAtOneSendInterval) {
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  run(clock, 6.0, 30'000, 0, 0.0);
  EXPECT_EQ(clock.loss(), 0.0);
  EXPECT_EQ(clock.cover(), 0);
  EXPECT_EQ(clock.jitter_us(), 0);
  EXPECT_EQ(clock.target_delay_us(), kSnapshotIntervalUs);
  EXPECT_NEAR(static_cast<double>(clock.current_delay_us(1'000'000 + tick_time(359))),
              static_cast<double>(kSnapshotIntervalUs), 2'000.0);
}

TEST(PlayoutClockTest, JitterAddsItsMeasuredSpreadToTheDelay) {
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  run(clock, 6.0, 50'000, 20'000, 0.0);
  // Uniform +-20 ms: the 95th percentile spread is about 38 ms.
  EXPECT_GT(clock.jitter_us(), 30'000);
  EXPECT_LE(clock.jitter_us(), 40'000);
  EXPECT_EQ(clock.cover(), 0);
  EXPECT_EQ(clock.target_delay_us(), kSnapshotIntervalUs + clock.jitter_us());
}

TEST(PlayoutClockTest, TenPercentLossRidesOutOneLostSnapshot) {
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  run(clock, 8.0, 50'000, 0, 0.10, 7);
  EXPECT_GT(clock.loss(), 0.03);
  EXPECT_LT(clock.loss(), 0.2);
  EXPECT_GE(clock.cover(), 1);
  EXPECT_EQ(clock.target_delay_us(), (1 + clock.cover()) * kSnapshotIntervalUs + clock.jitter_us());
}

TEST(PlayoutClockTest, HeavyLossRaisesTheCoverUpToItsCap) {
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  run(clock, 8.0, 50'000, 0, 0.5, 3);
  EXPECT_EQ(clock.cover(), 3);
}

}  // namespace
}  // namespace posecast::client

namespace posecast::client {
namespace {

TEST(PlayoutClockTest, LostPartsOfMultiPartSnapshotsCountAsLoss) {
  // Every snapshot in 4 parts; 10 % of parts lost, but almost never all 4 of one tick.
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  Lcg rng{5};
  for (uint32_t tick = 3; tick <= 8 * kTickRate; tick += 3) {
    for (uint32_t part = 0; part < 4; ++part) {
      if (rng.unit() < 0.10) continue;
      clock.on_packet(tick, 4, tick_time(tick) + 40'000);
    }
    clock.advance(tick_time(tick) + 40'000);
  }
  EXPECT_GT(clock.loss(), 0.05);
  EXPECT_LT(clock.loss(), 0.15);
  EXPECT_GE(clock.cover(), 1);
}

}  // namespace
}  // namespace posecast::client

namespace posecast::client {
namespace {

TEST(PlayoutClockTest, SnapshotsGrowingFromOneToFourPartsAreNotLoss) {
  // No part lost, but the snapshots grow from 1 part to 4 halfway through the loss window (a
  // server's records grow when its entities start motions the recipes do not cover). Counting
  // parts against "snapshots x the mean part count per arrival" would read the larger
  // snapshots' parts as the norm and report the smaller ones' as lost.
  PlayoutClock clock;
  clock.reset(kTickRate, kSendRate);
  const uint32_t grow_at = 4 * kTickRate;
  for (uint32_t tick = 3; tick <= 8 * kTickRate; tick += 3) {
    const uint32_t parts = tick < grow_at ? 1 : 4;
    for (uint32_t part = 0; part < parts; ++part) {
      clock.on_packet(tick, parts, tick_time(tick) + 40'000);
    }
    clock.advance(tick_time(tick) + 40'000);
    // The loss window (2 s ending 250 ms before the newest tick) spans the change from about
    // 4.25 s to 6.25 s: check at every snapshot, not only at the end.
    ASSERT_LT(clock.loss(), 1e-9) << "at tick " << tick;
  }
  EXPECT_EQ(clock.cover(), 0);
  EXPECT_EQ(clock.target_delay_us(), kSnapshotIntervalUs + clock.jitter_us());
}

}  // namespace
}  // namespace posecast::client
