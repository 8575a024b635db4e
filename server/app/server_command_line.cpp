#include "server_command_line.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

#include "command_line.h"

namespace posecast::server {
namespace {

// A flag, the setting (JSON key) it gives, and its help. A switch (`is_switch`) may be given
// alone, meaning on (`--agones`), or with `=on|off`.
struct Flag {
  const char* flag;
  const char* key;  // nullptr: --config
  const char* value_name;
  const char* help;
  bool is_switch = false;
};

constexpr Flag kFlags[] = {
    {"--models", "models", "LIST", "comma-separated model sources: paths or gen-rig:N (default gen-rig:24)"},
    {"--listen", "listen", "ADDR:PORT", "UDP address to bind (default 127.0.0.1:7777; port 0 = any)"},
    {"--tick-rate", "tick_rate", "HZ", "simulation ticks per second, 1..1000 (default 60)"},
    {"--send-rate", "send_rate", "HZ", "snapshots per second per client, 1..1000, at most the tick rate (default 20)"},
    {"--max-clients", "max_clients", "N", "connections accepted, 1..65535 (default 64)"},
    {"--bandwidth", "bandwidth_kbit", "KBIT", "budget per client in kbit/s incl. UDP/IP headers (default 0 = none)"},
    {"--threads", "threads", "N", "evaluation threads, 1..64 (default 2)"},
    {"--log-level", "log_level", "LEVEL", "trace|debug|info|warn|error|critical|off (default info)"},
    {"--scenario", "scenario", "FILE", "drive entities from a scenario file (its models replace --models)"},
    {"--duration", "duration", "SECONDS", "exit after this long (default 0: run until SIGINT/SIGTERM)"},
    {"--metrics-interval", "metrics_interval", "S", "seconds between metrics lines (default 10; 0 = none)"},
    {"--client-timeout", "client_timeout", "S",
     "drop a client after this many seconds without a datagram from it\n(0.1..3600, default 5)"},
    {"--recipes", "recipes", "on|off",
     "attach clip recipes so the codec predicts plain blends from the shared\nclips: ~4x fewer bytes, and "
     "clients evaluate them at the render time (default on)"},
    {"--spread-phases", "spread_phases", "on|off",
     "spread clients' send ticks over the send interval instead of sharing\nthem: lower peak tick time (default on)"},
    {"--grant", "grant", "N",
     "give each connecting client ownership of up to N (0..64) entities nobody\nowns (lowest ids first; released "
     "when it leaves), so a viewer can\ncommand them (default 0)"},
    {"--record", "record", "FILE",
     "record the session: commands, world hashes, checkpoints every 5 s\n(docs/recording-format.md; replay with "
     "`posecast replay FILE`)"},
    {"--replay", "replay", "FILE",
     "serve a recording to viewers like a live session; viewers may pause,\nresume, step, seek and set the speed; "
     "its models and tick rate replace\n--models and --tick-rate (not with --scenario, --record, --grant)"},
    {"--assets", "assets", "DIR", "with --replay: look for the recording's model files by name in DIR first"},
    {"--sim-latency", "sim_latency_ms", "MS", "simulate a worse link in the server itself, each direction: fixed delay"},
    {"--sim-jitter", "sim_jitter_ms", "MS", "... +- uniform jitter (reorders), ms (0..10000, default none)"},
    {"--sim-loss", "sim_loss_percent", "PCT", "... and loss in percent (0..100, default none; docs/server.md)"},
    {"--metrics", "metrics", "ADDR:PORT",
     "serve Prometheus /metrics, /healthz and /readyz over HTTP on this\naddress (default: off; port 0 = any; "
     "docs/fleet.md)"},
    {"--agones", "agones", "on|off",
     "report Ready, Health and Shutdown to the Agones SDK sidecar's REST\nport on localhost (AGONES_SDK_HTTP_PORT, "
     "default 9358); alone: on;\ndefault: on when AGONES_SDK_HTTP_PORT is set",
     true},
    {"--health-period", "health_period", "S", "seconds between Agones Health pings (0.1..60, default 2)"},
    {"--drain-grace", "drain_grace", "S",
     "on SIGTERM/SIGINT: refuse new clients, serve connected ones at most\nS seconds more (until all left), then "
     "disconnect them and exit\n(0..3600, default 10; a second signal ends it at once)"},
    {"--wait-allocation", "wait_allocation", "on|off",
     "refuse clients until the GameServer is Allocated (Agones); alone: on\n(default off)", true},
    {"--hit-history", "hit_history_ms", "MS",
     "how far back hit queries rewind: each entity's history, 0..10000 ms\n(default 1000; 0 = off, every query "
     "refused; docs/hit-queries.md)"},
    {"--hit-right", "hit_right", "none|owners|all",
     "which clients may fire hit queries: none, those owning an entity\n(--grant), or all (default none)"},
    {"--hit-rate", "hit_rate", "N", "hit queries a second one client may fire, 1..10000 (default 20)"},
    {"--hit-max-ray", "hit_max_ray", "UNITS", "longest hit-query ray accepted, 0.01..1000000 (default 1000)"},
    {"--config", nullptr, "FILE",
     "JSON file with the same settings, keyed by the flag's name with '_'\n(tick_rate, ...; bandwidth_kbit, "
     "sim_latency_ms, sim_jitter_ms,\nsim_loss_percent, hit_history_ms); the environment and flags win over it"},
};
constexpr std::size_t kFlagCount = sizeof kFlags / sizeof kFlags[0];

// --tick-rate: POSECAST_TICK_RATE.
std::string environment_name(const char* flag) {
  std::string name = "POSECAST_";
  for (const char* c = flag + 2; *c != '\0'; ++c) {
    name += *c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
  }
  return name;
}

// Declares every flag on `command_line`; the text of kFlags[i] goes to values[i].
void declare(cli::CommandLine& command_line, std::vector<std::string>& values) {
  CLI::App& app = command_line.app();
  app.footer(
      "Each option is also read from the environment variable POSECAST_<OPTION>\n"
      "(--tick-rate: POSECAST_TICK_RATE) and from the --config file; the command line wins over\n"
      "the environment, the environment over the file.\n"
      "Exit codes: 0 clean exit, 1 cannot record or start the fleet service, 2 bad command line,\n"
      "environment or config file, or a model, scenario or recording that cannot be loaded,\n"
      "3 cannot start the server (socket), 4 runtime failure.");
  values.assign(kFlagCount, std::string());
  for (std::size_t i = 0; i < kFlagCount; ++i) {
    const Flag& f = kFlags[i];
    CLI::Option* option = f.is_switch ? app.add_flag(std::string(f.flag) + "{on}", values[i], f.help)
                                      : app.add_option(f.flag, values[i], f.help);
    option->type_name(f.is_switch ? "[=on|off]" : f.value_name)->envname(environment_name(f.flag));
  }
}

// True when `flag` is among `args` (`--flag VALUE` or `--flag=VALUE`), not only in the
// environment: errors then name the flag, else the variable.
bool on_command_line(std::span<const std::string> args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return arg == flag || arg.rfind(flag + "=", 0) == 0;
  });
}

Status apply_config_file(const std::string& where, const std::string& path, ServerConfig& config) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{where + ": cannot read '" + path + "'"};
  std::stringstream text;
  text << file.rdbuf();
  config.config_file = path;
  return apply_config_json(text.str(), path, config);
}

}  // namespace

Result<ServerConfig> parse_server_config(std::span<const std::string> args) {
  cli::CommandLine command_line(kServerProgram, "");
  std::vector<std::string> values;
  declare(command_line, values);
  ServerConfig config;
  switch (command_line.parse_quietly(std::vector<std::string>(args.begin(), args.end()))) {
    case cli::CommandLine::Outcome::kHelp:
      config.help = true;
      return config;
    case cli::CommandLine::Outcome::kUsageError:
      return Error{command_line.error()};
    case cli::CommandLine::Outcome::kRun:
      break;
  }
  // The file first, then what the environment and the command line give (CLI11 reads a
  // variable only for an option the command line leaves out).
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < kFlagCount; ++i) {
      const Flag& f = kFlags[i];
      if ((f.key == nullptr) != (pass == 0) || command_line.app().get_option(f.flag)->count() == 0) continue;
      const std::string where = on_command_line(args, f.flag) ? f.flag : environment_name(f.flag);
      const Status applied = f.key == nullptr ? apply_config_file(where, values[i], config)
                                              : apply_server_setting(f.key, where, values[i], config);
      if (!applied) return applied.error();
    }
  }
  if (Status s = check_server_config(config); !s) return s.error();
  return config;
}

std::string server_usage() {
  cli::CommandLine command_line(kServerProgram, "The authoritative animation server (docs/server.md).");
  std::vector<std::string> values;
  declare(command_line, values);
  return command_line.help();
}

}  // namespace posecast::server
