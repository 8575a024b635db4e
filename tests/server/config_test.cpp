#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "posecast/server/server_config.h"

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
      {{"--tick-rate", "abc"}, "--tick-rate"},   {{"--tick-rate", "0"}, "outside"},
      {{"--listen", "nowhere"}, "--listen"},     {{"--log-level", "loud"}, "--log-level"},
      {{"--frobnicate"}, "unknown option"},     {{"--duration"}, "needs a value"},
      {{"--send-rate", "90"}, "exceeds the tick rate"}, {{"--config", "/nonexistent/x.json"}, "cannot read"},
      {{"--recipes", "maybe"}, "--recipes"},     {{"--client-timeout", "0"}, "outside 0.1..3600"},
      {{"--client-timeout", "soon"}, "--client-timeout"},
      {{"--sim-loss", "101"}, "--sim-loss: '101' is not a number in 0..100"},
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
      {{"--metrics"}, "--metrics: needs a value"},
      {{"--health-period", "0"}, "--health-period: '0' is not a number of seconds in 0.1..60"},
      {{"--health-period", "61"}, "--health-period"},
      {{"--drain-grace", "-1"}, "--drain-grace: '-1' is not a number of seconds in 0..3600"},
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
