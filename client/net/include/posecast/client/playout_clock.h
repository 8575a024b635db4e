#pragma once
// PlayoutClock: maps the client's clock to server time and chooses the render time
// (docs/client.md, "Interpolation delay").
//
// Every snapshot packet (part) applied gives an arrival offset
//     o = arrival time (client us) - server time of its tick (server us)
// = clock offset + one-way latency + queueing. Over the last `window_us` of server time:
//     base offset  B = min(o)                  (the fastest path)
//     jitter       J = q95(o) - B              (95th percentile spread)
//     loss         p = 1 - snapshots received / snapshots expected, counted over the window
//                  ending `loss_lag_us` before the newest tick (late ones land), at the send
//                  rate; each part received counts 1 / (its snapshot's part count). Parts, not
//                  whole snapshots: each entity's record travels in one part, so this is the
//                  rate at which an entity misses a snapshot, however the part counts vary.
// The newest server time is now - B. The render time follows
//     target = (now - B) - D,   D = (1 + n) * I + J
// with I the send interval and n the number of consecutive lost snapshots to ride out: the
// smallest n >= 0 with p^(n+1) <= consecutive_loss_target, at most max_cover. Before the loss
// window has `min_loss_window_us` of history, n = initial_cover (1: D starts at 2 intervals).
// Why: the newest snapshot at hand is at worst I + J old, so r <= now - B - I - J always has a
// snapshot after it; each further interval rides out one more lost snapshot.
// The render time moves at 1 +- max_rate_change times real time towards the target (no visible
// speed-up or jump), snaps when more than snap_us away, and never goes backwards.

#include <array>
#include <cstdint>

namespace posecast::client {

struct PlayoutSettings {
  int64_t window_us = 2'000'000;
  int64_t loss_lag_us = 250'000;
  int64_t min_loss_window_us = 1'000'000;
  double jitter_quantile = 0.95;
  double consecutive_loss_target = 0.01;
  int initial_cover = 1;
  int max_cover = 3;
  double max_rate_change = 0.1;
  int64_t steer_horizon_us = 250'000;  // error / horizon = rate change, before clamping
  int64_t snap_us = 500'000;
};

class PlayoutClock {
 public:
  explicit PlayoutClock(const PlayoutSettings& settings = {}) : settings_(settings) {}

  // Rates from the Welcome; forgets history. Both must be > 0.
  void reset(uint32_t tick_rate_hz, uint32_t send_rate_hz);

  // A snapshot part of `tick` (of `part_count` parts) applied for the first time, arriving at
  // client time `arrival_us`.
  void on_packet(uint32_t tick, uint32_t part_count, int64_t arrival_us);

  // Moves the render time to client time `now_us` (recomputing the estimates when packets
  // arrived since the last call). No effect before the first packet.
  void advance(int64_t now_us);

  bool started() const { return started_; }
  int64_t render_time_us() const { return render_us_; }          // server us
  int64_t newest_server_time_us(int64_t now_us) const { return now_us - base_offset_us_; }
  int64_t current_delay_us(int64_t now_us) const { return newest_server_time_us(now_us) - render_us_; }
  // The estimates as of the last advance().
  int64_t target_delay_us() const { return target_delay_us_; }
  int64_t jitter_us() const { return jitter_us_; }
  double loss() const { return loss_; }  // 0..1
  int cover() const { return cover_; }
  int64_t send_interval_us() const { return send_interval_us_; }
  int64_t base_offset_us() const { return base_offset_us_; }

 private:
  void recompute();

  struct Arrival {
    uint32_t tick = 0;
    uint32_t part_count = 1;
    int64_t offset_us = 0;
  };
  static constexpr std::size_t kHistory = 2048;  // 2 s of 60 Hz snapshots in 17 parts

  PlayoutSettings settings_;
  uint32_t tick_rate_hz_ = 60;
  uint32_t send_rate_hz_ = 20;
  int64_t send_interval_us_ = 50'000;
  std::array<Arrival, kHistory> history_{};  // ring, newest at (head_ - 1)
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::array<int64_t, kHistory> scratch_{};
  uint32_t newest_tick_ = 0;
  uint32_t first_tick_ = 0;
  bool have_ticks_ = false;
  bool dirty_ = false;

  int64_t base_offset_us_ = 0;
  int64_t jitter_us_ = 0;
  double loss_ = 0.0;
  int cover_ = 1;
  int64_t target_delay_us_ = 100'000;

  bool started_ = false;
  int64_t last_now_us_ = 0;
  int64_t render_us_ = 0;
};

}  // namespace posecast::client
