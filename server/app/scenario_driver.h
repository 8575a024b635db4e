#pragma once
// Drives a Server from a scenario file (docs/scenario-format.md): loads the scenario's models
// (paths relative to the file, or gen-rig:N), registers its masks, and before each tick submits
// the commands due at that tick. Spawned entities are placed on a grid (2 units apart, rows of
// 10 by id) since scenarios carry no positions.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "posecast/result.h"
#include "posecast/server/server.h"
#include "posecast/sim/scenario.h"

namespace posecast::server {

class ScenarioDriver {
 public:
  static Result<std::unique_ptr<ScenarioDriver>> load(const std::string& path);

  const std::vector<std::shared_ptr<const Model>>& models() const { return scenario_.models; }
  uint32_t tick_rate_hz() const { return scenario_.header.tick_rate_hz; }
  // Registers the scenario's masks in the server's world. Call once, before the first tick.
  Status register_masks(Server& server) const;
  // Submits every command whose tick is <= `tick` and not yet submitted. Animation commands
  // for an entity `skip(id)` names (one a client owns and drives) are left out; spawns and
  // despawns always go.
  void submit_due(uint64_t tick, Server& server, const std::function<bool(sim::EntityId)>& skip = {});
  std::size_t spawn_count() const;

 private:
  sim::Scenario scenario_;
  std::size_t next_ = 0;
};

}  // namespace posecast::server
