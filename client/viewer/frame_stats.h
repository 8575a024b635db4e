#pragma once
// Frame-time statistics: samples in microseconds, summarised as median, p99, mean, min, max.

#include <cstdint>
#include <string>
#include <vector>

namespace posecast::viewer {

struct FrameSummary {
  std::size_t count = 0;
  double median_us = 0.0;
  double p99_us = 0.0;  // nearest-rank 99th percentile
  double mean_us = 0.0;
  double min_us = 0.0;
  double max_us = 0.0;
};

FrameSummary summarise(std::vector<double> samples_us);

// "median 12.34 ms, p99 15.67 ms, mean 12.50 ms, min 11.90 ms, max 16.02 ms"
std::string format_ms(const FrameSummary& summary);

}  // namespace posecast::viewer
