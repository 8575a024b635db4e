#pragma once
// Scenario files (docs/scenario-format.md): JSON text naming models, masks and timed commands,
// for headless deterministic runs. Parsing is pure (text in, values out, no file access): the
// caller reads the file and loads the models the scenario names.
//
// Two steps, because clip and joint names can only be checked against loaded models:
//   1. read_scenario_header(text): format version, tick rate, tick count, model sources;
//   2. parse_scenario(text, loaded models): masks and commands, every name bound to an index.
// Errors name the file and the field, e.g.
//   "walk.json: commands[3].clip: unknown clip 'sprint' (model 'fox' has: Survey, Walk, Run)"
// and a JSON syntax error names the line and column. Malformed input never crashes.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "posecast/model.h"
#include "posecast/result.h"
#include "posecast/sim/commands.h"
#include "posecast/sim/joint_mask.h"

namespace posecast::sim {

inline constexpr int kScenarioFormatVersion = 1;

struct ScenarioModelSource {
  std::string name;    // the key in "models"
  std::string source;  // as written: a path (relative to the scenario file) or "gen-rig:N"
};

struct ScenarioHeader {
  uint32_t tick_rate_hz = 60;
  uint64_t ticks = 0;  // "ticks", or last command tick + 1 when absent
  std::string description;
  std::vector<ScenarioModelSource> models;  // in file order; world model id = index
};

Result<ScenarioHeader> read_scenario_header(std::string_view text, const std::string& file_name);

struct Scenario {
  ScenarioHeader header;
  std::vector<std::shared_ptr<const Model>> models;  // header.models[i] loaded; model id i
  std::vector<JointMask> masks;                      // mask id = index
  // Expanded ("count") and sorted by tick, file order within a tick: the order to submit.
  std::vector<Command> commands;
};

// `models` holds header.models' models in the same order. Checks every field, every name and
// every command against the entities alive at its tick (simulating spawn and despawn).
Result<Scenario> parse_scenario(std::string_view text, const std::string& file_name,
                                std::vector<std::shared_ptr<const Model>> models);

}  // namespace posecast::sim
