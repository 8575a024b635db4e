#pragma once
// posecast-server's fleet side from its configuration (docs/fleet.md): which of the metrics
// listener and the Agones lifecycle run, and their wiring to the server.

#include <memory>

#include "fleet_service.h"
#include "posecast/server/server.h"
#include "posecast/server/server_config.h"

namespace posecast::server {

// The fleet options `config` asks for: --metrics, and Agones when --agones says so or, with
// --agones unset, when `agones_env` (AGONES_SDK_HTTP_PORT's value; null: unset) is given.
// nullopt: neither. Error: a port in `agones_env` that is not one, --wait-allocation without Agones.
Result<std::optional<fleet::FleetOptions>> fleet_options(const ServerConfig& config, const char* agones_env);

// Starts the fleet service for `options` on `server` (null when `options` is nullopt);
// `recording`: --record is on (its counters are exported). With --wait-allocation, new clients
// are refused until the GameServer is Allocated. Error: the listener cannot bind (exit 1).
Result<std::unique_ptr<fleet::FleetService>> start_fleet(const ServerConfig& config,
                                                         const std::optional<fleet::FleetOptions>& options,
                                                         Server& server, bool recording);

}  // namespace posecast::server
