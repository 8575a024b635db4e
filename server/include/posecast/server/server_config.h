#pragma once
// Configuration of the posecast-server program: its settings, each given as text (a command-line
// flag, a POSECAST_* environment variable or a key of the JSON config file; the program's
// command line, server/app/server_command_line.h, decides which wins). docs/server.md lists
// every option.

#include <optional>
#include <string>
#include <vector>

#include "posecast/result.h"
#include "posecast/server/server_options.h"

namespace posecast::server {

struct ServerConfig {
  ServerOptions server;
  std::vector<std::string> models{"gen-rig:24"};  // paths or gen-rig:N; model id = index
  bool models_given = false;      // --models or "models" was set explicitly
  std::string log_level = "info"; // trace, debug, info, warn, error, critical, off
  std::string scenario;           // a scenario file (docs/scenario-format.md) driving entities
  std::string record;             // --record FILE: record the session (docs/recording-format.md)
  std::string replay;             // --replay FILE: serve a recording (not with scenario, record, grant)
  std::string assets;             // --assets DIR: with --replay, where to look for its model files first
  double duration_s = 0;          // > 0: exit after this long (tests, CI); 0: until a signal
  double metrics_interval_s = 10; // > 0: a metrics line this often; 0: none
  uint32_t grant_per_client = 0;  // entities granted to each connecting client (0..64)
  // Fleet operation (docs/fleet.md).
  std::optional<net::Endpoint> metrics_listen;  // --metrics: HTTP /metrics, /healthz, /readyz; unset: off
  // --agones: use the Agones SDK sidecar's REST port; unset: on when AGONES_SDK_HTTP_PORT is set.
  std::optional<bool> agones;
  double health_period_s = 2;     // Agones Health ping period, 0.1..60 s (Agones' default threshold is 5 s)
  // After SIGTERM/SIGINT: new clients refused, connected ones served at most this long (until
  // they have all left), then told ServerShutdown; 0..3600 s. A second signal ends it at once.
  double drain_grace_s = 10;
  bool wait_allocation = false;   // --wait-allocation: refuse clients until Agones says Allocated
  std::string config_file;
  bool help = false;
};

// Sets the setting `key` (a JSON key: "tick_rate", "models", ...) from `value`, its text
// ("60", "gen-rig:8,a.glb", "on"). Errors start with `where` (the flag, variable or file key
// the value came from) and say why: "--tick-rate: 0 is not in 1..1000".
Status apply_server_setting(const std::string& key, const std::string& where, const std::string& value,
                            ServerConfig& config);

// Parses a JSON config document into `config` (keys: models, listen, tick_rate, send_rate,
// max_clients, bandwidth_kbit, threads, log_level, scenario, duration, metrics_interval,
// client_timeout, recipes, spread_phases: booleans or "on"/"off"; grant, replay, assets;
// sim_latency_ms, sim_jitter_ms, sim_loss_percent: ServerOptions::simulator, both directions;
// metrics, agones, health_period, drain_grace, wait_allocation: fleet operation;
// hit_history_ms, hit_rate, hit_max_ray, hit_right: hit queries).
// Unknown keys are errors. `file_name` prefixes messages.
Status apply_config_json(const std::string& text, const std::string& file_name, ServerConfig& config);

// The checks across settings, once all are applied: --replay goes with none of --scenario,
// --record, --grant; --assets only with --replay; --wait-allocation not with Agones off; the
// send rate not above the tick rate.
Status check_server_config(const ServerConfig& config);

}  // namespace posecast::server
