#pragma once
// The periodic metrics line of posecast-server (docs/server.md, "Metrics").

#include <string>

#include "posecast/server/server_types.h"

namespace posecast::server {

// "tick p50 0.42 ms p99 1.10 ms max 2.0 ms | clients 3 | entities 24 | out 412.5 kbit/s
//  (1.2 MB total) | in 12.0 kbit/s | drops 5 (malformed 3, bad_challenge 2)".
// `previous` is the metrics of the previous line (for rates over `interval_s`).
std::string metrics_line(const ServerMetrics& now, const ServerMetrics& previous, double interval_s);

}  // namespace posecast::server
