#pragma once
// Command line of posecast-soak.

#include <cstdint>
#include <span>
#include <string>

#include "posecast/result.h"

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
  bool help = false;
};

// Parses argv (without the program name). Errors name the flag and the reason.
Result<SoakOptions> parse_soak_options(std::span<const std::string> args);

const char* soak_usage();

}  // namespace posecast::soak
