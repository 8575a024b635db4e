#pragma once
// Runs a parsed Scenario on a World, one tick at a time: the scenario's commands are submitted
// (submitter 0, file order) at their tick, then the world ticks. What a run produces -- the
// world hash of every tick and a run hash chaining them -- is what the determinism goldens
// compare (docs/determinism.md).

#include <cstdint>
#include <memory>

#include "posecast/result.h"
#include "posecast/sim/scenario.h"
#include "posecast/sim/world.h"

namespace posecast::sim {

class ScenarioRunner {
 public:
  // Registers the scenario's models and masks in a new World (tick rate from the scenario).
  // The scenario must outlive the runner.
  static Result<std::unique_ptr<ScenarioRunner>> create(const Scenario& scenario, unsigned threads);

  // Submits the commands due at world().tick_index() and runs one tick.
  void step();

  World& world() { return world_; }
  const World& world() const { return world_; }
  // Hash of (tick, world hash) over every tick run so far, in order: one value that changes
  // when any palette bit of any tick does.
  uint64_t run_hash() const;
  uint64_t ticks_run() const { return ticks_run_; }

  // Rewinds the command cursor to match a restored world's tick (commands before it count as
  // already applied). Used after world().restore().
  void seek_commands_to(uint64_t tick);

 private:
  ScenarioRunner(const Scenario& scenario, const WorldOptions& options);

  const Scenario& scenario_;
  World world_;
  std::size_t next_command_ = 0;
  uint64_t chain_state_;
  uint64_t ticks_run_ = 0;
};

}  // namespace posecast::sim
