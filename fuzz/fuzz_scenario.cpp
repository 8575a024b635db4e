// libFuzzer target: scenario files (docs/scenario-format.md) on arbitrary text. The header
// reader and the parser must give an error, never a crash or an out-of-bounds access (ASan +
// UBSan in scripts/fuzz.sh's build); a scenario that parses must run: its commands are
// submitted to a World and the World ticks (a few ticks of small scenarios, to keep each run
// short), whatever values the parser let through.
//
// No file access: every model the scenario names is the generated 24-joint rig, loaded once
// (its clips walk, run, idle, wave, ... and joints spine, shoulder_l, ... are what the seed
// scenarios name). Seeds: the repository's scenario files (scripts/fuzz.sh copies them).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "posecast/rig/model_source.h"
#include "posecast/sim/scenario.h"
#include "posecast/sim/scenario_runner.h"

namespace {

constexpr std::size_t kMaxModels = 8;
constexpr std::size_t kMaxCommandsToRun = 512;
constexpr uint64_t kMaxTicksToRun = 24;

std::shared_ptr<const posecast::Model> rig_model() {
  static const std::shared_ptr<const posecast::Model> model = [] {
    auto loaded = posecast::rig::load_model_source("gen-rig:24");
    if (!loaded.ok()) __builtin_trap();  // the generated rig always loads
    return std::make_shared<const posecast::Model>(std::move(loaded).value());
  }();
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace posecast;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<sim::ScenarioHeader> header = sim::read_scenario_header(text, "fuzz.json");
  if (!header.ok()) return 0;
  if (header.value().models.size() > kMaxModels) return 0;
  std::vector<std::shared_ptr<const Model>> models(header.value().models.size(), rig_model());
  Result<sim::Scenario> scenario = sim::parse_scenario(text, "fuzz.json", models);
  if (!scenario.ok()) return 0;
  const sim::Scenario& s = scenario.value();
  if (s.commands.size() > kMaxCommandsToRun) return 0;
  auto runner = sim::ScenarioRunner::create(s, 1);
  if (!runner.ok()) return 0;
  const uint64_t ticks = s.header.ticks < kMaxTicksToRun ? s.header.ticks : kMaxTicksToRun;
  for (uint64_t t = 0; t < ticks; ++t) runner.value()->step();
  return 0;
}
