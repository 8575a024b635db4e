#pragma once
// Golden-hash regression suites (docs/regression.md): every scenario file in a folder runs
// headless and its per-tick hashes are compared with the golden files beside it:
//
//   NAME.json     the scenario (docs/scenario-format.md)
//   NAME.hashes   text: ticks, final_world_hash, run_hash (the format of tests/golden/), then
//                 one line per tick: "tick T WORLD_HASH ID:HASH ..." (every entity, id order)
//   NAME.pcrec    a recording of the run (docs/recording-format.md) with every entity's palette
//                 at the tick before each checkpoint (every palette_interval ticks) and at the
//                 last tick: the reference for naming the worst joint of a divergence
//
// A divergence report names the first tick whose hashes differ, the first entity whose palette
// hash differs there, and -- at the first palette sample at or after that tick where palettes
// differ -- the worst joint and its model-space difference.

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/replay/replayer.h"

namespace posecast::replay {

struct RegressOptions {
  unsigned threads = 1;            // evaluation threads per World; results do not depend on it
  bool update = false;             // rewrite the goldens instead of comparing
  uint32_t palette_interval = 60;  // ticks between palette samples written by update
};

enum class RegressResult : uint8_t { kPass, kDiverged, kNoGolden, kSkipped, kError, kUpdated };
const char* to_string(RegressResult result);
bool is_failure(RegressResult result);  // diverged, no golden, error

struct ScenarioOutcome {
  std::string name;  // path relative to the suite folder, without ".json"
  std::string path;
  uint64_t ticks = 0;
  RegressResult result = RegressResult::kError;
  std::string first_divergence = "-";  // one line for the table
  std::string details;                 // the full report or error message
  double seconds = 0.0;
};

// Every *.json under `dir` (recursively), sorted by path. Errors: not a folder.
Result<std::vector<std::string>> find_scenarios(const std::string& dir);

// Runs one scenario against (or, with update, into) its goldens. `loader` receives resolved
// sources (a path made absolute against the scenario's folder, or "gen-rig:N"); a model file
// that does not exist makes the outcome kSkipped (public sample assets may be absent).
ScenarioOutcome run_regression(const std::string& scenario_path, const std::string& suite_dir,
                               const ModelLoader& loader, const RegressOptions& options);

// The table: scenario, ticks, result, first divergence (fixed-width columns).
std::string format_table(const std::vector<ScenarioOutcome>& outcomes);

// JUnit XML (the dialect Jenkins, GitLab and GitHub test reporters read): one testcase per
// scenario, <failure> for divergences and missing goldens, <error>, <skipped>.
std::string junit_xml(const std::vector<ScenarioOutcome>& outcomes, const std::string& suite_name,
                      double seconds);

// Golden text files.
struct GoldenTick {
  uint64_t world_hash = 0;
  std::vector<std::pair<uint32_t, uint64_t>> entities;  // id, palette hash; id order
};
struct Golden {
  uint64_t ticks = 0;
  uint64_t final_world_hash = 0;
  uint64_t run_hash = 0;
  std::vector<GoldenTick> per_tick;  // empty for a final-hashes-only golden (tests/golden/)
};
// Errors name the file and line.
Result<Golden> parse_golden(const std::string& text, const std::string& file_name);
std::string format_golden(const Golden& golden, const std::string& scenario_file);

}  // namespace posecast::replay
