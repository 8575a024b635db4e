// posecast-server: runs the animation server until SIGINT/SIGTERM (or --duration).
// Exit codes (docs/server.md): 0 clean, 1 cannot record or start the fleet service, 2 bad command
// line, environment or config file, or models/scenario/recording that cannot be loaded,
// 3 start (socket), 4 runtime failure.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "command_line.h"
#include "fleet_setup.h"
#include "metrics_line.h"
#include "ownership_granter.h"
#include "posecast/replay/recorder.h"
#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"
#include "posecast/server/server_config.h"
#include "replay_driver.h"
#include "scenario_driver.h"
#include "server_command_line.h"

namespace {

int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

using namespace posecast;
using namespace posecast::server;

// What drives the World and which models the server serves: a recording (--replay), a
// scenario (--scenario), or the --models list.
struct Drivers {
  std::unique_ptr<ScenarioDriver> scenario;
  std::unique_ptr<ReplayDriver> replay;  // --replay: the recording drives the World
  std::vector<std::shared_ptr<const Model>> models;
};

// Loads the drivers and models named by `config`, adjusting its rates to theirs. An error
// message (exit code 2) on failure.
Result<Drivers> load_drivers(ServerConfig& config) {
  Drivers out;
  if (!config.replay.empty()) {
    Result<std::unique_ptr<ReplayDriver>> loaded = ReplayDriver::load(config.replay, config.assets);
    if (!loaded) return loaded.error();
    out.replay = std::move(loaded).value();
    out.models = out.replay->models();
    if (config.models_given) spdlog::warn("--replay given: the recording's models replace --models");
    config.server.tick_rate_hz = out.replay->tick_rate_hz();
    config.server.send_rate_hz = std::min(config.server.send_rate_hz, config.server.tick_rate_hz);
  } else if (!config.scenario.empty()) {
    Result<std::unique_ptr<ScenarioDriver>> loaded = ScenarioDriver::load(config.scenario);
    if (!loaded) return loaded.error();
    out.scenario = std::move(loaded).value();
    out.models = out.scenario->models();
    if (config.models_given) spdlog::warn("--scenario given: its models replace --models");
    if (out.scenario->tick_rate_hz() != config.server.tick_rate_hz) {
      spdlog::info("tick rate {} Hz from the scenario", out.scenario->tick_rate_hz());
      config.server.tick_rate_hz = out.scenario->tick_rate_hz();
      config.server.send_rate_hz = std::min(config.server.send_rate_hz, config.server.tick_rate_hz);
    }
  } else {
    for (const std::string& source : config.models) {
      Result<Model> model = rig::load_model_source(source);
      if (!model) return Error{"model '" + source + "': " + model.error().message};
      out.models.push_back(std::make_shared<const Model>(std::move(model).value()));
    }
  }
  return out;
}

// --record: after every World tick the recorder logs the tick's applied commands and world
// hash (docs/recording-format.md). Null without --record.
Result<std::unique_ptr<replay::Recorder>> open_recorder(const ServerConfig& config, Server& server,
                                                        const std::vector<std::shared_ptr<const Model>>& models) {
  if (config.record.empty()) return std::unique_ptr<replay::Recorder>();
  spdlog::info("recording to {}", config.record);
  std::vector<std::string> sources;
  for (const auto& model : models) {
    const bool generated = rig::is_generated_rig_source(model->source);
    sources.push_back(generated ? model->source : std::filesystem::absolute(model->source).lexically_normal().string());
  }
  replay::RecorderConfig record_config;
  record_config.producer = "posecast-server";
  record_config.config = "listen=" + net::to_string(server.local_endpoint()) +
                         "\ntick_rate=" + std::to_string(config.server.tick_rate_hz) +
                         "\nsend_rate=" + std::to_string(config.server.send_rate_hz) +
                         "\nthreads=" + std::to_string(config.server.threads) +
                         (config.scenario.empty() ? std::string() : "\nscenario=" + config.scenario) + "\n";
  return replay::Recorder::create(config.record, server.world(), sources, record_config);
}

// The scenario's masks, or the replay driver's hold on the server.
Status attach_drivers(const ServerConfig& config, Server& server, Drivers& drivers) {
  if (drivers.scenario) {
    if (Status s = drivers.scenario->register_masks(server); !s) return Error{config.scenario + ": " + s.error().message};
  }
  if (drivers.replay) return drivers.replay->attach(server);
  return {};
}

void log_startup(const ServerConfig& config, const Server& server, const Drivers& drivers) {
  spdlog::info("posecast-server on {} | {} Hz ticks, {} Hz snapshots | {} model(s) | max {} clients{}",
               net::to_string(server.local_endpoint()), config.server.tick_rate_hz,
               config.server.send_rate_hz, drivers.models.size(), config.server.max_clients,
               drivers.scenario ? " | scenario " + config.scenario
                                : drivers.replay ? " | replay " + config.replay : std::string());
  if (const auto& sim = config.server.simulator) {
    spdlog::info("simulated link, each direction: latency {} ms, jitter +-{} ms, loss {} %",
                 static_cast<double>(sim->outbound.latency_us) / 1000.0,
                 static_cast<double>(sim->outbound.jitter_us) / 1000.0,
                 sim->outbound.loss_percent);
  }
  // A parseable line for scripts and tests that start the server on port 0.
  std::printf("listening %s\n", net::to_string(server.local_endpoint()).c_str());
  std::fflush(stdout);
}

// Runs the server's loop on `io` until --duration, or a signal and the drain after it, with
// the metrics line every --metrics-interval. `before_tick` runs on the tick thread before each
// tick. A first SIGINT/SIGTERM drains (docs/fleet.md): new clients are refused and /readyz
// says so; connected clients are served until they have all left or --drain-grace has passed,
// then shutdown() tells them ServerShutdown. A second signal, or a grace of 0, ends it at once.
void run_loop(asio::io_context& io, const ServerConfig& config, Server& server, const Drivers& drivers,
              fleet::FleetService* fleet_service, std::function<void(uint64_t)> before_tick) {
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer metrics_timer(io);
  asio::steady_timer duration_timer(io);
  asio::steady_timer drain_timer(io);
  bool stopping = false;
  bool draining = false;
  auto stop = [&](const std::string& why) {
    if (stopping) return;
    stopping = true;
    spdlog::info("shutting down ({})", why);
    server.shutdown(steady_us());
    signals.cancel();
    metrics_timer.cancel();
    duration_timer.cancel();
    drain_timer.cancel();
  };
  const auto drain_end = [&] {
    return std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<int64_t>(config.drain_grace_s * 1e6));
  };
  std::chrono::steady_clock::time_point drain_deadline;
  std::function<void()> check_drain = [&] {
    if (stopping) return;
    if (server.metrics().clients == 0) return stop("drained: every client has left");
    if (std::chrono::steady_clock::now() >= drain_deadline) return stop("drain grace period over");
    drain_timer.expires_after(std::chrono::milliseconds(100));
    drain_timer.async_wait([&](const std::error_code& error) {
      if (!error) check_drain();
    });
  };
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const std::error_code& error, int signal) {
      if (error || stopping) return;
      const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
      if (draining || config.drain_grace_s <= 0) return stop(std::string(name) + (draining ? " while draining" : ""));
      draining = true;
      spdlog::info("draining ({}): new clients refused; {} connected, served for up to {} s", name,
                   server.metrics().clients, config.drain_grace_s);
      server.refuse_new_clients(protocol::DisconnectReason::kServerShutdown, "server draining");
      if (fleet_service != nullptr) fleet_service->mark_draining();
      drain_deadline = drain_end();
      check_drain();
      if (!stopping) wait_signal();  // a second signal ends the drain at once
    });
  };
  wait_signal();
  if (config.duration_s > 0) {
    duration_timer.expires_after(std::chrono::microseconds(static_cast<int64_t>(config.duration_s * 1e6)));
    duration_timer.async_wait([&](const std::error_code& error) {
      if (!error) stop("--duration reached");
    });
  }
  ServerMetrics previous;
  std::function<void()> arm_metrics = [&] {
    if (config.metrics_interval_s <= 0) return;
    metrics_timer.expires_after(std::chrono::microseconds(static_cast<int64_t>(config.metrics_interval_s * 1e6)));
    metrics_timer.async_wait([&](const std::error_code& error) {
      // A completion already queued when stop() cancelled the timer arrives without an error;
      // re-arming then would keep io.run() alive forever.
      if (error || stopping) return;
      const ServerMetrics now = server.take_interval_metrics();
      spdlog::info("metrics: {}", metrics_line(now, previous, config.metrics_interval_s));
      if (drivers.replay) spdlog::info("replay: {}", drivers.replay->summary());
      previous = now;
      arm_metrics();
    });
  };
  arm_metrics();
  server.start_loop(std::move(before_tick));
  io.run();
}

void publish_recording(const replay::RecorderStats& stats, fleet::RecordingCounters& out) {
  out.ticks.store(stats.ticks, std::memory_order_relaxed);
  out.bytes.store(stats.bytes, std::memory_order_relaxed);
  out.flushes.store(stats.flushes, std::memory_order_relaxed);
}

void log_final(const ServerConfig& config, Server& server, const Drivers& drivers, replay::Recorder* recorder) {
  if (drivers.replay) {
    drivers.replay->finish();
    spdlog::info("replay: {}", drivers.replay->summary());
  }
  if (recorder != nullptr) {
    if (Status s = recorder->close(); !s) spdlog::error("recording: {}", s.error().message);
    spdlog::info("recorded {} ticks to {}", recorder->stats().ticks, config.record);
  }
  const sim::WorldStats& world_stats = server.world().stats();
  if (world_stats.commands_rejected > 0) {
    spdlog::warn("world: {} commands rejected (last: {})", world_stats.commands_rejected, world_stats.last_rejection);
  }
  const ServerMetrics final_metrics = server.take_interval_metrics();
  spdlog::info("final: {}", metrics_line(final_metrics, ServerMetrics{}, 1.0));
}

int run(const std::vector<std::string>& args) {
  Result<ServerConfig> parsed = parse_server_config(args);
  if (!parsed) return cli::print_usage_error(kServerProgram, parsed.error().message);
  ServerConfig config = std::move(parsed).value();
  if (config.help) {
    std::fputs(server_usage().c_str(), stdout);
    return 0;
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  Result<std::optional<fleet::FleetOptions>> fleet_wanted = fleet_options(config, std::getenv("AGONES_SDK_HTTP_PORT"));
  if (!fleet_wanted) return cli::print_usage_error(kServerProgram, fleet_wanted.error().message);
  Result<Drivers> loaded = load_drivers(config);
  if (!loaded) {
    spdlog::critical("{}", loaded.error().message);
    return 2;
  }
  Drivers drivers = std::move(loaded).value();

  // A recording's ticks are verified by tick checks (state hashes and a rotating share of the
  // palette hashes): recording and serving a recording (which checks them) need the World's
  // palettes and its tick checks, computed in the World's parallel pass; a live server
  // streams local poses only.
  config.server.world_palettes = !config.record.empty() || drivers.replay != nullptr;
  config.server.tick_checks = config.server.world_palettes;
  asio::io_context io;
  Result<std::unique_ptr<Server>> created = Server::create(io, config.server, drivers.models);
  if (!created) {
    spdlog::critical("{}", created.error().message);
    return 3;
  }
  Server& server = *created.value();
  if (Status s = attach_drivers(config, server, drivers); !s) {
    spdlog::critical("{}", s.error().message);
    return 2;
  }
  Result<std::unique_ptr<replay::Recorder>> opened = open_recorder(config, server, drivers.models);
  if (!opened) {
    spdlog::critical("--record: {}", opened.error().message);
    return 1;
  }
  std::unique_ptr<replay::Recorder> recorder = std::move(opened).value();
  Result<std::unique_ptr<fleet::FleetService>> started = start_fleet(config, fleet_wanted.value(), server, recorder != nullptr);
  if (!started) {
    spdlog::critical("{}", started.error().message);
    return 1;
  }
  std::unique_ptr<fleet::FleetService> fleet_service = std::move(started).value();
  // start_loop's before_tick hook runs on the tick thread before tick N, when the World has
  // just finished tick N-1; the last tick is recorded after the loop ends.
  bool record_failed = false;
  auto record_ticks = [&]() {
    // Every tick the World has run since the last call (normally exactly one).
    if (!recorder || record_failed || server.world().tick_index() <= recorder->next_tick()) return;
    if (Status s = recorder->record_tick(server.world()); !s) {
      spdlog::error("recording stopped: {}", s.error().message);
      record_failed = true;
    }
    if (fleet_service) publish_recording(recorder->stats(), fleet_service->recording());
  };
  log_startup(config, server, drivers);
  if (fleet_service) fleet_service->mark_ready();
  OwnershipGranter granter(server, config.grant_per_client);
  if (config.grant_per_client > 0) {
    server.on_client_connected([&](const ClientInfo& client) { granter.on_connected(client); });
    server.on_client_disconnected(
        [&](const ClientInfo& client, protocol::DisconnectReason) { granter.on_disconnected(client); });
  }
  run_loop(io, config, server, drivers, fleet_service.get(), [&](uint64_t tick) {
    record_ticks();
    if (drivers.scenario) drivers.scenario->submit_due(tick, server, [&](sim::EntityId id) { return granter.owned(id); });
    if (drivers.replay) drivers.replay->before_tick();
  });
  record_ticks();
  log_final(config, server, drivers, recorder.get());
  // Agones hears Shutdown once the clients are told and the recording is closed.
  if (fleet_service) fleet_service->finish(std::chrono::steady_clock::now() + std::chrono::seconds(3));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "posecast-server: fatal: %s\n", e.what());
    return 4;
  } catch (...) {
    std::fprintf(stderr, "posecast-server: fatal error\n");
    return 4;
  }
}
