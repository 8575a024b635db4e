#include "soak_options.h"

#include <string>

#include "command_line.h"

namespace posecast::soak {

std::optional<int> parse_soak_options(const std::vector<std::string>& args, SoakOptions& o) {
  cli::CommandLine command_line(
      "posecast-soak",
      "Runs an in-process server and --clients churning clients on 127.0.0.1 for --duration simulated seconds and\n"
      "checks every palette the clients decode against the server's. Exit 1: an invariant was\n"
      "violated (listed); 2 also when the setup fails. Same seed, same churn: when clients join,\n"
      "leave and vanish follows from the seed alone. The sockets are real, though: a datagram\n"
      "the kernel delivers a read later than usual (a busy machine) shifts timing-dependent\n"
      "counts (palettes compared, bytes, delay) slightly between runs; the invariants hold.");
  CLI::App& app = command_line.app();
  app.add_option("--clients", o.clients, "concurrent client slots")->check(cli::integer_in(1, 1000));
  app.add_option("--duration", o.duration_s, "simulated seconds")->check(cli::number_in(0.1, 86400));
  app.add_option("--loss", o.loss_percent, "loss percent, both directions of every link")->check(cli::number_in(0, 100));
  app.add_option("--latency", o.latency_ms, "one-way latency, ms")->check(cli::number_in(0, 10000));
  app.add_option("--jitter", o.jitter_ms, "+- on the latency, ms")->check(cli::number_in(0, 10000));
  app.add_option("--reorder", o.reorder_percent, "reorder percent (default 5 with latency or jitter, else 0)")
      ->check(cli::number_in(0, 100))
      ->default_str("auto");
  app.add_option("--seed", o.seed, "the churn and network seed")->check(cli::integer_in(0, UINT64_MAX));
  app.add_option("--entities", o.entities, "server entities")->check(cli::integer_in(0, 100000));
  app.add_option("--model", o.model, "gen-rig:N or a .gltf/.glb file");
  app.add_option("--send-rate", o.send_rate_hz, "snapshots per second")->check(cli::integer_in(1, 1000));
  app.add_option("--tick-rate", o.tick_rate_hz, "server ticks per second")->check(cli::integer_in(1, 1000));
  app.add_option("--frame-ms", o.frame_ms, "client update period, ms")->check(cli::number_in(0.1, 1000));
  bool no_churn = false;
  app.add_flag("--no-churn", no_churn, "keep every client for the whole run");
  app.add_flag("--json", o.json, "one JSON object instead of text");
  const cli::CommandLine::Outcome outcome = command_line.parse(args);
  if (outcome != cli::CommandLine::Outcome::kRun) return cli::CommandLine::exit_code(outcome);
  o.churn = !no_churn;
  // The defaults printed by --help are the literal ones; the reorder default depends on others.
  if (app.count("--reorder") == 0) o.reorder_percent = (o.latency_ms > 0 || o.jitter_ms > 0) ? 5.0 : 0.0;
  if (o.send_rate_hz > o.tick_rate_hz) {
    return cli::print_usage_error(command_line.program(), "--send-rate: " + std::to_string(o.send_rate_hz) +
                                                              " is above the tick rate " + std::to_string(o.tick_rate_hz));
  }
  return std::nullopt;
}

}  // namespace posecast::soak
