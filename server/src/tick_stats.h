#pragma once
// Tick durations of one metrics interval and their percentiles (nearest-rank). Reserved once;
// record() does not allocate until the reservation (an hour of 60 Hz ticks) is exceeded.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace posecast::server {

class TickStats {
 public:
  TickStats() { samples_us_.reserve(4096); }
  void record(int64_t duration_us) { samples_us_.push_back(duration_us); }
  std::size_t count() const { return samples_us_.size(); }
  // p in [0, 100]; 0 when empty. Sorts the samples (call at metrics time, not per tick).
  double percentile_ms(double p) {
    if (samples_us_.empty()) return 0;
    std::sort(samples_us_.begin(), samples_us_.end());
    const double rank = p / 100.0 * static_cast<double>(samples_us_.size());
    std::size_t index = static_cast<std::size_t>(rank);
    if (static_cast<double>(index) < rank) ++index;  // nearest rank: ceil
    index = std::clamp<std::size_t>(index, 1, samples_us_.size()) - 1;
    return static_cast<double>(samples_us_[index]) / 1000.0;
  }
  double max_ms() const {
    if (samples_us_.empty()) return 0;
    return static_cast<double>(*std::max_element(samples_us_.begin(), samples_us_.end())) / 1000.0;
  }
  void clear() { samples_us_.clear(); }

 private:
  std::vector<int64_t> samples_us_;
};

}  // namespace posecast::server
