#pragma once
// FleetService: what makes posecast-server a member of a fleet (docs/fleet.md). On a thread
// of its own (never the tick's): the HTTP listener (/metrics in the Prometheus text format,
// /healthz, /readyz) and the Agones SDK lifecycle (Ready, Health, GameServer state, Shutdown).
// It reads the server only through its thread-safe copies (Server::metrics(), clients()), so
// a scrape or a slow sidecar never holds up a tick.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include "agones_lifecycle.h"
#include "http_server.h"
#include "posecast/result.h"
#include "posecast/server/server.h"
#include "server_exposition.h"

namespace posecast::server::fleet {

struct FleetOptions {
  std::optional<net::Endpoint> http_listen;    // unset: no listener
  std::optional<AgonesOptions> agones;         // unset: no Agones
  HttpLimits http_limits;
  // The tick count not advancing for this long (once ticking) makes the server not alive:
  // /healthz answers 503 and Health pings stop.
  std::chrono::milliseconds stall_limit{5000};
};

class FleetService {
 public:
  // Binds the listener (when asked) and starts the thread. Error: "metrics: cannot listen on
  // ADDR: <reason>". `server` must outlive the service (destroy or finish() it first).
  static Result<std::unique_ptr<FleetService>> start(const FleetOptions& options, const Server& server);
  ~FleetService();  // finish() with a short deadline when not done yet
  FleetService(const FleetService&) = delete;
  FleetService& operator=(const FleetService&) = delete;

  std::optional<net::Endpoint> http_endpoint() const { return http_endpoint_; }
  // The recorder's figures (the tick thread stores them; docs in server_exposition.h).
  RecordingCounters& recording() { return recording_; }
  // Called on the fleet thread with the GameServer's state each time it changes (Agones only).
  // Set before mark_ready().
  void on_gameserver_state(std::function<void(const std::string&)> callback);

  // Any thread. The server can take clients: /readyz answers 200 and Agones hears Ready.
  void mark_ready();
  // Any thread. A signal came: /readyz answers 503 ("draining").
  void mark_draining();
  // Reports Shutdown to Agones (retried until `deadline` at most), closes the listener and
  // joins the thread. Blocks the caller until then. Once; later calls do nothing.
  void finish(std::chrono::steady_clock::time_point deadline);

 private:
  FleetService(const FleetOptions& options, const Server& server);
  Response metrics_page();
  Response health_page();
  Response ready_page();
  bool alive();

  FleetOptions options_;
  const Server& server_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<AgonesLifecycle> agones_;
  std::function<void(const std::string&)> state_callback_;
  std::optional<net::Endpoint> http_endpoint_;
  RecordingCounters recording_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
  // Liveness, on the fleet thread: the tick count last seen and when it last moved.
  uint64_t last_ticks_ = 0;
  std::chrono::steady_clock::time_point last_tick_change_;
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace posecast::server::fleet
