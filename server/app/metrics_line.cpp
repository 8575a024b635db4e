#include "metrics_line.h"

#include <cstdio>

namespace posecast::server {

std::string metrics_line(const ServerMetrics& m, const ServerMetrics& p, double interval_s) {
  const double seconds = interval_s > 0 ? interval_s : 1;
  const double out_kbit = static_cast<double>(m.bytes_out - p.bytes_out) * 8.0 / 1000.0 / seconds;
  const double in_kbit = static_cast<double>(m.bytes_in - p.bytes_in) * 8.0 / 1000.0 / seconds;
  char head[512];
  std::snprintf(head, sizeof head,
                "tick p50 %.2f ms p99 %.2f ms max %.2f ms | clients %u | entities %u | out %.1f kbit/s "
                "(%.2f MB total) | in %.1f kbit/s | snapshots %llu records %llu deferred %llu | commands %llu | drops %llu",
                m.tick_p50_ms, m.tick_p99_ms, m.tick_max_ms, m.clients, m.entities, out_kbit,
                static_cast<double>(m.bytes_out) / 1e6, in_kbit,
                static_cast<unsigned long long>(m.snapshots - p.snapshots),
                static_cast<unsigned long long>(m.records - p.records),
                static_cast<unsigned long long>(m.records_deferred - p.records_deferred),
                static_cast<unsigned long long>(m.commands_applied),
                static_cast<unsigned long long>(m.drops_total()));
  std::string line = head;
  std::string reasons;
  for (std::size_t r = 0; r < kDropReasonCount; ++r) {
    if (m.drops[r] == 0) continue;
    reasons += (reasons.empty() ? "" : ", ") + std::string(to_string(static_cast<DropReason>(r))) + " " +
               std::to_string(m.drops[r]);
  }
  if (!reasons.empty()) line += " (" + reasons + ")";
  return line;
}

}  // namespace posecast::server
