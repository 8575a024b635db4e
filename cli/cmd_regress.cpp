// posecast regress DIR [--update] [--junit OUT.xml] [--threads N] [--palette-interval N]
//
// Runs every scenario under DIR and compares its per-tick hashes with the golden files beside it
// (docs/regression.md): prints a table (scenario, ticks, result, first divergence) and a report
// for each failure, writes JUnit XML on request, and exits 1 on any divergence. --update
// rewrites the goldens deliberately.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "progress.h"
#include "commands.h"
#include "posecast/replay/regression.h"
#include "posecast/rig/model_source.h"

namespace posecast::cli {
namespace {

constexpr const char kUsage[] =
    "usage: posecast regress DIR [--update] [--junit OUT.xml] [--threads N] [--palette-interval N]\n"
    "  Runs every scenario (*.json) under DIR headless and compares each tick's hashes with the\n"
    "  golden NAME.hashes beside it; a divergence names the first tick and entity, and the\n"
    "  worst joint with its model-space difference against the palettes in NAME.pcrec.\n"
    "  --update              rewrite NAME.hashes and NAME.pcrec from this build (deliberately)\n"
    "  --junit OUT.xml       also write the results as JUnit XML\n"
    "  --threads N           evaluation threads per scenario (default 1); results do not change\n"
    "  --palette-interval N  with --update: ticks between golden palette samples (default 60)\n"
    "  A progress bar (scenarios done) appears on stderr when stderr is a terminal and the run is long.\n"
    "  Exit: 0 all pass (or skipped: sample assets absent), 1 any divergence, missing golden or\n"
    "  error, 2 bad command line. Format: docs/regression.md.\n";

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast regress: %s\n", why.c_str());
  return code;
}

}  // namespace

int regress_command(int argc, char** argv) {
  ArgSpec spec;
  spec.options = {"junit", "threads", "palette-interval"};
  spec.switches = {"update"};
  Result<Args> args = parse_args(argc, argv, 2, spec);
  if (!args) return fail(args.error().message + "\n" + kUsage, kExitUsage);
  if (args->has("help")) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (args->positional.size() != 1) return fail(std::string("expected one folder\n") + kUsage, kExitUsage);
  const std::string dir = args->positional[0];
  replay::RegressOptions options;
  options.update = args->has("update");
  Result<unsigned> threads = threads_option(args.value());
  if (!threads) return fail(threads.error().message, kExitUsage);
  options.threads = threads.value();
  Result<long long> interval =
      integer_option(args.value(), "palette-interval", 1, 1 << 20, options.palette_interval);
  if (!interval) return fail(interval.error().message, kExitUsage);
  options.palette_interval = static_cast<uint32_t>(interval.value());

  Result<std::vector<std::string>> scenarios = replay::find_scenarios(dir);
  if (!scenarios) return fail(scenarios.error().message, kExitFailure);
  if (scenarios->empty()) return fail("no scenario (*.json) under '" + dir + "'", kExitFailure);

  replay::ModelLoader loader = [](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    Result<Model> model = rig::load_model_source(source);
    if (!model) return model.error();
    return std::make_shared<const Model>(std::move(model.value()));
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<replay::ScenarioOutcome> outcomes;
  {
    cli::Progress progress(scenarios->size(), true, "scenario");
    for (const std::string& path : scenarios.value()) {
      progress.update(outcomes.size());
      outcomes.push_back(replay::run_regression(path, dir, loader, options));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::fputs(replay::format_table(outcomes).c_str(), stdout);
  std::size_t failures = 0, passed = 0, skipped = 0, updated = 0;
  for (const replay::ScenarioOutcome& o : outcomes) {
    if (replay::is_failure(o.result)) ++failures;
    if (o.result == replay::RegressResult::kPass) ++passed;
    if (o.result == replay::RegressResult::kSkipped) ++skipped;
    if (o.result == replay::RegressResult::kUpdated) ++updated;
  }
  for (const replay::ScenarioOutcome& o : outcomes) {
    if (o.details.empty() || o.result == replay::RegressResult::kPass) continue;
    std::printf("\n%s: %s\n%s%s", o.name.c_str(), replay::to_string(o.result), o.details.c_str(),
                o.details.back() == '\n' ? "" : "\n");
  }
  std::printf("\n%zu scenarios in %.2f s: %zu passed, %zu failed, %zu skipped%s\n", outcomes.size(), seconds, passed,
              failures, skipped, updated ? (", " + std::to_string(updated) + " goldens updated").c_str() : "");
  if (auto junit = args->get("junit")) {
    std::ofstream out(*junit, std::ios::binary | std::ios::trunc);
    out << replay::junit_xml(outcomes, dir, seconds);
    if (!out) return fail("cannot write '" + *junit + "'", kExitFailure);
  }
  return failures == 0 ? kExitOk : kExitFailure;
}

}  // namespace posecast::cli
