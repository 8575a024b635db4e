#include "frame_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace posecast::viewer {

FrameSummary summarise(std::vector<double> samples_us) {
  FrameSummary s;
  s.count = samples_us.size();
  if (samples_us.empty()) return s;
  std::sort(samples_us.begin(), samples_us.end());
  const std::size_t n = samples_us.size();
  s.median_us = n % 2 ? samples_us[n / 2] : (samples_us[n / 2 - 1] + samples_us[n / 2]) * 0.5;
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99_us = samples_us[std::min(n, std::max<std::size_t>(rank, 1)) - 1];
  s.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / static_cast<double>(n);
  s.min_us = samples_us.front();
  s.max_us = samples_us.back();
  return s;
}

std::string format_ms(const FrameSummary& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "median %.2f ms, p99 %.2f ms, mean %.2f ms, min %.2f ms, max %.2f ms",
                s.median_us / 1000.0, s.p99_us / 1000.0, s.mean_us / 1000.0, s.min_us / 1000.0,
                s.max_us / 1000.0);
  return buf;
}

}  // namespace posecast::viewer
