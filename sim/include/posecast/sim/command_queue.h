#pragma once
// A thread-safe queue of commands, drained at tick boundaries in a total order that does not
// depend on thread timing:
//
//   (tick, entity id, submitter id, submitter sequence)
//
// The sequence is assigned per submitter at submit() time, so commands of one submitter keep
// the order that submitter queued them in. Determinism therefore needs each submitter id to be
// used by one thread (or in one externally fixed order): a scenario file is submitter 0 with
// file order; a network session would be its own submitter. Commands for different entities
// never depend on each other's order except through ids they share (none; see world.h).

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "posecast/sim/commands.h"

namespace posecast::sim {

struct QueuedCommand {
  Command command;
  uint32_t submitter = 0;
  uint64_t sequence = 0;
};

// Strict weak order by (tick, entity, submitter, sequence); total for queued commands.
bool command_order(const QueuedCommand& a, const QueuedCommand& b);

class CommandQueue {
 public:
  // Thread-safe. Allocates (the queue grows); never blocks for long.
  void submit(uint32_t submitter, Command command);

  // Moves every command with tick <= `tick` to the end of `out`, sorted by command_order.
  // Commands for later ticks stay queued. Thread-safe.
  void take_due(uint64_t tick, std::vector<QueuedCommand>& out);

  std::size_t pending() const;
  // Drops every queued command (restore uses it; sequences continue).
  void clear();

 private:
  mutable std::mutex mutex_;
  std::vector<QueuedCommand> pending_;
  std::map<uint32_t, uint64_t> next_sequence_;  // ordered map: no hash-order dependence
};

}  // namespace posecast::sim
