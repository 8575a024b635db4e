#pragma once
// The overlay's prediction counters from a client's statistics, where they exist: a
// ClientStats with the prediction fields (predicted_frames, prediction_corrections,
// prediction_confirmed: the Predictor's PredictionStats, docs/client.md) fills the section; one
// without them leaves it unset and the overlay shows no prediction section (no invented
// numbers). A template so that the check happens at compile time against whichever ClientStats
// the viewer is built with.

#include <optional>

#include "network_panel.h"

namespace posecast::viewer {

template <typename Stats>
std::optional<PredictionPanel> prediction_panel([[maybe_unused]] const Stats& stats) {
  if constexpr (requires(const Stats& s) {
                  s.predicted_frames;
                  s.prediction_corrections;
                  s.prediction_confirmed;
                }) {
    return PredictionPanel{static_cast<uint64_t>(stats.predicted_frames),
                           static_cast<uint64_t>(stats.prediction_corrections),
                           static_cast<uint64_t>(stats.prediction_confirmed)};
  } else {
    return std::nullopt;
  }
}

}  // namespace posecast::viewer
