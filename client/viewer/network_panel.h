#pragma once
// NetworkPanel: what a network pose source shows in the debug overlay: per-frame histories of
// the client's measurements (client::ClientStats) and one line each for control and replay.

#include <cstdint>
#include <optional>
#include <string>

#include "time_history.h"

namespace posecast::viewer {

// The hit queries this viewer fired (docs/viewer.md, "Hit queries").
struct HitPanel {
  // Answers by outcome (the client's counters: ClientStats hit_queries_fired, hit_answers_*).
  uint64_t fired = 0, hits = 0, misses = 0, refused = 0;
  // Hits and misses equal to the viewer's own query on the frame it fired at (the same entity,
  // joint and distance; client::PresentedHitQuery), and those that were not.
  uint64_t agreed = 0, disagreed = 0;
  std::string last;  // the last answer, one line
};

// The owned entities' client-side prediction: filled from ClientStats' prediction counters
// (prediction_panel.h) when the client library has them.
struct PredictionPanel {
  uint64_t predicted_frames = 0;  // owned entities presented from the prediction
  uint64_t corrections = 0;       // server states that differed from the prediction
  uint64_t confirmed = 0;         // server states equal to it
};

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
  HitPanel hits;
  // Unset while the client library keeps no prediction counters: the overlay omits the section.
  std::optional<PredictionPanel> prediction;
};

}  // namespace posecast::viewer
