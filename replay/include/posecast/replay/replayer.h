#pragma once
// Replayer: re-simulates a recording on a fresh World, bit-exactly (docs/recording-format.md,
// "Replay"). It loads the models the header names (through a caller's loader, checked by
// content hash), restores the first checkpoint, and before each tick resubmits the commands
// the recording holds for that tick, with their submitters, in apply order: the World then
// applies them in the same order as live, so every tick's world hash must match the recorded
// one.
//
// Seek: to any tick by restoring the last checkpoint at or before it and re-simulating
// forward, so a seek costs at most one checkpoint interval of ticks whatever the recording's
// length (plus a binary search over the checkpoints).

#include <cstdint>
#include <functional>
#include <memory>
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
};

// What one replayed tick gave.
struct ReplayStep {
  uint64_t tick = 0;
  uint64_t world_hash = 0;     // this replay's
  uint64_t recorded_hash = 0;  // the recording's
  bool matches() const { return world_hash == recorded_hash; }
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

}  // namespace posecast::replay
