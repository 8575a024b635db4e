#pragma once
// Replayer: re-simulates a recording on a fresh World, bit-exactly (docs/recording-format.md,
// "Replay"). It loads the models the header names (through a caller's loader, checked by
// content hash), restores the first checkpoint, and before each tick resubmits the commands
// the recording holds for that tick, with their submitters, in apply order: the World then
// applies them in the same order as live, so every tick's tick check (and world hash, when
// recorded) must match the recorded one.
//
// Seek: to any tick by restoring the last checkpoint at or before it and re-simulating
// forward, so a seek costs at most one checkpoint interval of ticks whatever the recording's
// length (plus a binary search over the checkpoints).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/replay/recording.h"
#include "posecast/result.h"
#include "posecast/sim/world.h"

namespace posecast::replay {

// Loads the model a recording names by its recorded source string (a path or "gen-rig:N").
// The CLI resolves relative paths against the recording's folder and --assets.
using ModelLoader = std::function<Result<std::shared_ptr<const Model>>(const std::string& source)>;

struct ReplayOptions {
  unsigned threads = 1;  // evaluation threads; results do not depend on it
  // Test seam (sim/evaluation_fault.h): the replay's World diverges as told (VerifyFault tests).
  const sim::EvaluationFault* fault = nullptr;
};

// What one replayed tick gave. A tick matches when its tick check (state and palette sums,
// sim/tick_check.h) equals the recorded one and, when the recording holds a world hash (its
// World hashed every palette), the world hashes are equal too.
struct ReplayStep {
  uint64_t tick = 0;
  uint64_t world_hash = 0;     // this replay's
  uint64_t recorded_hash = 0;  // the recording's; 0: none recorded
  bool state_matches = true;     // the state sums
  bool palettes_match = true;    // the palette sums of the tick's checked share
  // The entity whose hash differs, when the sums say that exactly one does.
  std::optional<sim::EntityId> state_entity;
  std::optional<sim::EntityId> palette_entity;
  bool world_hash_matches() const { return recorded_hash == 0 || world_hash == recorded_hash; }
  bool matches() const { return world_hash_matches() && state_matches && palettes_match; }
};

class Replayer {
 public:
  // Errors: a model the loader cannot load, an asset hash mismatch ("models[0] 'Fox.glb':
  // content hash 1234... differs from the recorded abcd...: not the asset the session used"), a
  // model the World refuses, a first checkpoint that does not restore.
  static Result<std::unique_ptr<Replayer>> create(std::shared_ptr<const Recording> recording,
                                                  const ModelLoader& loader, ReplayOptions options = {});

  const Recording& recording() const { return *recording_; }
  const std::vector<std::shared_ptr<const Model>>& models() const { return models_; }
  sim::World& world() { return *world_; }
  const sim::World& world() const { return *world_; }

  // The tick the next step() runs.
  uint64_t next_tick() const { return world_->tick_index(); }
  bool at_end() const { return next_tick() >= recording_->end_tick(); }

  // Positions the replay so that the next step() runs `tick` (first_tick() <= tick <=
  // end_tick()). Moving forward within the current checkpoint interval just steps; otherwise
  // it restores the last checkpoint at or before `tick` and steps forward. With `mismatched`
  // given, every tick stepped over is evaluated and verified, and the first mismatch among them
  // is returned in `first_mismatch` (when given). Without it, the ticks stepped over are only
  // fast-forwarded (World::fast_forward_tick: commands and clip times, no poses), except the
  // last one, which is a full tick: the World ends in exactly the same state, palettes
  // included, at a fraction of the cost (a seek is then dominated by the restore).
  Status seek(uint64_t tick, ReplayStep* first_mismatch = nullptr, bool* mismatched = nullptr);

  // Runs the next recorded tick. Precondition: !at_end().
  ReplayStep step();

  // A new World with this recording's models, restored to the checkpoint (for diagnosis).
  Result<std::unique_ptr<sim::World>> world_at_checkpoint(const Checkpoint& checkpoint) const;

 private:
  Replayer() = default;
  Status restore(const Checkpoint& checkpoint);

  std::shared_ptr<const Recording> recording_;
  std::vector<std::shared_ptr<const Model>> models_;
  ReplayOptions options_;
  std::unique_ptr<sim::World> world_;
};

// Runs every recorded command of `tick` into `world` (submitters and order as recorded), then
// ticks it (World::tick, or World::fast_forward_tick when `evaluate` is false). Used by the
// Replayer and by diagnosis on a second world.
void replay_tick(const Recording& recording, uint64_t tick, sim::World& world, bool evaluate = true);

// The last tick before `tick` (at most sim::kPaletteCheckPeriod back, within the recording) at
// which `entity`'s palette was checked: its id slot's tick, or a tick with a command for it.
// nullopt when there is none (the recording starts after it).
std::optional<uint64_t> last_palette_check_before(const Recording& recording, sim::EntityId entity, uint64_t tick);

// The tick check's findings of a mismatching step, one line each: "tick 130: the state of
// entity 3 differs from the recording", "tick 137: the palette of entity 5 differs from the
// recording: caught at tick 137 (last matched 121)".
std::string describe_check_mismatch(const Recording& recording, const ReplayStep& step);

}  // namespace posecast::replay
