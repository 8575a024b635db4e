#pragma once
// AgonesLifecycle: the game server's side of the Agones SDK over its REST port (the sidecar on
// localhost, AGONES_SDK_HTTP_PORT, default 9358): POST /ready once the server can take
// clients, POST /health every period while the server is alive, GET /gameserver every period
// (its status.state: "Ready", "Allocated", ...), POST /shutdown when it has drained. Bodies are
// "{}". The sidecar may start after the server, be slow or be gone: a failed Ready or Shutdown
// is logged and retried with doubling back-off; a failed Health is logged and tried again at
// the next period. Serving never waits for it. Runs on the io_context it is given (the fleet
// thread); every member is for that thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "http_client.h"
#include "posecast/net/endpoint.h"

namespace posecast::server::fleet {

// The SDK port named by AGONES_SDK_HTTP_PORT's value (unset or empty: 9358); nullopt when it
// is not a port number.
std::optional<uint16_t> agones_port_from_env(const char* value);
inline constexpr uint16_t kAgonesDefaultPort = 9358;

struct AgonesOptions {
  net::Endpoint sidecar{asio::ip::make_address_v4("127.0.0.1"), kAgonesDefaultPort};
  std::chrono::milliseconds health_period{2000};
  std::chrono::milliseconds request_timeout{2000};
  std::chrono::milliseconds backoff_first{250};  // after the first failure; doubles per failure
  std::chrono::milliseconds backoff_max{5000};
};

class AgonesLifecycle {
 public:
  // `alive()`: whether a Health ping is deserved now (the tick loop is advancing).
  // `on_state(state)`: the GameServer's status.state each time it changes.
  AgonesLifecycle(asio::io_context& io, AgonesOptions options, std::function<bool()> alive,
                  std::function<void(const std::string&)> on_state);

  // Reports Ready (retried until the sidecar accepts it), then starts the periodic Health and
  // GameServer reads. Once only.
  void ready();
  // Stops the periodic calls and reports Shutdown, retried until accepted or until `deadline`;
  // then calls `done` (once).
  void shutdown(std::chrono::steady_clock::time_point deadline, std::function<void()> done);

  // Calls made, by "call result" ("ready ok", "health error", ...); the last GameServer state
  // read ("" before the first).
  const std::map<std::string, uint64_t>& calls() const { return calls_; }
  const std::string& state() const { return state_; }

 private:
  // POSTs `path` until accepted (back-off) or `deadline`; then `then(accepted)`.
  void post_until_accepted(const std::string& path, std::chrono::steady_clock::time_point deadline,
                           std::chrono::milliseconds backoff, std::function<void(bool)> then);
  void periodic();
  void read_gameserver();
  void count(const std::string& call, bool ok);

  asio::io_context& io_;
  AgonesOptions options_;
  std::function<bool()> alive_;
  std::function<void(const std::string&)> on_state_;
  asio::steady_timer period_timer_;
  asio::steady_timer retry_timer_;
  std::map<std::string, uint64_t> calls_;
  std::string state_;
  bool periodic_on_ = false;
  bool shutting_down_ = false;
  bool health_failing_ = false;
};

}  // namespace posecast::server::fleet
