#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdlib.h>

#include "server_command_line.h"

namespace posecast::server {
namespace {

Result<ServerConfig> parse(std::vector<std::string> args) { return parse_server_config(args); }

TEST(ServerConfig, DefaultsMatchTheDocumentation) {
  auto config = parse({});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->models, std::vector<std::string>{"gen-rig:24"});
  EXPECT_EQ(net::to_string(config->server.listen), "127.0.0.1:7777");
  EXPECT_EQ(config->server.tick_rate_hz, 60u);
  EXPECT_EQ(config->server.send_rate_hz, 20u);
  EXPECT_EQ(config->server.bandwidth_kbit, 0u);
  EXPECT_EQ(config->log_level, "info");
}

TEST(ServerConfig, ParsesEveryFlagInBothForms) {
  auto config = parse({"--models", "gen-rig:8,a.glb", "--listen=0.0.0.0:0", "--tick-rate", "30", "--send-rate=10",
                       "--max-clients", "3", "--bandwidth", "500", "--threads", "1", "--log-level", "debug",
                       "--scenario", "s.json", "--duration", "2.5", "--metrics-interval", "0",
                       "--recipes", "off", "--spread-phases=on", "--client-timeout", "30"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->models, (std::vector<std::string>{"gen-rig:8", "a.glb"}));
  EXPECT_EQ(config->server.listen.port(), 0);
  EXPECT_EQ(config->server.tick_rate_hz, 30u);
  EXPECT_EQ(config->server.send_rate_hz, 10u);
  EXPECT_EQ(config->server.max_clients, 3u);
  EXPECT_EQ(config->server.bandwidth_kbit, 500u);
  EXPECT_EQ(config->server.threads, 1u);
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_EQ(config->scenario, "s.json");
  EXPECT_DOUBLE_EQ(config->duration_s, 2.5);
  EXPECT_DOUBLE_EQ(config->metrics_interval_s, 0.0);
  EXPECT_FALSE(config->server.attach_recipes);
  EXPECT_TRUE(config->server.spread_send_phases);
  EXPECT_EQ(config->server.timeout_us, 30'000'000);
}

TEST(ServerConfig, FlagsWinOverTheConfigFile) {
  const auto path = std::filesystem::temp_directory_path() / "posecast_server_config_test.json";
  {
    std::ofstream file(path);
    file << R"({"tick_rate": 30, "send_rate": 15, "models": ["gen-rig:4"], "log_level": "warn", "recipes": false})";
  }
  auto config = parse({"--config", path.string(), "--send-rate", "5"});
  std::filesystem::remove(path);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server.tick_rate_hz, 30u);
  EXPECT_EQ(config->server.send_rate_hz, 5u);
  EXPECT_EQ(config->models, std::vector<std::string>{"gen-rig:4"});
  EXPECT_EQ(config->log_level, "warn");
  EXPECT_FALSE(config->server.attach_recipes);
}

TEST(ServerConfig, SimulatedLinkFlagsImpairBothDirections) {
  auto none = parse({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->server.simulator.has_value());
  auto config = parse({"--sim-latency", "50", "--sim-jitter=12.5", "--sim-loss", "5"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_TRUE(config->server.simulator.has_value());
  for (const net::LinkConditions& link : {config->server.simulator->outbound, config->server.simulator->inbound}) {
    EXPECT_EQ(link.latency_us, 50'000);
    EXPECT_EQ(link.jitter_us, 12'500);
    EXPECT_DOUBLE_EQ(link.loss_percent, 5.0);
  }
  // From a config file too, numbers with or without a fraction.
  const auto path = std::filesystem::temp_directory_path() / "posecast_server_sim_test.json";
  {
    std::ofstream file(path);
    file << R"({"sim_latency_ms": 20, "sim_loss_percent": 0.5})";
  }
  auto from_file = parse({"--config", path.string()});
  std::filesystem::remove(path);
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  EXPECT_EQ(from_file->server.simulator->inbound.latency_us, 20'000);
  EXPECT_DOUBLE_EQ(from_file->server.simulator->outbound.loss_percent, 0.5);
}

TEST(ServerConfig, ErrorsNameTheFlagOrKeyAndTheReason) {
  struct Case {
    std::vector<std::string> args;
    const char* expected;
  };
  const Case cases[] = {
      {{"--tick-rate", "abc"}, "--tick-rate: abc is not in 1..1000"},   {{"--tick-rate", "0"}, "--tick-rate: 0 is not in 1..1000"},
      {{"--listen", "nowhere"}, "--listen"},     {{"--log-level", "loud"}, "--log-level"},
      {{"--frobnicate"}, "The following argument was not expected: --frobnicate"},     {{"--duration"}, "--duration"},
      {{"--send-rate", "90"}, "--send-rate: 90 exceeds the tick rate 60"}, {{"--config", "/nonexistent/x.json"}, "cannot read"},
      {{"--recipes", "maybe"}, "--recipes"},     {{"--client-timeout", "0"}, "--client-timeout: 0 is not in 0.1..3600"},
      {{"--client-timeout", "soon"}, "--client-timeout"},
      {{"--sim-loss", "101"}, "--sim-loss: 101 is not in 0..100"},
      {{"--sim-latency", "-1"}, "--sim-latency"},  {{"--sim-jitter", "fast"}, "--sim-jitter"},
  };
  for (const Case& c : cases) {
    auto config = parse(c.args);
    ASSERT_FALSE(config.ok()) << c.args[0];
    EXPECT_NE(config.error().message.find(c.expected), std::string::npos) << config.error().message;
  }
}

TEST(ServerConfig, FleetSettingsDefaultOffAndParse) {
  auto defaults = parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->metrics_listen.has_value());
  EXPECT_FALSE(defaults->agones.has_value());  // the environment decides
  EXPECT_DOUBLE_EQ(defaults->health_period_s, 2.0);
  EXPECT_DOUBLE_EQ(defaults->drain_grace_s, 10.0);
  EXPECT_FALSE(defaults->wait_allocation);

  auto config = parse({"--metrics", "127.0.0.1:0", "--agones", "--health-period=0.5", "--drain-grace", "3",
                       "--wait-allocation"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_TRUE(config->metrics_listen.has_value());
  EXPECT_EQ(net::to_string(*config->metrics_listen), "127.0.0.1:0");
  EXPECT_EQ(config->agones, true);
  EXPECT_DOUBLE_EQ(config->health_period_s, 0.5);
  EXPECT_DOUBLE_EQ(config->drain_grace_s, 3.0);
  EXPECT_TRUE(config->wait_allocation);

  auto off = parse({"--agones=off"});
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->agones, false);

  ServerConfig from_file;
  ASSERT_TRUE(apply_config_json(R"({"metrics": "0.0.0.0:9100", "agones": true, "health_period": 1.5,
                                    "drain_grace": 0, "wait_allocation": "off"})",
                                "s.json", from_file)
                  .ok());
  EXPECT_EQ(net::to_string(*from_file.metrics_listen), "0.0.0.0:9100");
  EXPECT_EQ(from_file.agones, true);
  EXPECT_DOUBLE_EQ(from_file.health_period_s, 1.5);
  EXPECT_DOUBLE_EQ(from_file.drain_grace_s, 0.0);
}

TEST(ServerConfig, FleetSettingErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* expected;
  };
  const Case cases[] = {
      {{"--metrics", "nowhere"}, "--metrics"},
      {{"--metrics"}, "--metrics"},
      {{"--health-period", "0"}, "--health-period: 0 is not in 0.1..60"},
      {{"--health-period", "61"}, "--health-period"},
      {{"--drain-grace", "-1"}, "--drain-grace: -1 is not in 0..3600"},
      {{"--agones=maybe"}, "--agones: 'maybe' is not on or off"},
      {{"--agones=off", "--wait-allocation"}, "--wait-allocation needs Agones"},
  };
  for (const Case& c : cases) {
    auto config = parse(c.args);
    ASSERT_FALSE(config.ok()) << c.args[0];
    EXPECT_NE(config.error().message.find(c.expected), std::string::npos) << config.error().message;
  }
}

TEST(ServerConfig, AssetsGoWithReplayOnly) {
  auto served = parse({"--replay", "r.pcrec", "--assets", "/data/models"});
  ASSERT_TRUE(served.ok()) << served.error().message;
  EXPECT_EQ(served->assets, "/data/models");
  auto alone = parse({"--assets", "/data/models"});
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.error().message.find("--assets only applies to --replay"), std::string::npos)
      << alone.error().message;
  auto empty = parse({"--replay", "r.pcrec", "--assets="});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("--assets"), std::string::npos) << empty.error().message;
}

// Sets an environment variable for the scope of one test.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedVariable() { ::unsetenv(name_); }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
};

// The hit-query settings (docs/hit-queries.md): defaults as ServerOptions', each flag in both
// forms and as a config key, and every bad value refused with the flag and the range.
TEST(ServerConfig, HitQueryFlagsParseAndRefuseBadValues) {
  auto defaults = parse({});
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  const ServerOptions library;
  EXPECT_EQ(defaults->server.hit_history_us, library.hit_history_us);
  EXPECT_EQ(defaults->server.hit_queries_per_second, library.hit_queries_per_second);
  EXPECT_EQ(defaults->server.hit_max_ray_length, library.hit_max_ray_length);
  EXPECT_EQ(defaults->server.hit_right, HitRight::kNone);

  auto config = parse({"--hit-history", "250", "--hit-rate=5", "--hit-max-ray", "50.5", "--hit-right=owners"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server.hit_history_us, 250'000);
  EXPECT_EQ(config->server.hit_queries_per_second, 5u);
  EXPECT_FLOAT_EQ(config->server.hit_max_ray_length, 50.5f);
  EXPECT_EQ(config->server.hit_right, HitRight::kOwners);
  config = parse({"--hit-history=0", "--hit-right", "all", "--hit-rate", "10000", "--hit-max-ray", "1000000"});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server.hit_history_us, 0);
  EXPECT_EQ(config->server.hit_right, HitRight::kAll);
  EXPECT_EQ(config->server.hit_queries_per_second, 10'000u);
  EXPECT_FLOAT_EQ(config->server.hit_max_ray_length, 1e6f);

  ServerConfig from_file;
  ASSERT_TRUE(apply_config_json(R"({"hit_history_ms": 500, "hit_rate": 2, "hit_max_ray": 12.5, "hit_right": "all"})",
                                "s.json", from_file));
  EXPECT_EQ(from_file.server.hit_history_us, 500'000);
  EXPECT_EQ(from_file.server.hit_queries_per_second, 2u);
  EXPECT_FLOAT_EQ(from_file.server.hit_max_ray_length, 12.5f);
  EXPECT_EQ(from_file.server.hit_right, HitRight::kAll);

  struct Case {
    std::vector<std::string> args;
    const char* expected;
  };
  const Case cases[] = {
      {{"--hit-history", "10001"}, "--hit-history: 10001 is not in 0..10000"},
      {{"--hit-history", "-1"}, "--hit-history: -1 is not in 0..10000"},
      {{"--hit-history", "1.5"}, "--hit-history: 1.5 is not in 0..10000"},
      {{"--hit-rate", "0"}, "--hit-rate: 0 is not in 1..10000"},
      {{"--hit-rate", "many"}, "--hit-rate: many is not in 1..10000"},
      {{"--hit-max-ray", "0"}, "--hit-max-ray: 0 is not in 0.01..1e+06"},
      {{"--hit-max-ray", "nan"}, "--hit-max-ray: nan is not in 0.01..1e+06"},
      {{"--hit-max-ray", "inf"}, "--hit-max-ray: inf is not in 0.01..1e+06"},
      {{"--hit-right", "some"}, "--hit-right: 'some' is not none, owners or all"},
      {{"--hit-right"}, "--hit-right"},
  };
  for (const Case& c : cases) {
    auto bad = parse(c.args);
    ASSERT_FALSE(bad.ok()) << c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : "");
    EXPECT_NE(bad.error().message.find(c.expected), std::string::npos) << bad.error().message;
  }
  ServerConfig wrong;
  const Status typed = apply_config_json(R"({"hit_right": 3})", "s.json", wrong);
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.error().message.find("s.json: hit_right"), std::string::npos) << typed.error().message;
}

TEST(ServerConfig, EveryFlagHasItsVariable) {
  const ScopedVariable variables[] = {
      {"POSECAST_MODELS", "gen-rig:8,a.glb"}, {"POSECAST_LISTEN", "0.0.0.0:0"},  {"POSECAST_TICK_RATE", "30"},
      {"POSECAST_SEND_RATE", "10"},          {"POSECAST_MAX_CLIENTS", "3"},    {"POSECAST_BANDWIDTH", "500"},
      {"POSECAST_THREADS", "1"},             {"POSECAST_LOG_LEVEL", "debug"},  {"POSECAST_REPLAY", "r.pcrec"},
      {"POSECAST_ASSETS", "/data"},          {"POSECAST_DURATION", "2.5"},     {"POSECAST_METRICS_INTERVAL", "0"},
      {"POSECAST_CLIENT_TIMEOUT", "30"},     {"POSECAST_RECIPES", "off"},      {"POSECAST_SPREAD_PHASES", "off"},
      {"POSECAST_SIM_LATENCY", "50"},        {"POSECAST_SIM_JITTER", "12.5"},  {"POSECAST_SIM_LOSS", "5"},
      {"POSECAST_METRICS", "127.0.0.1:0"},   {"POSECAST_AGONES", "on"},        {"POSECAST_HEALTH_PERIOD", "0.5"},
      {"POSECAST_DRAIN_GRACE", "3"},         {"POSECAST_WAIT_ALLOCATION", "1"},
      {"POSECAST_HIT_HISTORY", "400"},       {"POSECAST_HIT_RIGHT", "all"},    {"POSECAST_HIT_RATE", "7"},
      {"POSECAST_HIT_MAX_RAY", "80"},
  };
  auto config = parse({});
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->models, (std::vector<std::string>{"gen-rig:8", "a.glb"}));
  EXPECT_EQ(net::to_string(config->server.listen), "0.0.0.0:0");
  EXPECT_EQ(config->server.tick_rate_hz, 30u);
  EXPECT_EQ(config->server.send_rate_hz, 10u);
  EXPECT_EQ(config->server.max_clients, 3u);
  EXPECT_EQ(config->server.bandwidth_kbit, 500u);
  EXPECT_EQ(config->server.threads, 1u);
  EXPECT_EQ(config->log_level, "debug");
  EXPECT_EQ(config->replay, "r.pcrec");
  EXPECT_EQ(config->assets, "/data");
  EXPECT_DOUBLE_EQ(config->duration_s, 2.5);
  EXPECT_DOUBLE_EQ(config->metrics_interval_s, 0.0);
  EXPECT_EQ(config->server.timeout_us, 30'000'000);
  EXPECT_FALSE(config->server.attach_recipes);
  EXPECT_FALSE(config->server.spread_send_phases);
  ASSERT_TRUE(config->server.simulator.has_value());
  EXPECT_EQ(config->server.simulator->outbound.latency_us, 50'000);
  EXPECT_EQ(config->server.simulator->inbound.jitter_us, 12'500);
  EXPECT_DOUBLE_EQ(config->server.simulator->inbound.loss_percent, 5.0);
  ASSERT_TRUE(config->metrics_listen.has_value());
  EXPECT_EQ(config->agones, true);
  EXPECT_DOUBLE_EQ(config->health_period_s, 0.5);
  EXPECT_DOUBLE_EQ(config->drain_grace_s, 3.0);
  EXPECT_TRUE(config->wait_allocation);
  EXPECT_EQ(config->server.hit_history_us, 400'000);
  EXPECT_EQ(config->server.hit_right, HitRight::kAll);
  EXPECT_EQ(config->server.hit_queries_per_second, 7u);
  EXPECT_FLOAT_EQ(config->server.hit_max_ray_length, 80.0f);
  // The ones --replay excludes, in a second pass.
  const ScopedVariable live[] = {{"POSECAST_REPLAY", ""}, {"POSECAST_ASSETS", ""},
                                 {"POSECAST_SCENARIO", "s.json"}, {"POSECAST_RECORD", "out.pcrec"},
                                 {"POSECAST_GRANT", "2"}};
  auto second = parse({});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->scenario, "s.json");
  EXPECT_EQ(second->record, "out.pcrec");
  EXPECT_EQ(second->grant_per_client, 2u);
}

TEST(ServerConfig, CommandLineWinsOverEnvironmentWinsOverFileWinsOverDefault) {
  const auto path = std::filesystem::temp_directory_path() / "posecast_server_precedence_test.json";
  {
    std::ofstream file(path);
    file << R"({"tick_rate": 20, "send_rate": 5, "max_clients": 8, "log_level": "warn"})";
  }
  const ScopedVariable file_variable("POSECAST_CONFIG", path.string());
  const ScopedVariable tick("POSECAST_TICK_RATE", "30");
  const ScopedVariable clients("POSECAST_MAX_CLIENTS", "6");
  auto config = parse({"--max-clients", "4"});
  std::filesystem::remove(path);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server.max_clients, 4u);    // command line over environment and file
  EXPECT_EQ(config->server.tick_rate_hz, 30u);  // environment over file
  EXPECT_EQ(config->server.send_rate_hz, 5u);   // file over default
  EXPECT_EQ(config->log_level, "warn");
  EXPECT_EQ(config->server.threads, 2u);        // default
  EXPECT_EQ(config->config_file, path.string());
}

TEST(ServerConfig, VariableErrorsNameTheVariable) {
  {
    const ScopedVariable tick("POSECAST_TICK_RATE", "0");
    auto config = parse({});
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().message, "POSECAST_TICK_RATE: 0 is not in 1..1000");
    // Not read when the command line gives the option.
    EXPECT_TRUE(parse({"--tick-rate", "30"}).ok());
  }
  const ScopedVariable agones("POSECAST_AGONES", "maybe");
  auto config = parse({});
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().message, "POSECAST_AGONES: 'maybe' is not on or off");
  const ScopedVariable file("POSECAST_CONFIG", "/nonexistent/x.json");
  auto missing = parse({"--agones"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "POSECAST_CONFIG: cannot read '/nonexistent/x.json'");
}

TEST(ServerConfig, ConfigFileRejectsUnknownKeysAndWrongTypes) {
  ServerConfig config;
  Status unknown = apply_config_json(R"({"tickrate": 60})", "s.json", config);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("s.json: tickrate"), std::string::npos);
  Status type = apply_config_json(R"({"tick_rate": "fast"})", "s.json", config);
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.error().message.find("tick_rate"), std::string::npos);
  Status syntax = apply_config_json("{", "s.json", config);
  EXPECT_FALSE(syntax.ok());
}

}  // namespace
}  // namespace posecast::server
