#include "fleet_service.h"

#include <future>

#include <asio/post.hpp>
#include <spdlog/spdlog.h>

#include "prometheus_text.h"

namespace posecast::server::fleet {

FleetService::FleetService(const FleetOptions& options, const Server& server)
    : options_(options), server_(server), work_(asio::make_work_guard(io_)),
      last_tick_change_(std::chrono::steady_clock::now()) {}

Result<std::unique_ptr<FleetService>> FleetService::start(const FleetOptions& options, const Server& server) {
  std::unique_ptr<FleetService> service(new FleetService(options, server));
  FleetService& s = *service;
  if (options.http_listen) {
    Result<std::unique_ptr<HttpServer>> http = HttpServer::open(s.io_, *options.http_listen, options.http_limits);
    if (!http) return Error{"metrics: " + http.error().message};
    s.http_ = std::move(http).value();
    s.http_endpoint_ = s.http_->local_endpoint();
    s.http_->route("/metrics", [&s] { return s.metrics_page(); });
    s.http_->route("/healthz", [&s] { return s.health_page(); });
    s.http_->route("/readyz", [&s] { return s.ready_page(); });
  }
  if (options.agones) {
    s.agones_ = std::make_unique<AgonesLifecycle>(
        s.io_, *options.agones, [&s] { return s.alive(); },
        [&s](const std::string& state) {
          if (s.state_callback_) s.state_callback_(state);
        });
  }
  s.thread_ = std::thread([&s] { s.io_.run(); });
  return service;
}

FleetService::~FleetService() { finish(std::chrono::steady_clock::now() + std::chrono::seconds(1)); }

void FleetService::on_gameserver_state(std::function<void(const std::string&)> callback) {
  asio::post(io_, [this, callback = std::move(callback)]() mutable { state_callback_ = std::move(callback); });
}

void FleetService::mark_ready() {
  ready_ = true;
  asio::post(io_, [this] {
    if (agones_) agones_->ready();
  });
}

void FleetService::mark_draining() { draining_ = true; }

void FleetService::finish(std::chrono::steady_clock::time_point deadline) {
  if (finished_) return;
  finished_ = true;
  std::promise<void> shut;
  std::future<void> shut_done = shut.get_future();
  asio::post(io_, [this, deadline, &shut] {
    if (agones_) {
      agones_->shutdown(deadline, [&shut] { shut.set_value(); });
    } else {
      shut.set_value();
    }
  });
  // The Shutdown call gives up at the deadline by itself; the extra second covers a request
  // already in flight then.
  if (shut_done.wait_until(deadline + std::chrono::seconds(1)) != std::future_status::ready) {
    spdlog::warn("Agones: Shutdown not confirmed before the deadline");
  }
  asio::post(io_, [this] {
    if (http_) http_->close();
  });
  work_.reset();
  io_.stop();  // what is still queued (a Health in flight) is dropped with the io_context
  if (thread_.joinable()) thread_.join();
}

bool FleetService::alive() {
  const uint64_t ticks = server_.metrics().ticks;
  const auto now = std::chrono::steady_clock::now();
  if (ticks != last_ticks_ || !ready_) {
    last_ticks_ = ticks;
    last_tick_change_ = now;
  }
  return now - last_tick_change_ < options_.stall_limit;
}

Response FleetService::metrics_page() {
  LifecycleFigures lifecycle;
  lifecycle.ready = ready_;
  lifecycle.draining = draining_;
  if (agones_) {
    lifecycle.agones_calls = &agones_->calls();
    lifecycle.agones_state = agones_->state();
  }
  return Response{200, kPrometheusContentType,
                  render_metrics(server_.metrics(), server_.clients(), recording_, lifecycle), {}};
}

Response FleetService::health_page() {
  if (alive()) return Response{200, "text/plain; charset=utf-8", "ok\n", {}};
  return Response{503, "text/plain; charset=utf-8", "tick loop not advancing\n", {}};
}

Response FleetService::ready_page() {
  if (draining_) return Response{503, "text/plain; charset=utf-8", "draining\n", {}};
  if (!ready_) return Response{503, "text/plain; charset=utf-8", "starting\n", {}};
  return Response{200, "text/plain; charset=utf-8", "ready\n", {}};
}

}  // namespace posecast::server::fleet
