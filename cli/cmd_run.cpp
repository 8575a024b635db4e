// posecast run SCENARIO.json [--ticks N] [--threads N] [--hashes OUT] [--no-progress] [--events]
//
// Runs a scenario headless (docs/scenario-format.md): loads its models, applies its commands at
// their ticks, and prints the final world hash and the run hash (docs/determinism.md); with
// --hashes, one line per tick: the tick, then each entity's palette hash (id order), in hex.

#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "posecast/hash.h"
#include "progress.h"
#include "posecast/rig/model_source.h"
#include "posecast/sim/scenario.h"
#include "posecast/sim/scenario_runner.h"

namespace posecast::cli {

namespace {

struct RunOptions {
  std::string path;
  std::optional<uint64_t> ticks;  // instead of the scenario's
  unsigned threads = 1;
  std::string hashes;             // empty: none
  bool no_progress = false;
  bool events = false;            // print every animation event
};

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast run: %s\n", why.c_str());
  return code;
}

Result<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot open '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{"cannot read '" + path + "'"};
  return text.str();
}

// Model sources are paths relative to the scenario file (or gen-rig:N).
std::string resolve_source(const std::string& source, const std::filesystem::path& scenario_dir) {
  if (rig::is_generated_rig_source(source)) return source;
  const std::filesystem::path p(source);
  if (p.is_absolute()) return source;
  return (scenario_dir / p).lexically_normal().string();
}

// Reads and parses the scenario file `path` (`name`: its file name, for messages) with its
// models, sources resolved against its folder.
Result<sim::Scenario> load_scenario(const std::string& path, const std::string& name) {
  Result<std::string> text = read_text(path);
  if (!text) return text.error();
  Result<sim::ScenarioHeader> header = sim::read_scenario_header(text.value(), name);
  if (!header) return header.error();
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<std::shared_ptr<const Model>> models;
  for (const sim::ScenarioModelSource& source : header->models) {
    Result<Model> model = rig::load_model_source(resolve_source(source.source, dir));
    if (!model) return Error{name + ": models." + source.name + ": " + model.error().message};
    models.push_back(std::make_shared<const Model>(std::move(model.value())));
  }
  return sim::parse_scenario(text.value(), name, std::move(models));
}

void print_report(const std::string& path, const sim::ScenarioRunner& runner, uint64_t ticks, double seconds,
                  uint64_t entity_ticks) {
  const sim::World& world = runner.world();
  const sim::WorldStats& stats = world.stats();
  std::printf("scenario %s\n", path.c_str());
  std::printf("ticks %" PRIu64 " at %u Hz, %zu entities at the end, threads %u\n", ticks,
              world.tick_rate_hz(), world.entity_count(), world.threads());
  std::printf("commands %" PRIu64 " applied, %" PRIu64 " rejected\n", stats.commands_applied,
              stats.commands_rejected);
  std::printf("time %.3f s (%.0f ns per entity-tick, hashing included)\n", seconds,
              entity_ticks ? seconds * 1e9 / static_cast<double>(entity_ticks) : 0.0);
  std::printf("final_world_hash %s\n", hash_hex(world.world_hash()).c_str());
  std::printf("run_hash %s\n", hash_hex(runner.run_hash()).c_str());
}

int run(const RunOptions& o) {
  const std::string& path = o.path;
  const std::string name = std::filesystem::path(path).filename().string();
  Result<sim::Scenario> scenario = load_scenario(path, name);
  if (!scenario) return fail(scenario.error().message, kExitFailure);
  Result<std::unique_ptr<sim::ScenarioRunner>> created = sim::ScenarioRunner::create(scenario.value(), o.threads);
  if (!created) return fail(name + ": " + created.error().message, kExitFailure);
  sim::ScenarioRunner& runner = *created.value();

  std::FILE* hashes = nullptr;
  if (!o.hashes.empty()) {
    hashes = std::fopen(o.hashes.c_str(), "w");
    if (hashes == nullptr) return fail("cannot write '" + o.hashes + "'", kExitFailure);
  }
  const uint64_t ticks = o.ticks.value_or(scenario->header.ticks);
  const auto start = std::chrono::steady_clock::now();
  uint64_t entity_ticks = 0;
  {
    cli::Progress progress(ticks, !o.no_progress);
    std::string line;
    for (uint64_t t = 0; t < ticks; ++t) {
      runner.step();
      const sim::World& world = runner.world();
      entity_ticks += world.entity_count();
      if (hashes != nullptr) {
        line = std::to_string(t);
        for (std::size_t e = 0; e < world.entity_count(); ++e) line += " " + hash_hex(world.palette_hash_at(e));
        line += '\n';
        std::fputs(line.c_str(), hashes);
      }
      if (o.events) {
        for (const sim::AnimationEvent& e : world.last_tick_events()) {
          std::printf("%s\n", event_line(world, e).c_str());
        }
      }
      progress.update(t + 1);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (hashes != nullptr && std::fclose(hashes) != 0) return fail("cannot write the hashes file", kExitFailure);

  print_report(path, runner, ticks, seconds, entity_ticks);
  const sim::WorldStats& stats = runner.world().stats();
  if (stats.commands_rejected != 0) {
    std::fprintf(stderr, "posecast run: warning: %" PRIu64 " commands rejected; last: %s\n",
                 stats.commands_rejected, stats.last_rejection.c_str());
  }
  if (stats.evaluation_failures != 0) {
    return fail(std::to_string(stats.evaluation_failures) + " entity-ticks could not be evaluated", kExitFailure);
  }
  return kExitOk;
}

}  // namespace

std::string event_line(const sim::World& world, const sim::AnimationEvent& event) {
  const Rig* rig = world.entity_rig(event.entity);
  std::string clip = "#" + std::to_string(event.clip), marker = "#" + std::to_string(event.marker);
  if (rig != nullptr && event.clip < rig->clips.size()) {
    clip = rig->clips[event.clip].name;
    if (event.marker < rig->clips[event.clip].markers.size()) marker = rig->clips[event.clip].markers[event.marker].name;
  }
  char weight[32];
  std::snprintf(weight, sizeof weight, "%.3f", static_cast<double>(event.weight));
  return "event tick " + std::to_string(event.tick) + " entity " + std::to_string(event.entity) + " clip " + clip +
         " marker " + marker + " layer " + std::to_string(event.layer) + " weight " + weight;
}

Command add_run_command(CommandLine& command_line) {
  CLI::App* app = command_line.add_command(
      "run", "run a scenario headless: per-tick palette hashes, final world hash",
      "Runs the scenario with no window and no network and prints its final world hash and run\n"
             "hash (the same on every build, thread count and CPU: docs/determinism.md). A progress bar\n"
             "appears on stderr when stderr is a terminal and the run is long. Scenario format:\n"
             "docs/scenario-format.md.");
  auto o = std::make_shared<RunOptions>();
  app->add_option("SCENARIO", o->path, "the scenario file (.json)")->required();
  app->add_option("--ticks", o->ticks, "run N ticks instead of the scenario's \"ticks\"")
      ->type_name("N")
      ->check(integer_in(0, 1ULL << 40));
  add_threads_option(*app, o->threads);
  app->add_option("--hashes", o->hashes,
                  "write one line per tick: the tick, then every entity's palette hash in id\n"
                  "order, 16 hex digits each, separated by spaces")
      ->type_name("OUT");
  app->add_flag("--no-progress", o->no_progress, "never draw the progress bar");
  app->add_flag("--events", o->events,
                "print every animation event as it happens (docs/events.md): \"event tick T entity E\n"
                "clip C marker M layer L weight W\"");
  return {app, [o] { return run(*o); }};
}

}  // namespace posecast::cli
