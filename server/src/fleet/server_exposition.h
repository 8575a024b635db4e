#pragma once
// The posecast server's /metrics page: ServerMetrics, the connected clients, the recording and
// the fleet lifecycle in the Prometheus text format (names and units: docs/fleet.md).

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "posecast/server/server_types.h"

namespace posecast::server::fleet {

// The recorder's figures, written by the tick thread after each recorded tick (relaxed
// stores) and read by a scrape: the recorder itself belongs to the tick thread.
struct RecordingCounters {
  std::atomic<bool> active{false};
  std::atomic<uint64_t> ticks{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> flushes{0};
};

// What the fleet side adds to the server's own figures.
struct LifecycleFigures {
  bool ready = false;     // the server can take clients (readyz)
  bool draining = false;  // a signal came: new clients refused
  const std::map<std::string, uint64_t>* agones_calls = nullptr;  // "call result" -> count; null: no Agones
  std::string agones_state;                                       // GameServer status.state, "" unknown
};

std::string render_metrics(const ServerMetrics& metrics, const std::vector<ClientInfo>& clients,
                           const RecordingCounters& recording, const LifecycleFigures& lifecycle);

}  // namespace posecast::server::fleet
