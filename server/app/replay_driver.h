#pragma once
// ReplayDriver: `posecast-server --replay FILE` (docs/server.md, "Serving a recording").
//
// The Server's own World is the replay world. Before every server tick (start_loop's hook)
// the driver puts that World at the boundary of the recording tick to show, R, and submits
// the commands the recording holds for R with their recorded submitters; the Server's tick()
// then evaluates R exactly as the recorded session did, quantises it and sends it. Moving the
// World costs, per case:
//   playing at speed 1   the World is already at R's boundary: nothing
//   speed s > 1          the s-1 ticks before R run first (replay::replay_tick), then R
//   paused, speed < 1    R again: a World snapshot taken at R's boundary is restored
//   seek, step back      the last checkpoint at or before R is restored and the ticks up to R
//                        re-simulated (at most one checkpoint interval; the time is logged)
// The Server's session tick goes on by one per tick whatever the World did (Server::tick), so
// viewers get an ordinary increasing stream of snapshots while the replay position moves
// freely; SessionStatus carries the position (replay_first/last_tick, replay_tick, speed).
//
// Bit-exactness is checked as it runs: every recording tick the World evaluates (shown or
// stepped over) is hashed as the Recorder hashes it and compared with the recorded world hash;
// mismatches are counted (stats().divergences) and logged.
//
// Threads: everything runs on the server's tick thread (the control callback included).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/protocol/messages.h"
#include "posecast/replay/recording.h"
#include "posecast/result.h"
#include "posecast/server/server.h"

namespace posecast::server {

// Speeds a viewer may set (16.16): other positive values are clamped into this range.
inline constexpr int32_t kMinServedReplaySpeedQ16 = 65536 / 4;  // 0.25x
inline constexpr int32_t kMaxServedReplaySpeedQ16 = 8 * 65536;  // 8x

struct ReplayDriverStats {
  uint64_t ticks_shown = 0;       // server ticks that evaluated a recording tick
  uint64_t ticks_verified = 0;    // recording-tick evaluations whose world hash was compared
  uint64_t divergences = 0;       // of which differed from the recording
  uint64_t first_divergent_tick = UINT64_MAX;
  uint64_t ticks_stepped_over = 0;  // evaluated and verified, not shown (speed > 1, steps)
  // Stepped over by a seek: commands applied and clip times advanced, no poses evaluated and
  // nothing verified (World::fast_forward_tick); the shown tick after the seek is evaluated
  // and verified as usual, and ends in the same World as evaluating every tick would.
  uint64_t ticks_fast_forwarded = 0;
  uint64_t holds_restored = 0;    // repeats of a tick (paused, speed < 1)
  uint64_t seeks = 0;             // seek controls carried out, and other checkpoint restores
  double last_seek_ms = 0;        // restore (if any) + re-simulation, wall time
  double max_seek_ms = 0;
  uint64_t controls_applied = 0;
  uint64_t controls_refused = 0;  // a speed <= 0, an unknown action
  uint64_t restore_failures = 0;  // a snapshot that did not restore (damage the reader missed)
};

class ReplayDriver {
 public:
  // Reads the recording at `path` and loads the models its header names, located by
  // rig::locate_model_source: "gen-rig:N" as is; a file of that name in `assets_dir` (empty:
  // none) first; a relative path beside the recording; any path as recorded. Errors name the file or
  // the model: unreadable or not a recording, no tick recorded, a model that does not load,
  // a model whose content hash differs from the recorded one (not the asset the session used).
  // A damaged tail is not an error: the valid prefix is served (stop_message() says why).
  static Result<std::unique_ptr<ReplayDriver>> load(const std::string& path, const std::string& assets_dir = {});

  const replay::Recording& recording() const { return *recording_; }
  // The models to create the Server with, in order (model id = index).
  const std::vector<std::shared_ptr<const Model>>& models() const { return models_; }
  uint32_t tick_rate_hz() const { return recording_->header.tick_rate_hz; }
  uint64_t first_tick() const { return recording_->first_tick(); }
  uint64_t last_tick() const { return recording_->end_tick() - 1; }

  // Restores the recording's first checkpoint into server.world() (the Server must have been
  // created with models() and tick_rate_hz()), takes the server's replay controls and
  // publishes the replay status. Once, before the first tick. `server` must outlive the driver's use.
  Status attach(Server& server);

  // Before every server tick, on the tick thread: verifies the tick the server just ran,
  // advances the position by the speed, and puts the World at the boundary of the tick to
  // show with its commands queued.
  void before_tick();
  // After the last server tick: verifies it.
  void finish();

  // A viewer's control (attach() routes the server's callback here). Pause holds the next
  // tick; resume at the end of the recording restarts from its first tick; step pauses and
  // advances `ticks` (1 when 0); seeks clamp to the recording's ticks; speeds clamp to
  // 0.25x..8x, and a speed <= 0 is refused (counted).
  void apply(const protocol::ReplayControl& control);

  uint64_t shown_tick() const { return shown_; }  // the recording tick the coming/last server tick evaluates
  bool paused() const { return paused_; }
  int32_t speed_q16() const { return speed_q16_; }
  const ReplayDriverStats& stats() const { return stats_; }
  std::string summary() const;  // one line for logs

 private:
  ReplayDriver() = default;
  // Runs recording tick `tick` on the World (commands, tick) and verifies its hash.
  // Runs recording tick `tick` on the World without showing it: evaluated and verified, or
  // with `evaluate` false only fast-forwarded (a seek's intermediate ticks).
  void step_over(uint64_t tick, bool evaluate = true);
  void verify(uint64_t tick);
  // Puts the World at the boundary of `tick`; `repeat`: the next server tick shows it again.
  void position_world(uint64_t tick, bool repeat);
  bool restore(std::span<const uint8_t> bytes, const std::string& what);
  void publish_status();

  std::string path_;
  std::shared_ptr<const replay::Recording> recording_;
  std::vector<std::shared_ptr<const Model>> models_;
  Server* server_ = nullptr;
  sim::World* world_ = nullptr;

  uint64_t position_q16_ = 0;  // recording tick << 16 | fraction: where the next server tick shows
  int32_t speed_q16_ = 65536;
  bool paused_ = false;
  uint64_t shown_ = 0;
  bool verify_pending_ = false;  // the server's last tick evaluated shown_: verify it
  bool seek_requested_ = false;  // a seek control since the last before_tick: time it
  uint64_t hold_tick_ = UINT64_MAX;  // the boundary hold_bytes_ holds
  std::vector<uint8_t> hold_bytes_;
  ReplayDriverStats stats_;
};

}  // namespace posecast::server
