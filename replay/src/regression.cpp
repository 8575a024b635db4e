#include "posecast/replay/regression.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "posecast/hash.h"
#include "posecast/replay/divergence.h"
#include "posecast/replay/recorder.h"
#include "posecast/sim/scenario.h"
#include "posecast/sim/scenario_runner.h"
#include "decimal_text.h"

namespace posecast::replay {
namespace {

namespace fs = std::filesystem;

bool parse_hex(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

bool parse_uint(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

Result<std::string> read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot open '" + path.string() + "'"};
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Error{"cannot read '" + path.string() + "'"};
  return s.str();
}

Status write_text_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) return Error{"cannot write '" + tmp.string() + "'"};
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Error{"cannot replace '" + path.string() + "': " + ec.message()};
  return {};
}

bool is_generated(const std::string& source) { return source.rfind("gen-rig:", 0) == 0; }

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t') out += '?';
        else out += c;
    }
  }
  return out;
}

// The first entity whose palette hash differs between the run and a golden tick, with why.
std::pair<uint32_t, std::string> first_entity_difference(const sim::World& world, const GoldenTick& golden) {
  std::size_t i = 0, k = 0;
  while (i < world.entity_count() || k < golden.entities.size()) {
    const bool has_w = i < world.entity_count();
    const bool has_g = k < golden.entities.size();
    if (has_w && (!has_g || world.entity_id_at(i) < golden.entities[k].first)) {
      return {world.entity_id_at(i), "exists in this run but not in the golden"};
    }
    if (has_g && (!has_w || golden.entities[k].first < world.entity_id_at(i))) {
      return {golden.entities[k].first, "exists in the golden but not in this run"};
    }
    if (world.palette_hash_at(i) != golden.entities[k].second) {
      return {golden.entities[k].first, "palette hash " + hash_hex(world.palette_hash_at(i)) + ", golden " + hash_hex(golden.entities[k].second)};
    }
    ++i;
    ++k;
  }
  return {0, ""};
}

// Compares the run's palettes with a golden sample; prefers `entity`, else the worst entity.
std::optional<std::pair<uint32_t, JointDifference>> compare_sample(const sim::World& world, const PaletteSample& sample,
                                                                   std::optional<uint32_t> entity) {
  std::optional<std::pair<uint32_t, JointDifference>> best;
  for (const PaletteSample::Entity& e : sample.entities) {
    const Rig* rig = world.entity_rig(e.id);
    if (rig == nullptr) continue;
    const JointDifference d = compare_palettes(rig->skeleton, world.palette(e.id), sample_palette(e));
    if (d.differing_joints == 0) continue;
    if (entity && e.id == *entity) return std::make_pair(e.id, d);
    if (!best || d.displacement > best->second.displacement) best = std::make_pair(e.id, d);
  }
  return best;
}

// The golden run's state at `tick` as this build evaluates it: the golden recording's last
// checkpoint before the tick, re-simulated with its commands; compared with the current run's
// palettes (entity `entity` first). Nothing when the recording cannot be replayed or shows no
// difference (then the divergence is in evaluation, not in state).
std::optional<std::pair<uint32_t, JointDifference>> golden_state_difference(
    std::shared_ptr<const Recording> reference, const ModelLoader& loader, uint64_t tick, const sim::World& world,
    std::optional<uint32_t> entity) {
  if (tick < reference->first_tick() || tick >= reference->end_tick()) return std::nullopt;
  Result<std::unique_ptr<Replayer>> replayer = Replayer::create(std::move(reference), loader);
  if (!replayer || !replayer.value()->seek(tick)) return std::nullopt;
  replayer.value()->step();
  const sim::World& golden = replayer.value()->world();
  std::optional<std::pair<uint32_t, JointDifference>> best;
  for (std::size_t i = 0; i < golden.entity_count(); ++i) {
    const uint32_t id = golden.entity_id_at(i);
    const Rig* rig = world.entity_rig(id);
    const Rig* golden_rig = golden.entity_rig(id);
    if (rig == nullptr || golden_rig == nullptr || golden_rig->skeleton.joint_count() != rig->skeleton.joint_count()) continue;
    const JointDifference d = compare_palettes(rig->skeleton, world.palette(id), golden.palette_at(i));
    if (d.differing_joints == 0) continue;
    if (entity && id == *entity) return std::make_pair(id, d);
    if (!best || d.displacement > best->second.displacement) best = std::make_pair(id, d);
  }
  return best;
}

}  // namespace

const char* to_string(RegressResult result) {
  switch (result) {
    case RegressResult::kPass: return "ok";
    case RegressResult::kDiverged: return "DIVERGED";
    case RegressResult::kNoGolden: return "NO GOLDEN";
    case RegressResult::kSkipped: return "skipped";
    case RegressResult::kError: return "ERROR";
    case RegressResult::kUpdated: return "updated";
  }
  return "?";
}

bool is_failure(RegressResult r) {
  return r == RegressResult::kDiverged || r == RegressResult::kNoGolden || r == RegressResult::kError;
}

Result<std::vector<std::string>> find_scenarios(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error{"'" + dir + "' is not a folder"};
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") out.push_back(it->path().string());
  }
  if (ec) return Error{"reading '" + dir + "': " + ec.message()};
  std::sort(out.begin(), out.end());
  return out;
}

Result<Golden> parse_golden(const std::string& text, const std::string& file_name) {
  Golden g;
  bool has_ticks = false, has_final = false, has_run = false;
  std::istringstream in(text);
  std::string line;
  for (uint64_t line_no = 1; std::getline(in, line); ++line_no) {
    const std::string where = file_name + ":" + num(line_no) + ": ";
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string key;
    words >> key;
    std::string value;
    if (key == "tick") {
      uint64_t t = 0;
      if (!(words >> value) || !parse_uint(value, t)) return Error{where + "tick: expected a tick number"};
      if (t != g.per_tick.size()) return Error{where + "tick " + value + " out of order (expected " + num(g.per_tick.size()) + ")"};
      GoldenTick tick;
      if (!(words >> value) || !parse_hex(value, tick.world_hash)) return Error{where + "tick " + num(t) + ": expected the world hash"};
      while (words >> value) {
        const std::size_t colon = value.find(':');
        uint64_t id = 0, hash = 0;
        if (colon == std::string::npos || !parse_uint(value.substr(0, colon), id) || id > UINT32_MAX ||
            !parse_hex(value.substr(colon + 1), hash)) {
          return Error{where + "tick " + num(t) + ": '" + value + "' is not ID:HASH"};
        }
        if (!tick.entities.empty() && id <= tick.entities.back().first) return Error{where + "tick " + num(t) + ": entity ids not increasing"};
        tick.entities.emplace_back(static_cast<uint32_t>(id), hash);
      }
      g.per_tick.push_back(std::move(tick));
      continue;
    }
    if (!(words >> value)) return Error{where + key + ": missing value"};
    if (key == "ticks") {
      if (!parse_uint(value, g.ticks)) return Error{where + "ticks: '" + value + "' is not a number"};
      has_ticks = true;
    } else if (key == "final_world_hash") {
      if (!parse_hex(value, g.final_world_hash)) return Error{where + "final_world_hash: '" + value + "' is not hex"};
      has_final = true;
    } else if (key == "run_hash") {
      if (!parse_hex(value, g.run_hash)) return Error{where + "run_hash: '" + value + "' is not hex"};
      has_run = true;
    }
    // Other keys (e.g. palette_interval) are informative.
  }
  if (!has_ticks || !has_final || !has_run) return Error{file_name + ": needs ticks, final_world_hash and run_hash"};
  if (!g.per_tick.empty() && g.per_tick.size() != g.ticks) {
    return Error{file_name + ": " + num(g.per_tick.size()) + " tick lines for ticks " + num(g.ticks)};
  }
  return g;
}

std::string format_golden(const Golden& g, const std::string& scenario_file) {
  std::string s = "# Golden hashes of " + scenario_file + ", written by `posecast regress --update` (docs/regression.md).\n"
                  "# Change only for an intended change of results. Per tick: tick, world hash, entity:palette hash.\n";
  s += "ticks " + num(g.ticks) + "\nfinal_world_hash " + hash_hex(g.final_world_hash) + "\nrun_hash " + hash_hex(g.run_hash) + "\n";
  for (std::size_t t = 0; t < g.per_tick.size(); ++t) {
    s += "tick " + num(t) + " " + hash_hex(g.per_tick[t].world_hash);
    for (const auto& [id, hash] : g.per_tick[t].entities) s += " " + num(id) + ":" + hash_hex(hash);
    s += "\n";
  }
  return s;
}

namespace {

// How run_regression ends: its result, the details, and the table's one-line divergence.
struct Verdict {
  RegressResult result = RegressResult::kError;
  std::string details;
  std::string first_divergence = "-";
};

// A scenario file and the goldens beside it (<name>.hashes, <name>.pcrec).
struct ScenarioFiles {
  explicit ScenarioFiles(const fs::path& p)
      : path(p),
        dir(p.parent_path()),
        file_name(p.filename().string()),
        hashes(fs::path(p).replace_extension(".hashes")),
        recording(fs::path(p).replace_extension(".pcrec")) {}
  fs::path path;
  fs::path dir;
  std::string file_name;
  fs::path hashes;
  fs::path recording;
};

// The scenario parsed with its models loaded; `sources` as written in the file (relative to
// the folder the recording sits in), for the recording's header.
struct LoadedScenario {
  sim::Scenario scenario;
  std::vector<std::string> sources;
};

// Loads the scenario and its models (a model file that is not here: kSkipped).
std::optional<Verdict> load_scenario(const ScenarioFiles& files, const ModelLoader& loader,
                                     std::optional<LoadedScenario>& out) {
  Result<std::string> text = read_text(files.path);
  if (!text) return Verdict{RegressResult::kError, text.error().message};
  Result<sim::ScenarioHeader> header = sim::read_scenario_header(text.value(), files.file_name);
  if (!header) return Verdict{RegressResult::kError, header.error().message};
  std::vector<std::shared_ptr<const Model>> models;
  std::vector<std::string> sources;
  for (const sim::ScenarioModelSource& m : header->models) {
    std::string resolved = m.source;
    if (!is_generated(m.source)) {
      const fs::path p(m.source);
      resolved = (p.is_absolute() ? p : (files.dir / p)).lexically_normal().string();
      std::error_code ec;
      if (!fs::exists(resolved, ec)) {
        return Verdict{RegressResult::kSkipped, "models." + m.name + ": '" + resolved + "' is not here"};
      }
    }
    Result<std::shared_ptr<const Model>> model = loader(resolved);
    if (!model) {
      return Verdict{RegressResult::kError, files.file_name + ": models." + m.name + ": " + model.error().message};
    }
    models.push_back(std::move(model.value()));
    sources.push_back(m.source);
  }
  Result<sim::Scenario> scenario = sim::parse_scenario(text.value(), files.file_name, std::move(models));
  if (!scenario) return Verdict{RegressResult::kError, scenario.error().message};
  out = LoadedScenario{std::move(scenario.value()), std::move(sources)};
  return std::nullopt;
}

// The golden hashes (required) and the golden recording (optional: it names joints).
std::optional<Verdict> load_golden(const ScenarioFiles& files, std::optional<Golden>& golden,
                                   std::shared_ptr<const Recording>& reference) {
  Result<std::string> golden_text = read_text(files.hashes);
  if (!golden_text) {
    return Verdict{RegressResult::kNoGolden,
                   "no golden file " + files.hashes.string() + " (create it with --update)",
                   "no golden " + files.hashes.filename().string()};
  }
  Result<Golden> parsed = parse_golden(golden_text.value(), files.hashes.filename().string());
  if (!parsed) return Verdict{RegressResult::kError, parsed.error().message};
  golden = std::move(parsed.value());
  if (Result<std::shared_ptr<const Recording>> rec = read_recording_file(files.recording.string()); rec) {
    reference = rec.value();
  }
  return std::nullopt;
}

// --update: runs the scenario recording every tick's hashes and a recording with palettes,
// then replaces both goldens.
Verdict update_goldens(const ScenarioFiles& files, const LoadedScenario& loaded, sim::ScenarioRunner& runner,
                       const RegressOptions& options) {
  const std::string recording_tmp = files.recording.string() + ".tmp";
  const uint32_t interval = std::max<uint32_t>(1, options.palette_interval);
  RecorderConfig config;
  config.checkpoint_interval_ticks = interval;
  config.flush_interval_ticks = 1u << 30;  // one batch per checkpoint interval
  config.record_palettes = true;
  config.producer = "posecast regress --update";
  config.config = "scenario=" + files.file_name + "\nthreads=" + num(options.threads) + "\n";
  Result<std::unique_ptr<Recorder>> created = Recorder::create(recording_tmp, runner.world(), loaded.sources, config);
  if (!created) return Verdict{RegressResult::kError, created.error().message};
  Recorder& recorder = *created.value();

  const uint64_t ticks = loaded.scenario.header.ticks;
  const sim::World& world = runner.world();
  Golden produced;
  produced.ticks = ticks;
  for (uint64_t t = 0; t < ticks; ++t) {
    runner.step();
    GoldenTick tick;
    tick.world_hash = world.world_hash();
    for (std::size_t i = 0; i < world.entity_count(); ++i) tick.entities.emplace_back(world.entity_id_at(i), world.palette_hash_at(i));
    produced.per_tick.push_back(std::move(tick));
    Status s = recorder.record_tick(world);
    if (s && t + 1 == ticks && world.tick_index() % interval != 0) {
      s = recorder.append_checkpoint(world);  // palettes of the last tick too
    }
    if (!s) return Verdict{RegressResult::kError, s.error().message};
  }
  if (Status s = recorder.close(); !s) return Verdict{RegressResult::kError, s.error().message};
  produced.final_world_hash = world.world_hash();
  produced.run_hash = runner.run_hash();
  std::error_code ec;
  fs::rename(recording_tmp, files.recording, ec);
  if (ec) return Verdict{RegressResult::kError, "cannot replace '" + files.recording.string() + "': " + ec.message()};
  if (Status s = write_text_atomically(files.hashes, format_golden(produced, files.file_name)); !s) {
    return Verdict{RegressResult::kError, s.error().message};
  }
  return Verdict{RegressResult::kUpdated, "wrote " + files.hashes.string() + " and " + files.recording.string()};
}

// Where a run first left its golden: the tick and entity, and the joint that shows it, found
// in the golden run's state re-simulated to that tick (`exact`) or in a golden palette sample
// at or after it (`joint`).
struct Divergence {
  std::optional<uint64_t> tick;
  std::optional<uint32_t> entity;
  std::string text;
  struct FoundJoint {
    uint32_t entity;
    uint64_t tick;
    JointDifference difference;
  };
  std::optional<FoundJoint> joint;
  std::optional<std::pair<uint32_t, JointDifference>> exact;
};

// Runs the scenario to its end comparing every tick with the golden's per-tick hashes.
Divergence run_against_golden(const ScenarioFiles& files, sim::ScenarioRunner& runner, uint64_t ticks,
                              const Golden& golden, const std::shared_ptr<const Recording>& reference,
                              const ModelLoader& loader) {
  Divergence found;
  const ModelLoader resolving_loader = [&](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    const fs::path p(source);
    if (is_generated(source) || p.is_absolute()) return loader(source);
    return loader((files.dir / p).lexically_normal().string());
  };
  const sim::World& world = runner.world();
  for (uint64_t t = 0; t < ticks; ++t) {
    runner.step();
    if (golden.per_tick.empty()) continue;
    if (!found.tick && t < golden.per_tick.size()) {
      const GoldenTick& g = golden.per_tick[t];
      const auto [entity, why] = first_entity_difference(world, g);
      if (world.world_hash() != g.world_hash || !why.empty()) {
        found.tick = t;
        found.text = "tick " + num(t) + ": world hash " + hash_hex(world.world_hash()) + ", golden " + hash_hex(g.world_hash);
        if (!why.empty()) {
          found.entity = entity;
          found.text += "\n  entity " + num(entity) + ": " + why;
        }
        if (reference) found.exact = golden_state_difference(reference, resolving_loader, t, world, found.entity);
      }
    }
    if (found.tick && !found.joint && reference) {
      if (const PaletteSample* sample = reference->palettes_at(t); sample != nullptr) {
        if (auto joint = compare_sample(world, *sample, found.entity)) {
          found.joint = Divergence::FoundJoint{joint->first, t, joint->second};
        }
      }
    }
  }
  return found;
}

// The report of a diverged run: the divergence with its joints, and `final_text` (final hashes
// or tick count that differ, or empty).
Verdict diverged(const ScenarioFiles& files, const Divergence& d, const Golden& golden, bool has_reference,
                 const std::string& final_text) {
  Verdict v{RegressResult::kDiverged, ""};
  const std::string recording = files.recording.filename().string();
  if (d.tick) {
    v.first_divergence = "tick " + num(*d.tick);
    if (d.entity) v.first_divergence += " entity " + num(*d.entity);
    v.details = d.text + "\n";
    auto summarise = [&](const JointDifference& j, const std::string& suffix) {
      char size[32];
      std::snprintf(size, sizeof size, "%.4g", static_cast<double>(j.displacement));
      v.first_divergence += "; joint " + std::to_string(j.joint);
      if (!j.joint_name.empty()) v.first_divergence += " '" + j.joint_name + "'";
      v.first_divergence += " off by " + std::string(size) + suffix;
    };
    if (d.exact) {
      v.details += "  at tick " + num(*d.tick) + ": entity " + num(d.exact->first) + ", " + describe(d.exact->second) +
                   "\n    compared with the golden run's state (checkpoint in " + recording +
                   ") re-simulated to this tick by this build\n";
      summarise(d.exact->second, "");
    }
    if (d.joint) {
      v.details += "  at tick " + num(d.joint->tick) + ": entity " + num(d.joint->entity) + ", " +
                   describe(d.joint->difference) + "\n    compared with the golden palettes of that tick in " +
                   recording + "\n";
      if (!d.exact) summarise(d.joint->difference, " at tick " + num(d.joint->tick));
    }
    if (!has_reference) {
      v.details += "  note: no golden recording " + recording +
                   " with palettes: the joint cannot be named (run --update to create it)\n";
    } else if (!d.exact && !d.joint) {
      v.details += "  note: neither the golden state re-simulated to tick " + num(*d.tick) +
                   " nor any golden palette sample after it differs from this run's palettes\n";
    }
  } else {
    v.first_divergence = golden.per_tick.empty() ? "final hashes (golden has no per-tick hashes)" : "final hashes";
  }
  if (!final_text.empty()) v.details += "  " + final_text + "\n";
  return v;
}

// Runs the scenario against its goldens (`reference`: the golden recording, or null).
Verdict check_goldens(const ScenarioFiles& files, const LoadedScenario& loaded, sim::ScenarioRunner& runner,
                      const Golden& golden, const std::shared_ptr<const Recording>& reference,
                      const ModelLoader& loader) {
  const uint64_t ticks = loaded.scenario.header.ticks;
  const Divergence d = run_against_golden(files, runner, ticks, golden, reference, loader);
  const sim::World& world = runner.world();
  // Final values and tick count (the only checks a final-hashes-only golden allows).
  std::string final_text;
  if (golden.ticks != ticks) {
    final_text = "the scenario runs " + num(ticks) + " ticks, the golden has " + num(golden.ticks);
  } else if (world.world_hash() != golden.final_world_hash || runner.run_hash() != golden.run_hash) {
    final_text = "final world hash " + hash_hex(world.world_hash()) + " (golden " + hash_hex(golden.final_world_hash) +
                 "), run hash " + hash_hex(runner.run_hash()) + " (golden " + hash_hex(golden.run_hash) + ")";
  }
  if (!d.tick && final_text.empty()) return Verdict{RegressResult::kPass, ""};
  return diverged(files, d, golden, reference != nullptr, final_text);
}

}  // namespace

ScenarioOutcome run_regression(const std::string& scenario_path, const std::string& suite_dir,
                               const ModelLoader& loader, const RegressOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ScenarioOutcome out;
  out.path = scenario_path;
  const ScenarioFiles files{fs::path(scenario_path)};
  fs::path relative = files.path.lexically_relative(suite_dir);
  if (relative.empty()) relative = files.path.filename();
  out.name = relative.replace_extension().generic_string();
  auto finish = [&](Verdict v) {
    out.result = v.result;
    out.details = std::move(v.details);
    out.first_divergence = std::move(v.first_divergence);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };

  std::optional<LoadedScenario> loaded;
  if (std::optional<Verdict> stop = load_scenario(files, loader, loaded)) return finish(std::move(*stop));
  out.ticks = loaded->scenario.header.ticks;
  std::optional<Golden> golden;
  std::shared_ptr<const Recording> reference;
  if (!options.update) {
    if (std::optional<Verdict> stop = load_golden(files, golden, reference)) return finish(std::move(*stop));
  }
  Result<std::unique_ptr<sim::ScenarioRunner>> created = sim::ScenarioRunner::create(loaded->scenario, options.threads);
  if (!created) return finish(Verdict{RegressResult::kError, files.file_name + ": " + created.error().message});
  sim::ScenarioRunner& runner = *created.value();
  if (options.update) return finish(update_goldens(files, *loaded, runner, options));
  return finish(check_goldens(files, *loaded, runner, *golden, reference, loader));
}

std::string format_table(const std::vector<ScenarioOutcome>& outcomes) {
  std::size_t name_width = 8;
  for (const ScenarioOutcome& o : outcomes) name_width = std::max(name_width, o.name.size());
  std::string s;
  char buf[64];
  auto row = [&](const std::string& name, const std::string& ticks, const std::string& result, const std::string& first) {
    std::string line = name;
    line.resize(name_width + 2, ' ');
    std::snprintf(buf, sizeof buf, "%8s  %-10s", ticks.c_str(), result.c_str());
    line += buf;
    line += "  " + first + "\n";
    return line;
  };
  s += row("scenario", "ticks", "result", "first divergence");
  for (const ScenarioOutcome& o : outcomes) s += row(o.name, num(o.ticks), to_string(o.result), o.first_divergence);
  return s;
}

std::string junit_xml(const std::vector<ScenarioOutcome>& outcomes, const std::string& suite_name, double seconds) {
  std::size_t failures = 0, errors = 0, skipped = 0;
  for (const ScenarioOutcome& o : outcomes) {
    if (o.result == RegressResult::kDiverged || o.result == RegressResult::kNoGolden) ++failures;
    if (o.result == RegressResult::kError) ++errors;
    if (o.result == RegressResult::kSkipped) ++skipped;
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", seconds);
  const std::string counts = " tests=\"" + num(outcomes.size()) + "\" failures=\"" + num(failures) + "\" errors=\"" +
                             num(errors) + "\" skipped=\"" + num(skipped) + "\" time=\"" + time + "\"";
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"posecast regress\"" + counts + ">\n";
  x += "  <testsuite name=\"" + xml_escape(suite_name) + "\"" + counts + ">\n";
  for (const ScenarioOutcome& o : outcomes) {
    std::snprintf(time, sizeof time, "%.3f", o.seconds);
    x += "    <testcase classname=\"posecast.regress\" name=\"" + xml_escape(o.name) + "\" time=\"" + time + "\"";
    switch (o.result) {
      case RegressResult::kPass:
      case RegressResult::kUpdated:
        x += "/>\n";
        continue;
      case RegressResult::kSkipped:
        x += ">\n      <skipped message=\"" + xml_escape(o.details) + "\"/>\n";
        break;
      case RegressResult::kError:
        x += ">\n      <error message=\"" + xml_escape(o.details.substr(0, o.details.find('\n'))) + "\">" + xml_escape(o.details) + "</error>\n";
        break;
      case RegressResult::kDiverged:
      case RegressResult::kNoGolden:
        x += ">\n      <failure message=\"" + xml_escape(o.first_divergence) + "\">" + xml_escape(o.details) + "</failure>\n";
        break;
    }
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace posecast::replay
