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

#include "progress.h"
#include "commands.h"
#include "posecast/replay/regression.h"
#include "posecast/rig/model_source.h"

namespace posecast::cli {
namespace {

struct RegressArgs {
  std::string dir;
  std::string junit;  // empty: none
  replay::RegressOptions options;
};

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast regress: %s\n", why.c_str());
  return code;
}

int regress(const RegressArgs& args) {
  const std::string& dir = args.dir;
  const replay::RegressOptions& options = args.options;

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
  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary | std::ios::trunc);
    out << replay::junit_xml(outcomes, dir, seconds);
    if (!out) return fail("cannot write '" + args.junit + "'", kExitFailure);
  }
  return failures == 0 ? kExitOk : kExitFailure;
}

}  // namespace

Command add_regress_command(CommandLine& command_line) {
  CLI::App* app = command_line.add_command(
      "regress", "run a folder of scenarios against their golden per-tick hashes",
      "Runs every scenario (*.json) under DIR headless and compares each tick's hashes with the\n"
      "golden NAME.hashes beside it; a divergence names the first tick and entity, and the worst\n"
      "joint with its model-space difference against the palettes in NAME.pcrec. A progress bar\n"
      "(scenarios done) appears on stderr when stderr is a terminal and the run is long.\n"
      "Scenarios skipped (sample assets absent) pass; any divergence, missing golden or error\n"
      "exits 1. Format: docs/regression.md.");
  auto o = std::make_shared<RegressArgs>();
  app->add_option("DIR", o->dir, "the folder of scenarios and goldens")->required();
  app->add_flag("--update", o->options.update, "rewrite NAME.hashes and NAME.pcrec from this build (deliberately)");
  app->add_option("--junit", o->junit, "also write the results as JUnit XML")->type_name("OUT.xml");
  add_threads_option(*app, o->options.threads);
  app->add_option("--palette-interval", o->options.palette_interval,
                  "with --update: ticks between golden palette samples")
      ->type_name("N")
      ->check(integer_in(1, 1 << 20));
  return {app, [o] { return regress(*o); }};
}

}  // namespace posecast::cli
