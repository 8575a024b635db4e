#include "posecast/server/server_config.h"

#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

namespace posecast::server {
namespace {

const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};

// "0.1" rather than "0.100000", as the command line's range validators write ranges.
std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Range errors read as the command line's do: "--tick-rate: 0 is not in 1..1000".
Error not_in(const std::string& where, const std::string& text, const std::string& lo, const std::string& hi) {
  return Error{where + ": " + text + " is not in " + lo + ".." + hi};
}

Result<uint64_t> parse_uint(const std::string& where, const std::string& text, uint64_t lo, uint64_t hi) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    return not_in(where, text, std::to_string(lo), std::to_string(hi));
  }
  return value;
}

// A decimal number in lo..hi.
Result<double> parse_real(const std::string& where, const std::string& text, double lo, double hi) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(value >= lo && value <= hi)) {
    return not_in(where, text, number_text(lo), number_text(hi));
  }
  return value;
}

// Seconds of --duration and --metrics-interval.
Result<double> parse_seconds(const std::string& where, const std::string& text) {
  return parse_real(where, text, 0.0, 1e7);
}

bool is_simulated_link_key(const std::string& key) {
  return key == "sim_latency_ms" || key == "sim_jitter_ms" || key == "sim_loss_percent";
}

std::vector<std::string> split_models(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Setters of one setting given as text (a flag value, or a JSON value rendered as text);
// `key` names which of the settings a shared setter sets, `where` prefixes errors.

Status set_models(const std::string&, const std::string& where, const std::string& value, ServerConfig& c) {
  c.models = split_models(value);
  c.models_given = true;
  if (c.models.empty()) return Error{where + ": no model given"};
  return {};
}

Status set_listen(const std::string&, const std::string& where, const std::string& value, ServerConfig& c) {
  Result<net::Endpoint> endpoint = net::parse_endpoint(value);
  if (!endpoint) return Error{where + ": " + endpoint.error().message};
  c.server.listen = endpoint.value();
  return {};
}

Status set_log_level(const std::string&, const std::string& where, const std::string& value, ServerConfig& c) {
  for (const char* level : kLevels) {
    if (value == level) {
      c.log_level = value;
      return {};
    }
  }
  return Error{where + ": '" + value + "' is not one of trace, debug, info, warn, error, critical, off"};
}

// recipes, spread_phases, agones, wait_allocation: on or off.
Status set_switch(const std::string& key, const std::string& where, const std::string& value, ServerConfig& c) {
  bool flag;
  if (value == "on" || value == "true" || value == "1") {
    flag = true;
  } else if (value == "off" || value == "false" || value == "0") {
    flag = false;
  } else {
    return Error{where + ": '" + value + "' is not on or off"};
  }
  if (key == "agones") {
    c.agones = flag;
  } else if (key == "wait_allocation") {
    c.wait_allocation = flag;
  } else {
    (key == "recipes" ? c.server.attach_recipes : c.server.spread_send_phases) = flag;
  }
  return {};
}

// metrics: the HTTP listener's address (port 0: any free port).
Status set_metrics(const std::string&, const std::string& where, const std::string& value, ServerConfig& c) {
  Result<net::Endpoint> endpoint = net::parse_endpoint(value);
  if (!endpoint) return Error{where + ": " + endpoint.error().message};
  c.metrics_listen = endpoint.value();
  return {};
}

// health_period (0.1..60 s), drain_grace (0..3600 s).
Status set_fleet_seconds(const std::string& key, const std::string& where, const std::string& value,
                         ServerConfig& c) {
  const bool health = key == "health_period";
  Result<double> seconds = health ? parse_real(where, value, 0.1, 60.0) : parse_real(where, value, 0.0, 3600.0);
  if (!seconds) return seconds.error();
  (health ? c.health_period_s : c.drain_grace_s) = seconds.value();
  return {};
}

// scenario (may be empty: none), replay, assets, record.
Status set_path(const std::string& key, const std::string& where, const std::string& value, ServerConfig& c) {
  if (key == "scenario") {
    c.scenario = value;
    return {};
  }
  if (value.empty()) return Error{where + (key == "assets" ? ": needs a folder" : ": needs a file name")};
  (key == "replay" ? c.replay : key == "assets" ? c.assets : c.record) = value;
  return {};
}

Status set_client_timeout(const std::string&, const std::string& where, const std::string& value, ServerConfig& c) {
  Result<double> seconds = parse_real(where, value, 0.1, 3600.0);
  if (!seconds) return seconds.error();
  c.server.timeout_us = static_cast<int64_t>(seconds.value() * 1e6);
  return {};
}

// The server's own link simulator (net::NetworkSimulator), the same impairment on what it
// sends and what it receives: a link to try clients against without another tool.
Status set_simulated_link(const std::string& key, const std::string& where, const std::string& value,
                          ServerConfig& c) {
  const bool percent = key == "sim_loss_percent";
  Result<double> number = percent ? parse_real(where, value, 0.0, 100.0) : parse_real(where, value, 0.0, 10'000.0);
  if (!number) return number.error();
  if (!c.server.simulator) c.server.simulator = net::SimulatorConfig{};
  for (net::LinkConditions* link : {&c.server.simulator->outbound, &c.server.simulator->inbound}) {
    if (percent) {
      link->loss_percent = number.value();
    } else {
      (key == "sim_latency_ms" ? link->latency_us : link->jitter_us) = static_cast<int64_t>(number.value() * 1000.0);
    }
  }
  return {};
}

// duration, metrics_interval.
Status set_seconds(const std::string& key, const std::string& where, const std::string& value, ServerConfig& c) {
  Result<double> seconds = parse_seconds(where, value);
  if (!seconds) return seconds.error();
  (key == "duration" ? c.duration_s : c.metrics_interval_s) = seconds.value();
  return {};
}

// Whole numbers, each in its range.
Status set_number(const std::string& key, const std::string& where, const std::string& value, ServerConfig& c) {
  struct Range {
    const char* key;
    uint64_t lo, hi;
    uint32_t ServerConfig::*config = nullptr;   // a field of the config
    uint32_t ServerOptions::*server = nullptr;  // or of its server options
  };
  static const Range kRanges[] = {{"tick_rate", 1, 1000, nullptr, &ServerOptions::tick_rate_hz},
                                  {"send_rate", 1, 1000, nullptr, &ServerOptions::send_rate_hz},
                                  {"max_clients", 1, 65535, nullptr, &ServerOptions::max_clients},
                                  {"bandwidth_kbit", 0, 10'000'000, nullptr, &ServerOptions::bandwidth_kbit},
                                  {"grant", 0, 64, &ServerConfig::grant_per_client, nullptr}};
  if (key == "threads") {
    Result<uint64_t> number = parse_uint(where, value, 1, 64);
    if (!number) return number.error();
    c.server.threads = static_cast<unsigned>(number.value());
    return {};
  }
  for (const Range& r : kRanges) {
    if (key != r.key) continue;
    Result<uint64_t> number = parse_uint(where, value, r.lo, r.hi);
    if (!number) return number.error();
    const auto v = static_cast<uint32_t>(number.value());
    if (r.config != nullptr) c.*r.config = v;
    if (r.server != nullptr) c.server.*r.server = v;
    return {};
  }
  return Error{where + ": unknown setting"};
}

// Lag-compensated hit queries (docs/hit-queries.md): hit_history_ms (0..10000, 0: off),
// hit_rate (queries a second per client, 1..10000), hit_max_ray (model units, 0.01..1e6),
// hit_right (none, owners, all).
Status set_hit(const std::string& key, const std::string& where, const std::string& value, ServerConfig& c) {
  if (key == "hit_right") {
    if (value == "none") {
      c.server.hit_right = HitRight::kNone;
    } else if (value == "owners") {
      c.server.hit_right = HitRight::kOwners;
    } else if (value == "all") {
      c.server.hit_right = HitRight::kAll;
    } else {
      return Error{where + ": '" + value + "' is not none, owners or all"};
    }
    return {};
  }
  if (key == "hit_max_ray") {
    Result<double> length = parse_real(where, value, 0.01, 1e6);
    if (!length) return length.error();
    c.server.hit_max_ray_length = static_cast<float>(length.value());
    return {};
  }
  const bool history = key == "hit_history_ms";
  Result<uint64_t> number = history ? parse_uint(where, value, 0, 10'000) : parse_uint(where, value, 1, 10'000);
  if (!number) return number.error();
  if (history) {
    c.server.hit_history_us = static_cast<int64_t>(number.value()) * 1000;
  } else {
    c.server.hit_queries_per_second = static_cast<uint32_t>(number.value());
  }
  return {};
}

using Setter = Status (*)(const std::string& key, const std::string& where, const std::string& value,
                          ServerConfig& config);
struct Setting {
  const char* key;
  Setter set;
};
constexpr Setting kSettings[] = {
    {"models", set_models},           {"listen", set_listen},
    {"log_level", set_log_level},     {"recipes", set_switch},
    {"spread_phases", set_switch},    {"scenario", set_path},
    {"replay", set_path},             {"assets", set_path},
    {"record", set_path},             {"client_timeout", set_client_timeout},
    {"sim_latency_ms", set_simulated_link}, {"sim_jitter_ms", set_simulated_link},
    {"sim_loss_percent", set_simulated_link}, {"duration", set_seconds},
    {"metrics_interval", set_seconds}, {"tick_rate", set_number},
    {"send_rate", set_number},        {"max_clients", set_number},
    {"bandwidth_kbit", set_number},   {"threads", set_number},
    {"grant", set_number},            {"metrics", set_metrics},
    {"agones", set_switch},           {"wait_allocation", set_switch},
    {"health_period", set_fleet_seconds}, {"drain_grace", set_fleet_seconds},
    {"hit_history_ms", set_hit},      {"hit_rate", set_hit},
    {"hit_max_ray", set_hit},         {"hit_right", set_hit},
};

}  // namespace

Status apply_server_setting(const std::string& key, const std::string& where, const std::string& value,
                            ServerConfig& c) {
  for (const Setting& setting : kSettings) {
    if (key == setting.key) return setting.set(key, where, value, c);
  }
  return Error{where + ": unknown setting"};
}

Status apply_config_json(const std::string& text, const std::string& file_name, ServerConfig& config) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Error{file_name + ": not valid JSON"};
  if (!root.is_object()) return Error{file_name + ": must be a JSON object"};
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string where = file_name + ": " + it.key();
    const nlohmann::json& value = it.value();
    std::string rendered;
    if (it.key() == "models" && value.is_array()) {
      for (const auto& m : value) {
        if (!m.is_string()) return Error{where + ": every model must be a string"};
        rendered += (rendered.empty() ? "" : ",") + m.get<std::string>();
      }
    } else if (value.is_string()) {
      rendered = value.get<std::string>();
    } else if (value.is_boolean()) {
      rendered = value.get<bool>() ? "on" : "off";
    } else if (value.is_number_unsigned() || value.is_number_integer()) {
      rendered = value.dump();
    } else if (value.is_number_float() && (it.key() == "duration" || it.key() == "metrics_interval" ||
                                           it.key() == "client_timeout" || it.key() == "health_period" ||
                                           it.key() == "drain_grace" || it.key() == "hit_max_ray" ||
                                           is_simulated_link_key(it.key()))) {
      rendered = value.dump();
    } else {
      return Error{where + ": has the wrong type"};
    }
    if (Status s = apply_server_setting(it.key(), where, rendered, config); !s) return s;
  }
  return {};
}

Status check_server_config(const ServerConfig& config) {
  // A replay serves what the recording holds: nothing else drives its entities, nobody owns
  // them, and it is not itself recorded.
  if (!config.replay.empty()) {
    std::string other;
    if (!config.scenario.empty()) other = "--scenario";
    if (!config.record.empty()) other = "--record";
    if (config.grant_per_client > 0) other = "--grant";
    if (!other.empty()) return Error{"--replay cannot be combined with " + other};
  } else if (!config.assets.empty()) {
    return Error{"--assets only applies to --replay (where to find a recording's models)"};
  }
  if (config.wait_allocation && config.agones == false) {
    return Error{"--wait-allocation needs Agones (it waits for the GameServer's Allocated state)"};
  }
  if (config.server.send_rate_hz > config.server.tick_rate_hz) {
    return Error{"--send-rate: " + std::to_string(config.server.send_rate_hz) + " exceeds the tick rate " +
                 std::to_string(config.server.tick_rate_hz)};
  }
  return {};
}

}  // namespace posecast::server
