#pragma once
// Command line of posecast-soak (the common style of cli/common/command_line.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace posecast::soak {

struct SoakOptions {
  uint32_t clients = 8;          // concurrent client slots
  double duration_s = 20.0;      // simulated seconds
  double loss_percent = 0.0;     // both directions of every client link
  double latency_ms = 0.0;       // one way
  double jitter_ms = 0.0;        // +- on the latency
  double reorder_percent = -1;   // default: 5 when latency or jitter is set, else 0
  uint64_t seed = 1;
  uint32_t entities = 20;
  std::string model = "gen-rig:24";
  uint32_t send_rate_hz = 20;
  uint32_t tick_rate_hz = 60;
  double frame_ms = 10.0;        // client update period
  bool churn = true;             // clients join, leave and time out; entities respawn
  bool json = false;             // one JSON object instead of text
};

// Parses argv (without the program name) into `options`. Returns the exit code when the
// program must not run: 0 after --help (printed), 2 after a bad command line (one line naming
// the flag and the reason, printed on stderr). std::nullopt: run.
std::optional<int> parse_soak_options(const std::vector<std::string>& args, SoakOptions& options);

}  // namespace posecast::soak
