#include "agones_lifecycle.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace posecast::server::fleet {

std::optional<uint16_t> agones_port_from_env(const char* value) {
  if (value == nullptr || *value == '\0') return kAgonesDefaultPort;
  unsigned port = 0;
  const char* end = value + std::strlen(value);
  const auto [stop, ec] = std::from_chars(value, end, port);
  if (ec != std::errc() || stop != end || port == 0 || port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

AgonesLifecycle::AgonesLifecycle(asio::io_context& io, AgonesOptions options, std::function<bool()> alive,
                                 std::function<void(const std::string&)> on_state)
    : io_(io),
      options_(options),
      alive_(std::move(alive)),
      on_state_(std::move(on_state)),
      period_timer_(io),
      retry_timer_(io) {}

void AgonesLifecycle::count(const std::string& call, bool ok) { ++calls_[call + (ok ? " ok" : " error")]; }

void AgonesLifecycle::post_until_accepted(const std::string& path, std::chrono::steady_clock::time_point deadline,
                                          std::chrono::milliseconds backoff, std::function<void(bool)> then) {
  http_request(io_, options_.sidecar, "POST", path, "{}", options_.request_timeout,
               [this, path, deadline, backoff, then](Result<Response> response) {
                 if (shutting_down_ && path != "/shutdown") return;  // a Ready still in flight: moot
                 const bool accepted = response.ok() && response->status / 100 == 2;
                 count(path.substr(1), accepted);
                 if (accepted) {
                   if (backoff > options_.backoff_first) spdlog::info("Agones: {} accepted", path);
                   then(true);
                   return;
                 }
                 const std::string why = response.ok() ? "HTTP " + std::to_string(response->status) + " " +
                                                             response->body.substr(0, 200)
                                                       : response.error().message;
                 if (std::chrono::steady_clock::now() + backoff > deadline) {
                   spdlog::warn("Agones: {} failed ({}); giving up", path, why);
                   then(false);
                   return;
                 }
                 // The first failure is worth a warning; the retries that follow at debug level.
                 if (backoff == options_.backoff_first) {
                   spdlog::warn("Agones: {} failed ({}); retrying with back-off up to {} ms", path, why,
                                options_.backoff_max.count());
                 } else {
                   spdlog::debug("Agones: {} failed ({}); retry in {} ms", path, why, backoff.count());
                 }
                 retry_timer_.expires_after(backoff);
                 retry_timer_.async_wait([this, path, deadline, backoff, then](const std::error_code& error) {
                   if (error) return;
                   post_until_accepted(path, deadline, std::min(backoff * 2, options_.backoff_max), then);
                 });
               });
}

void AgonesLifecycle::ready() {
  post_until_accepted("/ready", std::chrono::steady_clock::time_point::max(), options_.backoff_first,
                      [this](bool accepted) {
                        if (!accepted) return;
                        spdlog::info("Agones: Ready; Health every {} ms", options_.health_period.count());
                        periodic_on_ = true;
                        periodic();
                      });
}

// One period: a Health ping when alive, and a GameServer read; then the next period.
void AgonesLifecycle::periodic() {
  if (!periodic_on_) return;
  if (alive_()) {
    http_request(io_, options_.sidecar, "POST", "/health", "{}", options_.request_timeout,
                 [this](Result<Response> response) {
                   const bool ok = response.ok() && response->status / 100 == 2;
                   count("health", ok);
                   if (!ok && !health_failing_) {
                     spdlog::warn("Agones: /health failed ({}); still pinging every {} ms",
                                  response.ok() ? "HTTP " + std::to_string(response->status) : response.error().message,
                                  options_.health_period.count());
                   } else if (ok && health_failing_) {
                     spdlog::info("Agones: /health accepted again");
                   }
                   health_failing_ = !ok;
                 });
  } else if (!health_failing_) {
    spdlog::warn("Agones: tick loop not advancing; Health withheld");
    health_failing_ = true;
  }
  read_gameserver();
  period_timer_.expires_after(options_.health_period);
  period_timer_.async_wait([this](const std::error_code& error) {
    if (!error) periodic();
  });
}

void AgonesLifecycle::read_gameserver() {
  http_request(io_, options_.sidecar, "GET", "/gameserver", "", options_.request_timeout,
               [this](Result<Response> response) {
                 std::string state;
                 if (response.ok() && response->status / 100 == 2) {
                   const nlohmann::json document = nlohmann::json::parse(response->body, nullptr, false);
                   if (document.is_object() && document.contains("status") && document["status"].is_object()) {
                     const nlohmann::json& status = document["status"];
                     if (status.contains("state") && status["state"].is_string()) state = status["state"].get<std::string>();
                   }
                 }
                 count("gameserver", !state.empty());
                 if (state.empty() || state == state_) return;
                 spdlog::info("Agones: GameServer state {}", state);
                 state_ = state;
                 if (on_state_) on_state_(state_);
               });
}

void AgonesLifecycle::shutdown(std::chrono::steady_clock::time_point deadline, std::function<void()> done) {
  shutting_down_ = true;
  periodic_on_ = false;
  period_timer_.cancel();
  retry_timer_.cancel();
  post_until_accepted("/shutdown", deadline, options_.backoff_first, [done](bool accepted) {
    if (accepted) spdlog::info("Agones: Shutdown");
    done();
  });
}

}  // namespace posecast::server::fleet
