#include "fleet_setup.h"

#include <cstdio>

#include <spdlog/spdlog.h>

namespace posecast::server {

Result<std::optional<fleet::FleetOptions>> fleet_options(const ServerConfig& config, const char* agones_env) {
  const bool agones = config.agones.value_or(agones_env != nullptr);
  if (config.wait_allocation && !agones) {
    return Error{"--wait-allocation needs Agones (--agones, or AGONES_SDK_HTTP_PORT set)"};
  }
  if (!agones && !config.metrics_listen) return std::optional<fleet::FleetOptions>{};
  fleet::FleetOptions options;
  options.http_listen = config.metrics_listen;
  if (agones) {
    const std::optional<uint16_t> port = fleet::agones_port_from_env(agones_env);
    if (!port) return Error{std::string("AGONES_SDK_HTTP_PORT: '") + agones_env + "' is not a port number"};
    fleet::AgonesOptions agones_options;
    agones_options.sidecar.port(*port);
    agones_options.health_period = std::chrono::milliseconds(static_cast<int64_t>(config.health_period_s * 1000.0));
    options.agones = agones_options;
  }
  return std::optional<fleet::FleetOptions>(options);
}

Result<std::unique_ptr<fleet::FleetService>> start_fleet(const ServerConfig& config,
                                                         const std::optional<fleet::FleetOptions>& options,
                                                         Server& server, bool recording) {
  if (!options) return std::unique_ptr<fleet::FleetService>();
  Result<std::unique_ptr<fleet::FleetService>> started = fleet::FleetService::start(*options, server);
  if (!started) return started;
  fleet::FleetService& service = *started.value();
  service.recording().active = recording;
  if (const std::optional<net::Endpoint> http = service.http_endpoint()) {
    spdlog::info("metrics on http://{}/metrics (/healthz, /readyz)", net::to_string(*http));
    // A parseable line, like "listening", for scripts and tests that ask for port 0.
    std::printf("metrics %s\n", net::to_string(*http).c_str());
    std::fflush(stdout);
  }
  if (options->agones) {
    spdlog::info("Agones SDK at {}", net::to_string(options->agones->sidecar));
  }
  if (config.wait_allocation) {
    server.refuse_new_clients(protocol::DisconnectReason::kUnspecified, "game server not allocated yet");
    // On the fleet thread; the server's admission calls are thread-safe.
    service.on_gameserver_state([&server](const std::string& state) {
      if (state == "Allocated") {
        server.accept_new_clients();
      } else {
        server.refuse_new_clients(protocol::DisconnectReason::kUnspecified, "game server not allocated (" + state + ")");
      }
    });
  }
  return started;
}

}  // namespace posecast::server
