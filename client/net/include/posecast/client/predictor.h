#pragma once
// Predictor: client-side prediction and reconciliation of the entities this client owns
// (docs/client.md, "Prediction"). Each owned entity runs in a small sim::World of its own, the
// server's animator itself, on the server's tick numbers:
//   - a command for it is stamped with the tick the client expects the server to apply it at
//     (stamp_tick: the server's time when it arrives, plus a margin) and applied to the local
//     World at that tick, translated by the server's own protocol::translate_client_command
//     against the state that tick starts from, as the server does;
//   - the World runs ahead to the present tick (the tick a command issued now is stamped with),
//     remembering a hash of the entity's state after each tick;
//   - an OwnerState (the server's exact state after tick S and the newest command sequence it
//     had processed) whose state hashes as the prediction at S confirms it; otherwise the state
//     is restored at S and ticks S+1.. are simulated again with the commands not yet processed
//     (a correction), and what is shown blends from the old prediction to the new over
//     `smoothing_us`, so the correction never jumps.
// Headless, no GL, no clock: time is passed in. One thread drives a predictor.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "posecast/client/asset_library.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/root_coding.h"
#include "posecast/sim/world.h"
#include "posecast/transform.h"

namespace posecast::client {

struct PredictionSettings {
  bool enabled = true;
  // Added to the estimated arrival time (round trip + jitter) when stamping a command, so that
  // it reaches the server before its tick runs.
  int64_t margin_us = 25'000;
  // A correction blends what is shown from the old prediction to the new over this long.
  int64_t smoothing_us = 120'000;
  // Predicted ticks remembered per entity (state hashes for comparison): an OwnerState older
  // than this (4.3 s at 60 Hz) cannot be compared and restores the state outright.
  std::size_t history_ticks = 256;
  // Ticks simulated per advance() at most (a prediction far behind catches up over frames).
  uint32_t max_ticks_per_advance = 120;
  // A command stamped further ahead of the predicted present than this is not predicted (the
  // server refuses it too: ServerOptions::command_lead_us).
  int64_t max_lead_us = 1'000'000;
};

// Counters since construction (docs/client.md, "Prediction").
struct PredictionStats {
  uint64_t predicted_frames = 0;        // owned entities presented from the prediction (per frame)
  uint64_t predicted_ticks = 0;         // ticks simulated ahead
  uint64_t resimulated_ticks = 0;       // ticks simulated again after a correction
  uint64_t prediction_corrections = 0;  // OwnerStates that differed from the prediction
  uint64_t prediction_confirmed = 0;    // OwnerStates equal to the prediction, bit for bit
  // Commands the shared translation refused (a bad value): not predicted; the server refuses
  // them alike. A command the server refuses for another reason (ownership, too early) or
  // overrides shows as a correction.
  uint64_t prediction_refused = 0;
  uint64_t owner_states = 0;            // OwnerStates taken
  uint64_t owner_states_dropped = 0;    // unowned entity, undecodable state, or out of order
  double last_correction_m = 0.0;       // root distance the last correction blended away
};

// An owned entity as the prediction shows it at the present tick. Spans valid until the next
// advance() or start().
struct PredictedView {
  uint32_t id = 0;
  uint16_t generation = 0;
  uint32_t tick = 0;                     // the predicted tick shown
  bool correcting = false;               // blending away a correction
  std::span<const Transform> locals;     // node count entries
  std::span<const glm::mat4> palette;    // joint count entries
  const glm::mat4* mesh_model = nullptr;
  protocol::RootValue root;
};

class Predictor {
 public:
  explicit Predictor(const PredictionSettings& settings = {});
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Starts a session: forgets every entity; the binding's models (server model ids, which the
  // local Worlds take in the same order so that states compare) must outlive the predictor.
  void start(uint32_t tick_rate_hz, const AssetBinding& binding);
  void clear();
  bool enabled() const { return settings_.enabled && started_; }

  // The tick a command issued now is stamped with: the first tick that starts after the
  // server time `server_arrival_us` the command is expected to reach the server at, never
  // before a tick an entity's prediction has already run.
  uint32_t stamp_tick(int64_t server_arrival_us) const;

  // A command sent to the server (sequence and apply_tick set) for an entity this client owns:
  // applied at its stamped tick at once (advance() need not run first).
  void on_command(const protocol::ClientCommand& command);

  // An OwnerState; `owned`: the session says this client owns the entity. Returns false (and
  // counts it dropped) for an unowned entity, an undecodable state, or one not newer than the
  // last taken for that entity.
  bool on_owner_state(const protocol::OwnerState& state, bool owned, int64_t now_us);

  // Simulates every entity up to the tick that starts after server time `present_us` (the
  // time a command sent now reaches the server: never backwards) and shows each between its
  // two newest ticks at `present_us` (a correction blended by client time `now_us`).
  void advance(int64_t present_us, int64_t now_us);

  // Drops entities the session no longer lets this client own.
  void retain_owned(const std::function<bool(uint32_t)>& owns);

  std::span<const PredictedView> views() const { return views_; }
  void count_presented(std::size_t frames) { stats_.predicted_frames += frames; }
  const PredictionStats& stats() const { return stats_; }
  const PredictionSettings& settings() const { return settings_; }

  // For checks: the hash of the entity's state bytes (sim::World::entity_snapshot) and its
  // palette hash after predicted tick `tick`; false when not remembered.
  bool predicted_hashes(uint32_t entity_id, uint32_t tick, uint64_t& state_hash, uint64_t& palette_hash) const;
  // The entity's local World (nullptr before its first OwnerState).
  const sim::World* world(uint32_t entity_id) const;

 private:
  struct Entity;
  Entity& entity(uint32_t id, uint16_t generation);
  // The first tick that starts after server time `server_us`.
  uint32_t tick_after(int64_t server_us) const;
  Entity* find(uint32_t id);
  const Entity* find(uint32_t id) const;
  // Translates the commands due at the World's next tick, runs it, remembers its hashes.
  void step(Entity& e);
  // Runs a started prediction up to and including `tick` when it has not got there yet (at
  // most max_ticks_per_advance ticks): an OwnerState for a tick beyond the predicted one (the
  // client did not update while they arrived, a long frame) is compared with the prediction of
  // that tick, not taken for a difference.
  void catch_up(Entity& e, uint32_t tick);
  // Restores the server's state after tick `tick` and simulates again up to `until`.
  bool reconcile(Entity& e, const protocol::OwnerState& state, uint32_t until);
  // What the entity shows at `now_us`: the newest tick's pose, minus a decaying correction.
  void update_shown(Entity& e, int64_t now_us);
  void rebuild_views();

  PredictionSettings settings_;
  uint32_t tick_rate_hz_ = 60;
  std::vector<std::shared_ptr<const Model>> models_;  // by server model id
  bool started_ = false;
  std::vector<std::unique_ptr<Entity>> entities_;
  std::vector<PredictedView> views_;
  uint32_t present_tick_ = 0;  // the newest advance() target
  PredictionStats stats_;
};

}  // namespace posecast::client
