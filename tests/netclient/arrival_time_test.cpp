// Arrival times from the channel (NetClientOptions::channel_arrival_times): a client whose
// frames stall dates the snapshots that waited in its socket by when they arrived, so its
// jitter (and interpolation delay) measures the network, not its own stall. In real time over
// loopback UDP, because the socket's kernel receive timestamps are real time.

#include <chrono>
#include <thread>

#include "loopback_session.h"

namespace posecast::client {
namespace {

using testing::LoopbackSession;
using testing::SessionSetup;

TEST(ArrivalTimes, AStalledClientDatesSnapshotsByWhenTheyArrivedNotByItsNextFrame) {
  SessionSetup setup;
  setup.entities = 4;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClientOptions dated = session.client_options(41);
  dated.channel_arrival_times = true;
  NetClientOptions polled = session.client_options(42);
  polled.channel_arrival_times = false;
  NetClient& by_arrival = session.add_client(dated);  // both connect at time 0
  NetClient& by_frame = session.add_client(polled);

  // The server ticks on schedule in real time; both clients update every 2 ms, except from
  // 1.0 s to 1.4 s, when neither updates (a loading stall): the 20 Hz snapshots of those
  // 400 ms wait in their sockets.
  constexpr int64_t kStallFrom = 1'000'000, kStallTo = 1'400'000, kEnd = 1'800'000;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_us = [&] {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now() - start).count();
  };
  int64_t now = 0;
  while ((now = elapsed_us()) < kEnd) {
    for (;;) {
      const int64_t due = session.tick_time(static_cast<uint32_t>(session.server().world().tick_index()));
      if (due > now) break;
      session.server().tick(due);
    }
    if (now < kStallFrom || now >= kStallTo) {
      by_arrival.update(now);
      by_frame.update(now);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(by_arrival.connected()) << by_arrival.error();
  ASSERT_TRUE(by_frame.connected()) << by_frame.error();
  const ClientStats arrival_stats = by_arrival.stats(now);
  const ClientStats frame_stats = by_frame.stats(now);
  std::printf("jitter after a 400 ms stall: %.1f ms dated by arrival, %.1f ms by frame\n",
              arrival_stats.jitter_ms, frame_stats.jitter_ms);
  // Dated by frame, the stalled snapshots (a quarter of the 2 s window) read as up to 400 ms
  // late; dated by arrival, only the server's own lateness in this loop remains (a few ms;
  // the bound leaves room for a loaded machine).
  EXPECT_GT(frame_stats.jitter_ms, 200.0);
  EXPECT_LT(arrival_stats.jitter_ms, 100.0);
  EXPECT_LT(arrival_stats.target_delay_ms, frame_stats.target_delay_ms);
}

}  // namespace
}  // namespace posecast::client
