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
    std::vector<glm::mat4> reference(e.matrices.size() / 16);
    for (std::size_t j = 0; j < reference.size(); ++j) {
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) reference[j][c][r] = e.matrices[j * 16 + static_cast<std::size_t>(c * 4 + r)];
      }
    }
    const JointDifference d = compare_palettes(rig->skeleton, world.palette(e.id), reference);
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

ScenarioOutcome run_regression(const std::string& scenario_path, const std::string& suite_dir,
                               const ModelLoader& loader, const RegressOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  ScenarioOutcome out;
  out.path = scenario_path;
  const fs::path path(scenario_path);
  fs::path relative = path.lexically_relative(suite_dir);
  if (relative.empty()) relative = path.filename();
  out.name = relative.replace_extension().generic_string();
  auto finish = [&](RegressResult result, std::string details) {
    out.result = result;
    out.details = std::move(details);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  const std::string file_name = path.filename().string();
  const fs::path dir = path.parent_path();
  const fs::path hashes_path = fs::path(path).replace_extension(".hashes");
  const fs::path recording_path = fs::path(path).replace_extension(".pcrec");

  Result<std::string> text = read_text(path);
  if (!text) return finish(RegressResult::kError, text.error().message);
  Result<sim::ScenarioHeader> header = sim::read_scenario_header(text.value(), file_name);
  if (!header) return finish(RegressResult::kError, header.error().message);
  std::vector<std::shared_ptr<const Model>> models;
  std::vector<std::string> sources;
  for (const sim::ScenarioModelSource& m : header->models) {
    std::string resolved = m.source;
    if (!is_generated(m.source)) {
      const fs::path p(m.source);
      resolved = (p.is_absolute() ? p : (dir / p)).lexically_normal().string();
      std::error_code ec;
      if (!fs::exists(resolved, ec)) return finish(RegressResult::kSkipped, "models." + m.name + ": '" + resolved + "' is not here");
    }
    Result<std::shared_ptr<const Model>> model = loader(resolved);
    if (!model) return finish(RegressResult::kError, file_name + ": models." + m.name + ": " + model.error().message);
    models.push_back(std::move(model.value()));
    sources.push_back(m.source);  // as written: relative to the folder the recording sits in
  }
  Result<sim::Scenario> scenario = sim::parse_scenario(text.value(), file_name, std::move(models));
  if (!scenario) return finish(RegressResult::kError, scenario.error().message);
  out.ticks = scenario->header.ticks;

  std::optional<Golden> golden;
  std::shared_ptr<const Recording> reference;
  if (!options.update) {
    Result<std::string> golden_text = read_text(hashes_path);
    if (!golden_text) {
      out.first_divergence = "no golden " + hashes_path.filename().string();
      return finish(RegressResult::kNoGolden, "no golden file " + hashes_path.string() + " (create it with --update)");
    }
    Result<Golden> parsed = parse_golden(golden_text.value(), hashes_path.filename().string());
    if (!parsed) return finish(RegressResult::kError, parsed.error().message);
    golden = std::move(parsed.value());
    if (Result<std::shared_ptr<const Recording>> rec = read_recording_file(recording_path.string()); rec) {
      reference = rec.value();
    }
  }

  Result<std::unique_ptr<sim::ScenarioRunner>> created = sim::ScenarioRunner::create(scenario.value(), options.threads);
  if (!created) return finish(RegressResult::kError, file_name + ": " + created.error().message);
  sim::ScenarioRunner& runner = *created.value();

  std::unique_ptr<Recorder> recorder;
  const std::string recording_tmp = recording_path.string() + ".tmp";
  if (options.update) {
    RecorderConfig config;
    config.checkpoint_interval_ticks = std::max<uint32_t>(1, options.palette_interval);
    config.flush_interval_ticks = 1u << 30;  // one batch per checkpoint interval
    config.record_palettes = true;
    config.producer = "posecast regress --update";
    config.config = "scenario=" + file_name + "\nthreads=" + num(options.threads) + "\n";
    Result<std::unique_ptr<Recorder>> r = Recorder::create(recording_tmp, runner.world(), sources, config);
    if (!r) return finish(RegressResult::kError, r.error().message);
    recorder = std::move(r.value());
  }

  Golden produced;
  produced.ticks = scenario->header.ticks;
  // The first divergence, then the joint at the first palette sample that shows a difference.
  std::optional<uint64_t> diverged_tick;
  std::optional<uint32_t> diverged_entity;
  std::string divergence_text;
  struct FoundJoint {
    uint32_t entity;
    uint64_t tick;
    JointDifference difference;
  };
  std::optional<FoundJoint> joint;
  std::optional<std::pair<uint32_t, JointDifference>> exact;
  const ModelLoader resolving_loader = [&](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    const fs::path p(source);
    if (is_generated(source) || p.is_absolute()) return loader(source);
    return loader((dir / p).lexically_normal().string());
  };
  const sim::World& world = runner.world();
  for (uint64_t t = 0; t < scenario->header.ticks; ++t) {
    runner.step();
    if (recorder) {
      GoldenTick tick;
      tick.world_hash = world.world_hash();
      for (std::size_t i = 0; i < world.entity_count(); ++i) tick.entities.emplace_back(world.entity_id_at(i), world.palette_hash_at(i));
      produced.per_tick.push_back(std::move(tick));
      Status s = recorder->record_tick(world);
      if (s && t + 1 == scenario->header.ticks && world.tick_index() % std::max<uint32_t>(1, options.palette_interval) != 0) {
        s = recorder->append_checkpoint(world);  // palettes of the last tick too
      }
      if (!s) return finish(RegressResult::kError, s.error().message);
      continue;
    }
    if (!golden || golden->per_tick.empty()) continue;
    if (!diverged_tick && t < golden->per_tick.size()) {
      const GoldenTick& g = golden->per_tick[t];
      const auto [entity, why] = first_entity_difference(world, g);
      if (world.world_hash() != g.world_hash || !why.empty()) {
        diverged_tick = t;
        divergence_text = "tick " + num(t) + ": world hash " + hash_hex(world.world_hash()) + ", golden " + hash_hex(g.world_hash);
        if (!why.empty()) {
          diverged_entity = entity;
          divergence_text += "\n  entity " + num(entity) + ": " + why;
        }
        if (reference) exact = golden_state_difference(reference, resolving_loader, t, world, diverged_entity);
      }
    }
    if (diverged_tick && !joint && reference) {
      if (const PaletteSample* sample = reference->palettes_at(t); sample != nullptr) {
        if (auto found = compare_sample(world, *sample, diverged_entity)) joint = FoundJoint{found->first, t, found->second};
      }
    }
  }

  if (recorder) {
    if (Status s = recorder->close(); !s) return finish(RegressResult::kError, s.error().message);
    produced.final_world_hash = world.world_hash();
    produced.run_hash = runner.run_hash();
    std::error_code ec;
    fs::rename(recording_tmp, recording_path, ec);
    if (ec) return finish(RegressResult::kError, "cannot replace '" + recording_path.string() + "': " + ec.message());
    if (Status s = write_text_atomically(hashes_path, format_golden(produced, file_name)); !s) {
      return finish(RegressResult::kError, s.error().message);
    }
    return finish(RegressResult::kUpdated, "wrote " + hashes_path.string() + " and " + recording_path.string());
  }

  // Final values and tick count (the only checks a final-hashes-only golden allows).
  std::string final_text;
  if (golden->ticks != scenario->header.ticks) {
    final_text = "the scenario runs " + num(scenario->header.ticks) + " ticks, the golden has " + num(golden->ticks);
  } else if (world.world_hash() != golden->final_world_hash || runner.run_hash() != golden->run_hash) {
    final_text = "final world hash " + hash_hex(world.world_hash()) + " (golden " + hash_hex(golden->final_world_hash) +
                 "), run hash " + hash_hex(runner.run_hash()) + " (golden " + hash_hex(golden->run_hash) + ")";
  }
  if (!diverged_tick && final_text.empty()) return finish(RegressResult::kPass, "");

  std::string details;
  if (diverged_tick) {
    out.first_divergence = "tick " + num(*diverged_tick);
    if (diverged_entity) out.first_divergence += " entity " + num(*diverged_entity);
    details = divergence_text + "\n";
    auto summarise = [&](const JointDifference& d, const std::string& suffix) {
      char size[32];
      std::snprintf(size, sizeof size, "%.4g", static_cast<double>(d.displacement));
      out.first_divergence += "; joint " + std::to_string(d.joint);
      if (!d.joint_name.empty()) out.first_divergence += " '" + d.joint_name + "'";
      out.first_divergence += " off by " + std::string(size) + suffix;
    };
    if (exact) {
      details += "  at tick " + num(*diverged_tick) + ": entity " + num(exact->first) + ", " + describe(exact->second) +
                 "\n    compared with the golden run's state (checkpoint in " + recording_path.filename().string() +
                 ") re-simulated to this tick by this build\n";
      summarise(exact->second, "");
    }
    if (joint) {
      details += "  at tick " + num(joint->tick) + ": entity " + num(joint->entity) + ", " + describe(joint->difference) +
                 "\n    compared with the golden palettes of that tick in " + recording_path.filename().string() + "\n";
      if (!exact) summarise(joint->difference, " at tick " + num(joint->tick));
    }
    if (!reference) {
      details += "  note: no golden recording " + recording_path.filename().string() +
                 " with palettes: the joint cannot be named (run --update to create it)\n";
    } else if (!exact && !joint) {
      details += "  note: neither the golden state re-simulated to tick " + num(*diverged_tick) +
                 " nor any golden palette sample after it differs from this run's palettes\n";
    }
  } else {
    out.first_divergence = golden->per_tick.empty() ? "final hashes (golden has no per-tick hashes)" : "final hashes";
  }
  if (!final_text.empty()) details += "  " + final_text + "\n";
  return finish(RegressResult::kDiverged, details);
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
