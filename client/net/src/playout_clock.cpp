#include "posecast/client/playout_clock.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace posecast::client {

void PlayoutClock::reset(uint32_t tick_rate_hz, uint32_t send_rate_hz) {
  tick_rate_hz_ = std::max<uint32_t>(tick_rate_hz, 1);
  send_rate_hz_ = std::max<uint32_t>(send_rate_hz, 1);
  send_interval_us_ = 1'000'000 / send_rate_hz_;
  head_ = count_ = 0;
  have_ticks_ = false;
  newest_tick_ = first_tick_ = 0;
  base_offset_us_ = 0;
  jitter_us_ = 0;
  loss_ = 0.0;
  cover_ = settings_.initial_cover;
  target_delay_us_ = (1 + cover_) * send_interval_us_;
  started_ = false;
  render_us_ = 0;
  last_now_us_ = 0;
}

void PlayoutClock::on_packet(uint32_t tick, uint32_t part_count, int64_t arrival_us) {
  const int64_t server_us = static_cast<int64_t>(tick) * 1'000'000 / tick_rate_hz_;
  history_[head_] = Arrival{tick, std::max<uint32_t>(part_count, 1), arrival_us - server_us};
  head_ = (head_ + 1) % kHistory;
  count_ = std::min(count_ + 1, kHistory);
  if (!have_ticks_) {
    first_tick_ = newest_tick_ = tick;
    have_ticks_ = true;
  } else {
    newest_tick_ = std::max(newest_tick_, tick);
    first_tick_ = std::min(first_tick_, tick);
  }
  dirty_ = true;
}

void PlayoutClock::recompute() {
  const int64_t tick_us = 1'000'000 / static_cast<int64_t>(tick_rate_hz_);
  const auto ticks_in = [&](int64_t us) {
    return static_cast<uint32_t>(std::max<int64_t>(us / tick_us, 1));
  };
  const uint32_t window_ticks = ticks_in(settings_.window_us);
  const uint32_t lag_ticks = ticks_in(settings_.loss_lag_us);

  // Offsets within the window (by tick, so a burst of late arrivals does not stretch it), and
  // first arrivals within the loss window (loss_start, loss_end].
  const uint32_t loss_end = newest_tick_ > lag_ticks ? newest_tick_ - lag_ticks : 0;
  const uint32_t loss_start =
      std::max(loss_end > window_ticks ? loss_end - window_ticks : 0u, first_tick_);
  std::size_t n = 0;
  uint32_t in_loss_window = 0;
  double snapshots_received = 0.0;  // each part counts 1 / its snapshot's part count
  for (std::size_t i = 0; i < count_; ++i) {
    const Arrival& a = history_[(head_ + kHistory - 1 - i) % kHistory];
    if (a.tick > loss_start && a.tick <= loss_end) {
      ++in_loss_window;
      snapshots_received += 1.0 / static_cast<double>(a.part_count);
    }
    if (newest_tick_ - a.tick <= window_ticks) scratch_[n++] = a.offset_us;
  }
  if (n == 0) return;
  std::sort(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(n));
  base_offset_us_ = scratch_[0];
  const std::size_t q = std::min(
      n - 1, static_cast<std::size_t>(
                 std::floor(settings_.jitter_quantile * static_cast<double>(n - 1) + 0.5)));
  jitter_us_ = scratch_[q] - scratch_[0];

  // Loss: snapshots are expected every send interval (span * send rate / tick rate of them).
  // Each part received counts as 1 / (its snapshot's part count) of a snapshot, so a snapshot
  // of k parts that lost some counts as the share that arrived, and the expected received
  // sum is (1 - p) x snapshots expected whatever the part counts are. (A ratio of parts
  // received to snapshots x mean part count per arrival would lean to the larger snapshots
  // when their part counts change within the window, and read loss on a loss-free link.)
  const uint32_t loss_span_ticks = loss_end > loss_start ? loss_end - loss_start : 0;
  if (static_cast<int64_t>(loss_span_ticks) * tick_us >= settings_.min_loss_window_us &&
      in_loss_window > 0) {
    const double expected = static_cast<double>(loss_span_ticks) *
                            static_cast<double>(send_rate_hz_) /
                            static_cast<double>(tick_rate_hz_);
    loss_ = std::clamp(1.0 - snapshots_received / expected, 0.0, 1.0);
    int cover = 0;
    double run = loss_;  // probability of cover + 1 consecutive losses
    while (cover < settings_.max_cover && run > settings_.consecutive_loss_target) {
      ++cover;
      run *= loss_;
    }
    cover_ = cover;
  }
  target_delay_us_ = (1 + cover_) * send_interval_us_ + jitter_us_;
}

void PlayoutClock::advance(int64_t now_us) {
  if (!have_ticks_) return;
  if (dirty_) {
    recompute();
    dirty_ = false;
  }
  const int64_t target = newest_server_time_us(now_us) - target_delay_us_;
  if (!started_) {
    started_ = true;
    render_us_ = target;
    last_now_us_ = now_us;
    return;
  }
  const int64_t dt = std::max<int64_t>(now_us - last_now_us_, 0);
  last_now_us_ = std::max(last_now_us_, now_us);
  const int64_t error = target - (render_us_ + dt);
  if (std::llabs(error) > settings_.snap_us) {
    render_us_ = std::max(render_us_, target);
    return;
  }
  const double steer =
      std::clamp(static_cast<double>(error) / static_cast<double>(settings_.steer_horizon_us),
                 -settings_.max_rate_change, settings_.max_rate_change);
  render_us_ += static_cast<int64_t>(std::llround(static_cast<double>(dt) * (1.0 + steer)));
}

}  // namespace posecast::client
