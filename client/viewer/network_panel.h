#pragma once
// NetworkPanel: what a network pose source shows in the debug overlay: per-frame histories of
// the client's measurements (client::ClientStats) and one line each for control and replay.

#include <string>

#include "time_history.h"

namespace posecast::viewer {

struct NetworkPanel {
  TimeHistory kbit_in;       // received, wire kbit/s
  TimeHistory rtt_ms;
  TimeHistory loss_percent;  // snapshots lost over the last 2 s
  TimeHistory jitter_ms;     // p95 arrival spread
  TimeHistory delay_ms;      // interpolation delay: newest server time - render time
  TimeHistory buffer_depth;  // buffered snapshot ticks after the render time
  TimeHistory decode_ms;     // NetClient::update (receive, decode, interpolate) per frame
  std::string control;       // "entity 3 (run, 1.25x): keys 1-4, -/=, Tab" or "owns no entity"
  std::string replay;        // "replay tick 812 of 0..3599, 1x" or empty (live)
  std::string last_action;   // what the last key did, or why not
};

}  // namespace posecast::viewer
