// The committed golden scenarios (tests/golden/*.json) give the committed hashes
// (tests/golden/*.hashes) with 1 and 2 threads. The determinism matrix runs the same check
// across compilers, optimisation levels and CPUs (scripts/determinism-matrix.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "posecast/hash.h"
#include "posecast/rig/model_source.h"
#include "posecast/sim/scenario.h"
#include "posecast/sim/scenario_runner.h"

namespace posecast::sim {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> read_golden(const fs::path& p) {
  std::map<std::string, std::string> fields;
  std::istringstream in(read(p));
  std::string key, value;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    if (words >> key >> value) fields[key] = value;
  }
  return fields;
}

class GoldenScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenScenario, GivesTheCommittedHashesWithOneAndTwoThreads) {
  const fs::path json = fs::path(POSECAST_SOURCE_DIR) / "tests" / "golden" / (GetParam() + ".json");
  const std::string text = read(json);
  Result<ScenarioHeader> header = read_scenario_header(text, json.filename().string());
  ASSERT_TRUE(header.ok()) << header.error().message;
  std::vector<std::shared_ptr<const Model>> models;
  for (const ScenarioModelSource& m : header->models) {
    std::string source = m.source;
    if (!rig::is_generated_rig_source(source)) {
      const fs::path path = (json.parent_path() / source).lexically_normal();
      if (!fs::exists(path)) GTEST_SKIP() << path << " is not here (public sample assets absent)";
      source = path.string();
    }
    Result<Model> model = rig::load_model_source(source);
    ASSERT_TRUE(model.ok()) << model.error().message;
    models.push_back(std::make_shared<const Model>(std::move(model.value())));
  }
  Result<Scenario> scenario = parse_scenario(text, json.filename().string(), std::move(models));
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  const auto golden = read_golden(json.parent_path() / (GetParam() + ".hashes"));
  ASSERT_EQ(golden.at("ticks"), std::to_string(scenario->header.ticks));
  for (unsigned threads : {1u, 2u}) {
    auto runner = ScenarioRunner::create(scenario.value(), threads);
    ASSERT_TRUE(runner.ok()) << runner.error().message;
    for (uint64_t t = 0; t < scenario->header.ticks; ++t) runner.value()->step();
    EXPECT_EQ(runner.value()->world().stats().commands_rejected, 0u) << runner.value()->world().stats().last_rejection;
    EXPECT_EQ(hash_hex(runner.value()->world().world_hash()), golden.at("final_world_hash")) << threads << " threads";
    EXPECT_EQ(hash_hex(runner.value()->run_hash()), golden.at("run_hash")) << threads << " threads";
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenScenario,
                         ::testing::Values("genrig_locomotion", "genrig_layers", "genrig_crowd", "genrig_travel_crowd",
                                           "fox_walk_run"));

}  // namespace
}  // namespace posecast::sim
