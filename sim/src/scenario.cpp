#include "posecast/sim/scenario.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "json_fields.h"
#include "locomotion.h"

namespace posecast::sim {
namespace {

constexpr int64_t kMaxTick = int64_t{1} << 40;
constexpr int64_t kMaxCount = 1000000;
// Commands after "count" expansion, over the whole file: each is a 96-byte Command and a bind
// step, so without a cap 5 KB of text (70 commands of count 1,000,000) asks for about 7 GB.
// 4,000,000 (384 MB) is enough for a million entities with a spawn, a play and two more
// commands each.
constexpr uint64_t kMaxExpandedCommands = 4000000;
constexpr double kMaxSpeed = 32767.0;         // 16.16 fixed point
constexpr double kMaxOffsetMs = 1e12;         // about 31 years
constexpr double kMaxDurationMs = 1e9;

std::string str(int64_t v) { return std::to_string(v); }

// Line and column (1-based) of a byte offset, for syntax errors.
std::string line_column(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return str(static_cast<int64_t>(line)) + ":" + str(static_cast<int64_t>(column));
}

Result<Json> parse_json(std::string_view text, const std::string& file) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte is one past the offending character.
    std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) what = what.substr(bracket + 2);
    return Error{file + ":" + line_column(text, e.byte == 0 ? 0 : e.byte - 1) + ": invalid JSON: " + what};
  }
}

SpeedQ16 to_speed(double speed) { return static_cast<SpeedQ16>(std::llround(speed * 65536.0)); }
int64_t ms_to_us(double ms) { return static_cast<int64_t>(std::llround(ms * 1000.0)); }

std::string clip_list(const Rig& rig) {
  std::string list;
  for (const Clip& c : rig.clips) list += (list.empty() ? "" : ", ") + c.name;
  return list.empty() ? "no clips" : list;
}

// What the binder knows about a live entity while it walks the commands in tick order.
struct LiveEntity {
  std::size_t model = 0;
  uint16_t rig = 0;
  std::array<uint8_t, kMaxLayers> clips_per_layer{};  // the target motion's clip count
};

class ScenarioParser {
 public:
  ScenarioParser(std::string_view text, const std::string& file)
      : text_(text), file_(file), f_(file) {}

  Result<ScenarioHeader> header() {
    Result<Json> parsed = parse_json(text_, file_);
    if (!parsed) return parsed.error();
    root_ = std::move(parsed.value());
    if (!root_.is_object()) return f_.error("", "the scenario must be a JSON object");
    if (Status s = f_.only(root_, "", {"posecast_scenario", "description", "tick_rate", "ticks",
                                       "models", "masks", "commands"});
        !s) {
      return s.error();
    }
    ScenarioHeader h;
    Result<int64_t> version = f_.integer(root_, "", "posecast_scenario", 0,
                                         std::numeric_limits<int32_t>::max(), std::nullopt);
    if (!version) return version.error();
    if (version.value() != kScenarioFormatVersion) {
      return f_.error("posecast_scenario", "format version " + str(version.value()) +
                                               " is not supported (this build reads " +
                                               str(kScenarioFormatVersion) + ")");
    }
    Result<std::string> description = f_.string(root_, "", "description", std::string());
    if (!description) return description.error();
    h.description = description.value();
    Result<int64_t> rate = f_.integer(root_, "", "tick_rate", 1, 100000, 60);
    if (!rate) return rate.error();
    h.tick_rate_hz = static_cast<uint32_t>(rate.value());

    const auto models = root_.find("models");
    if (models == root_.end()) return f_.error("models", "missing (an object of name: source)");
    if (!models->is_object() || models->empty()) {
      return f_.error("models", "must be a non-empty object of name: source");
    }
    for (auto it = models->begin(); it != models->end(); ++it) {
      const std::string where = "models." + it.key();
      if (!it->is_string() || it->get<std::string>().empty()) {
        return f_.error(where, "must be a non-empty string: a .gltf/.glb path or gen-rig:N");
      }
      h.models.push_back({it.key(), it->get<std::string>()});
    }

    const auto commands = root_.find("commands");
    if (commands != root_.end() && !commands->is_array()) {
      return f_.error("commands", "must be an array of commands");
    }
    // Default length: up to and including the last command's tick (checked fully later).
    int64_t last_tick = -1;
    if (commands != root_.end()) {
      for (const Json& c : *commands) {
        if (!c.is_object()) continue;
        const auto t = c.find("tick");
        if (t != c.end() && t->is_number_integer() && !t->is_number_unsigned()) {
          last_tick = std::max(last_tick, t->get<int64_t>());
        } else if (t != c.end() && t->is_number_unsigned()) {
          last_tick = std::max<int64_t>(last_tick, static_cast<int64_t>(std::min<uint64_t>(t->get<uint64_t>(), kMaxTick)));
        }
      }
    }
    Result<int64_t> ticks = f_.integer(root_, "", "ticks", 1, kMaxTick, std::max<int64_t>(1, last_tick + 1));
    if (!ticks) return ticks.error();
    h.ticks = static_cast<uint64_t>(ticks.value());
    return h;
  }

  Result<Scenario> scenario(std::vector<std::shared_ptr<const Model>> models) {
    Result<ScenarioHeader> h = header();
    if (!h) return h.error();
    Scenario s;
    s.header = std::move(h.value());
    if (models.size() != s.header.models.size()) {
      return f_.error("models", str(static_cast<int64_t>(models.size())) + " models given for " +
                                    str(static_cast<int64_t>(s.header.models.size())) + " named");
    }
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (!models[i] || models[i]->rigs.empty()) {
        return f_.error("models." + s.header.models[i].name, "the model has no rig");
      }
    }
    s.models = std::move(models);
    scenario_ = &s;
    if (Status st = parse_masks(); !st) return st.error();
    if (Status st = parse_commands(); !st) return st.error();
    return s;
  }

 private:
  Result<std::size_t> model_index(const std::string& path, const std::string& name) const {
    for (std::size_t i = 0; i < scenario_->header.models.size(); ++i) {
      if (scenario_->header.models[i].name == name) return i;
    }
    return f_.error(path, "unknown model '" + name + "' (not in \"models\")");
  }

  Status parse_masks() {
    const auto masks = root_.find("masks");
    if (masks == root_.end()) return {};
    if (!masks->is_object()) return f_.error("masks", "must be an object of name: mask");
    for (auto it = masks->begin(); it != masks->end(); ++it) {
      const std::string path = "masks." + it.key();
      const Json& m = *it;
      if (!m.is_object()) return f_.error(path, "must be an object");
      if (Status st = f_.only(m, path, {"model", "rig", "joints", "descendants", "weight", "comment"}); !st) return st;
      Result<std::string> model_name = f_.string(m, path, "model", std::nullopt);
      if (!model_name) return model_name.error();
      Result<std::size_t> model = model_index(path + ".model", model_name.value());
      if (!model) return model.error();
      const Model& mdl = *scenario_->models[model.value()];
      Result<int64_t> rig = f_.integer(m, path, "rig", 0, static_cast<int64_t>(mdl.rigs.size()) - 1, 0);
      if (!rig) return rig.error();
      const auto joints = m.find("joints");
      if (joints == m.end() || !joints->is_array() || joints->empty()) {
        return f_.error(path + ".joints", "must be a non-empty array of joint names");
      }
      std::vector<std::string> names;
      for (std::size_t j = 0; j < joints->size(); ++j) {
        if (!(*joints)[j].is_string()) return f_.error(path + ".joints[" + str(static_cast<int64_t>(j)) + "]", "must be a string");
        names.push_back((*joints)[j].get<std::string>());
      }
      Result<bool> descendants = f_.boolean(m, path, "descendants", true);
      if (!descendants) return descendants.error();
      Result<double> weight = f_.number(m, path, "weight", 0.0, 1.0, 1.0);
      if (!weight) return weight.error();
      const Rig& r = mdl.rigs[static_cast<std::size_t>(rig.value())];
      Result<std::vector<float>> weights = mask_weights_from_joint_names(
          r.skeleton, names, descendants.value(), static_cast<float>(weight.value()));
      if (!weights) return f_.error(path + ".joints", weights.error().message);
      JointMask mask;
      mask.name = it.key();
      mask.model = static_cast<ModelId>(model.value());
      mask.rig = static_cast<uint16_t>(rig.value());
      mask.node_weights = std::move(weights.value());
      scenario_->masks.push_back(std::move(mask));
    }
    return {};
  }

  struct RawCommand {
    std::size_t index = 0;
    uint64_t tick = 0;
    EntityId entity = 0;
    uint32_t count = 1;
    std::string op;
  };

  Status parse_commands() {
    const auto commands = root_.find("commands");
    if (commands == root_.end()) return {};
    std::vector<RawCommand> raw;
    for (std::size_t i = 0; i < commands->size(); ++i) {
      const std::string path = "commands[" + str(static_cast<int64_t>(i)) + "]";
      const Json& c = (*commands)[i];
      if (!c.is_object()) return f_.error(path, "must be an object");
      RawCommand r;
      r.index = i;
      Result<int64_t> tick = f_.integer(c, path, "tick", 0, kMaxTick, std::nullopt);
      if (!tick) return tick.error();
      Result<std::string> op = f_.string(c, path, "op", std::nullopt);
      if (!op) return op.error();
      Result<int64_t> entity = f_.integer(c, path, "entity", 0, std::numeric_limits<uint32_t>::max(), std::nullopt);
      if (!entity) return entity.error();
      Result<int64_t> count = f_.integer(c, path, "count", 1, kMaxCount, 1);
      if (!count) return count.error();
      if (entity.value() + count.value() - 1 > static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) {
        return f_.error(path + ".count", "entity + count - 1 exceeds the largest entity id");
      }
      r.tick = static_cast<uint64_t>(tick.value());
      r.op = op.value();
      r.entity = static_cast<EntityId>(entity.value());
      r.count = static_cast<uint32_t>(count.value());
      raw.push_back(std::move(r));
    }
    uint64_t expanded = 0;
    for (const RawCommand& r : raw) expanded += r.count;
    if (expanded > kMaxExpandedCommands) {
      return f_.error("commands", str(static_cast<int64_t>(expanded)) +
                                      " commands after \"count\" expansion; at most " +
                                      str(static_cast<int64_t>(kMaxExpandedCommands)));
    }
    // Bind in the order the world applies them: by tick, file order within a tick.
    std::stable_sort(raw.begin(), raw.end(), [](const RawCommand& a, const RawCommand& b) { return a.tick < b.tick; });
    for (const RawCommand& r : raw) {
      const std::string path = "commands[" + str(static_cast<int64_t>(r.index)) + "]";
      const Json& c = (*commands)[r.index];
      for (uint32_t k = 0; k < r.count; ++k) {
        Command command;
        command.tick = r.tick;
        command.entity = r.entity + k;
        Status st = bind(c, path, r, k, command);
        if (!st) return st;
        scenario_->commands.push_back(std::move(command));
      }
    }
    return {};
  }

  // Binds one expanded command (the k-th of its "count") of an entity to the scenario's
  // models, rigs, clips and masks: the op's own fields are checked here.
  Status bind(const Json& c, const std::string& path, const RawCommand& r, uint32_t k, Command& out) {
    const EntityId id = out.entity;
    const std::string who = "entity " + str(id) + " at tick " + str(static_cast<int64_t>(r.tick));
    if (r.op == "spawn") return bind_spawn(c, path, who, id, k, out);
    const auto live = live_.find(id);
    static const char* const kOps[] = {"despawn", "play", "crossfade", "set_speed", "set_layer_weight",
                                       "set_mask", "set_blend_weights", "set_layer_mode",
                                       "teleport", "move", "move_to", "path"};
    if (std::find(std::begin(kOps), std::end(kOps), r.op) == std::end(kOps)) {
      return f_.error(path + ".op", "unknown op '" + r.op +
                                        "' (spawn, despawn, play, crossfade, set_speed, "
                                        "set_layer_weight, set_mask, set_blend_weights, set_layer_mode, "
                                        "teleport, move, move_to, path)");
    }
    if (live == live_.end()) return f_.error(path + ".entity", who + " is not spawned");
    if (r.op == "teleport" || r.op == "move" || r.op == "move_to" || r.op == "path") {
      if (r.op != "teleport") {
        const LiveEntity& e = live->second;
        if (Status st = check_locomotion_rig(scenario_->models[e.model]->rigs[e.rig]); !st) {
          return f_.error(path + ".op", r.op + " for " + who + " (model '" +
                                            scenario_->header.models[e.model].name + "'): " + st.error().message);
        }
      }
      return bind_movement(c, path, r, k, out);
    }
    if (r.op == "despawn") {
      if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment"}); !st) return st;
      live_.erase(live);
      out.body = DespawnCommand{};
      return {};
    }
    Result<int64_t> layer = f_.integer(c, path, "layer", 0, kMaxLayers - 1, 0);
    if (!layer) return layer.error();
    LiveEntity& e = live->second;
    const Bound b{c, path, who, k, e, scenario_->models[e.model]->rigs[e.rig],
                  scenario_->header.models[e.model].name, static_cast<uint8_t>(layer.value())};
    if (r.op == "play" || r.op == "crossfade") return bind_motion(b, r.op == "crossfade", out);
    if (r.op == "set_speed") {
      if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "speed", "speed_step"}); !st) return st;
      Result<SpeedQ16> speed = parse_speed(c, path, k, std::nullopt);
      if (!speed) return speed.error();
      out.body = SetSpeedCommand{b.layer, speed.value()};
      return {};
    }
    if (r.op == "set_layer_weight") {
      if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "weight"}); !st) return st;
      Result<double> weight = f_.number(c, path, "weight", -1000.0, 1000.0, std::nullopt);
      if (!weight) return weight.error();
      out.body = SetLayerWeightCommand{b.layer, static_cast<float>(weight.value())};
      return {};
    }
    if (r.op == "set_mask") return bind_mask(b, out);
    if (r.op == "set_blend_weights") return bind_blend_weights(b, out);
    return bind_layer_mode(b, out);
  }

  // What bind knows of a command on a live entity, for the ops that have more to check.
  struct Bound {
    const Json& c;
    const std::string& path;
    const std::string& who;        // "entity <id> at tick <tick>", for messages
    uint32_t k;                    // index within the command's "count" expansion
    LiveEntity& e;
    const Rig& rig;
    const std::string& model_name;
    uint8_t layer;
  };

  Status bind_spawn(const Json& c, const std::string& path, const std::string& who, EntityId id,
                    uint32_t k, Command& out) {
    if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "model", "rig", "x", "z", "yaw", "x_step", "z_step", "yaw_step"}); !st) return st;
    if (live_.count(id) != 0) return f_.error(path + ".entity", who + " is already spawned");
    Result<RootTransform> at = parse_place(c, path, k, true);
    if (!at) return at.error();
    Result<std::string> name = f_.string(c, path, "model", std::nullopt);
    if (!name) return name.error();
    Result<std::size_t> model = model_index(path + ".model", name.value());
    if (!model) return model.error();
    const Model& m = *scenario_->models[model.value()];
    Result<int64_t> rig = f_.integer(c, path, "rig", 0, static_cast<int64_t>(m.rigs.size()) - 1, 0);
    if (!rig) return rig.error();
    live_[id] = LiveEntity{model.value(), static_cast<uint16_t>(rig.value()), {}};
    out.body = SpawnCommand{static_cast<ModelId>(model.value()), static_cast<uint16_t>(rig.value()), at.value()};
    return {};
  }

  // A ground point: "x" and "z" (plus k times "x_step" / "z_step"), inside the world; with
  // `yaw`, "yaw" in degrees (plus k times "yaw_step"). Missing fields are 0.
  Result<RootTransform> parse_place(const Json& c, const std::string& path, uint32_t k, bool yaw) const {
    const double ext = static_cast<double>(kWorldHalfExtent);
    RootTransform at;
    const char* keys[2][2] = {{"x", "x_step"}, {"z", "z_step"}};
    float* out[2] = {&at.x, &at.z};
    for (int i = 0; i < 2; ++i) {
      Result<double> v = f_.number(c, path, keys[i][0], -ext, ext, 0.0);
      if (!v) return v.error();
      Result<double> step = f_.number(c, path, keys[i][1], -ext, ext, 0.0);
      if (!step) return step.error();
      const double value = v.value() + static_cast<double>(k) * step.value();
      if (!(value >= -ext && value <= ext)) {
        return f_.error(path + "." + keys[i][1], std::string(keys[i][0]) + " for entity +" + str(k) +
                                                     " leaves the world (|" + keys[i][0] + "| <= " +
                                                     str(static_cast<int64_t>(ext)) + ")");
      }
      *out[i] = static_cast<float>(value);
    }
    if (yaw) {
      Result<double> deg = f_.number(c, path, "yaw", -36000.0, 36000.0, 0.0);
      if (!deg) return deg.error();
      Result<double> step = f_.number(c, path, "yaw_step", -36000.0, 36000.0, 0.0);
      if (!step) return step.error();
      const double d = std::fmod(deg.value() + static_cast<double>(k) * step.value(), 360.0);
      at.yaw = static_cast<float>(d * (3.14159265358979323846 / 180.0));
    }
    return at;
  }

  // A movement speed: "speed" (units/s) plus k times "speed_step", in 0..kMaxMoveSpeed (above 0
  // unless `zero_allowed`).
  Result<float> parse_move_speed(const Json& c, const std::string& path, uint32_t k, bool zero_allowed) const {
    const double max = static_cast<double>(kMaxMoveSpeed);
    Result<double> v = f_.number(c, path, "speed", 0.0, max, zero_allowed ? std::optional<double>(0.0) : std::nullopt);
    if (!v) return v.error();
    Result<double> step = f_.number(c, path, "speed_step", -max, max, 0.0);
    if (!step) return step.error();
    const double value = v.value() + static_cast<double>(k) * step.value();
    if (!(value >= 0.0 && value <= max) || (!zero_allowed && value == 0.0)) {
      return f_.error(path + ".speed", "speed for entity +" + str(k) + " is out of range (" +
                                           (zero_allowed ? "0" : "above 0") + ".." + str(static_cast<int64_t>(max)) + ")");
    }
    return static_cast<float>(value);
  }

  // teleport, move, move_to, path (a path is a move_to to its first point and queued move_tos
  // to the others: it expands into several commands, appended by the caller).
  Status bind_movement(const Json& c, const std::string& path, const RawCommand& r, uint32_t k, Command& out) {
    if (r.op == "teleport") {
      if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "x", "z", "yaw", "x_step", "z_step", "yaw_step"}); !st) return st;
      Result<RootTransform> at = parse_place(c, path, k, true);
      if (!at) return at.error();
      out.body = TeleportCommand{at.value().x, at.value().z, at.value().yaw};
      return {};
    }
    if (r.op == "move") {
      if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "speed", "speed_step", "turn_rate"}); !st) return st;
      Result<float> speed = parse_move_speed(c, path, k, true);
      if (!speed) return speed.error();
      const double max_turn = static_cast<double>(kMaxTurnRate) * 180.0 / 3.14159265358979323846;
      Result<double> turn = f_.number(c, path, "turn_rate", -max_turn, max_turn, 0.0);
      if (!turn) return turn.error();
      const float rad = static_cast<float>(turn.value() * (3.14159265358979323846 / 180.0));
      out.body = MoveCommand{speed.value(), std::clamp(rad, -kMaxTurnRate, kMaxTurnRate)};
      return {};
    }
    if (r.op == "move_to") {
      if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "x", "z", "x_step", "z_step", "speed", "speed_step", "queue"}); !st) return st;
      Result<RootTransform> at = parse_place(c, path, k, false);
      if (!at) return at.error();
      Result<float> speed = parse_move_speed(c, path, k, false);
      if (!speed) return speed.error();
      Result<bool> queue = f_.boolean(c, path, "queue", false);
      if (!queue) return queue.error();
      out.body = MoveToCommand{at.value().x, at.value().z, speed.value(), queue.value()};
      return {};
    }
    if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "points", "x_step", "z_step", "speed", "speed_step"}); !st) return st;
    Result<float> speed = parse_move_speed(c, path, k, false);
    if (!speed) return speed.error();
    const auto points = c.find("points");
    if (points == c.end() || !points->is_array() || points->empty() || points->size() > kMaxWaypoints + 1) {
      return f_.error(path + ".points", "must be an array of 1.." + str(static_cast<int64_t>(kMaxWaypoints + 1)) + " [x, z] points");
    }
    for (std::size_t i = 0; i < points->size(); ++i) {
      const std::string ppath = path + ".points[" + str(static_cast<int64_t>(i)) + "]";
      const Json& p = (*points)[i];
      if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) {
        return f_.error(ppath, "must be [x, z] (two numbers)");
      }
      Json place = Json::object({{"x", p[0]}, {"z", p[1]}});
      if (const auto xs = c.find("x_step"); xs != c.end()) place["x_step"] = *xs;
      if (const auto zs = c.find("z_step"); zs != c.end()) place["z_step"] = *zs;
      Result<RootTransform> at = parse_place(place, ppath, k, false);
      if (!at) return at.error();
      const MoveToCommand move{at.value().x, at.value().z, speed.value(), i > 0};
      if (i + 1 == points->size()) {
        out.body = move;  // the caller appends `out` last
      } else {
        Command extra = out;
        extra.body = move;
        scenario_->commands.push_back(std::move(extra));
      }
    }
    return {};
  }

  // play, or crossfade (`fade`).
  Status bind_motion(const Bound& b, bool fade, Command& out) {
    const Json& c = b.c;
    const std::string& path = b.path;
    if (Status st = fade ? f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "clip", "blend", "wrap", "speed", "speed_step", "offset_ms", "offset_step_ms", "root_motion", "duration_ms", "sync"})
                         : f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "clip", "blend", "wrap", "speed", "speed_step", "offset_ms", "offset_step_ms", "root_motion"});
        !st) {
      return st;
    }
    MotionSpec spec;
    if (Status st = parse_motion(c, path, b.k, b.rig, b.model_name, spec); !st) return st;
    Result<bool> root_motion = f_.boolean(c, path, "root_motion", true);
    if (!root_motion) return root_motion.error();
    spec.root_motion = root_motion.value();
    b.e.clips_per_layer[b.layer] = spec.count;
    if (!fade) {
      out.body = PlayCommand{b.layer, spec};
      return {};
    }
    Result<double> duration = f_.number(c, path, "duration_ms", 0.0, kMaxDurationMs, std::nullopt);
    if (!duration) return duration.error();
    Result<bool> sync = f_.boolean(c, path, "sync", false);
    if (!sync) return sync.error();
    out.body = CrossfadeCommand{b.layer, spec, ms_to_us(duration.value()), sync.value()};
    return {};
  }

  Status bind_mask(const Bound& b, Command& out) {
    const Json& c = b.c;
    const std::string& path = b.path;
    if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "mask"}); !st) return st;
    const auto mask = c.find("mask");
    if (mask == c.end()) return f_.error(path + ".mask", "missing (a mask name, or null for none)");
    int32_t id_value = kNoMask;
    if (!mask->is_null()) {
      if (!mask->is_string()) return f_.error(path + ".mask", "must be a mask name or null");
      const std::string name = mask->get<std::string>();
      const auto& masks = scenario_->masks;
      const auto found = std::find_if(masks.begin(), masks.end(), [&](const JointMask& m) { return m.name == name; });
      if (found == masks.end()) return f_.error(path + ".mask", "unknown mask '" + name + "' (not in \"masks\")");
      if (found->model != b.e.model || found->rig != b.e.rig) {
        return f_.error(path + ".mask", "mask '" + name + "' is for model '" +
                                            scenario_->header.models[found->model].name + "' rig " +
                                            str(found->rig) + ", " + b.who + " uses '" + b.model_name +
                                            "' rig " + str(b.e.rig));
      }
      id_value = static_cast<int32_t>(found - masks.begin());
    }
    out.body = SetMaskCommand{b.layer, id_value};
    return {};
  }

  Status bind_blend_weights(const Bound& b, Command& out) {
    const Json& c = b.c;
    const std::string& path = b.path;
    if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "weights"}); !st) return st;
    const auto weights = c.find("weights");
    if (weights == c.end() || !weights->is_array()) return f_.error(path + ".weights", "must be an array of numbers");
    const uint8_t playing = b.e.clips_per_layer[b.layer];
    if (playing == 0) return f_.error(path + ".layer", "layer " + str(b.layer) + " of " + b.who + " plays nothing");
    if (weights->size() != playing) {
      return f_.error(path + ".weights", str(static_cast<int64_t>(weights->size())) + " weights for a motion of " + str(playing) + " clips");
    }
    SetBlendWeightsCommand body;
    body.layer = b.layer;
    body.count = playing;
    for (std::size_t i = 0; i < weights->size(); ++i) {
      const Json& w = (*weights)[i];
      const std::string wpath = path + ".weights[" + str(static_cast<int64_t>(i)) + "]";
      if (!w.is_number()) return f_.error(wpath, "must be a number");
      const double v = w.get<double>();
      if (!std::isfinite(v) || v < 0.0 || v > 1e6) return f_.error(wpath, w.dump() + " is out of range 0..1000000");
      body.weights[i] = static_cast<float>(v);
    }
    out.body = body;
    return {};
  }

  Status bind_layer_mode(const Bound& b, Command& out) {
    const Json& c = b.c;
    const std::string& path = b.path;
    if (Status st = f_.only(c, path, {"tick", "op", "entity", "count", "comment", "layer", "mode", "reference"}); !st) return st;
    Result<std::string> mode = f_.string(c, path, "mode", std::nullopt);
    if (!mode) return mode.error();
    SetLayerModeCommand body;
    body.layer = b.layer;
    if (mode.value() == "override") {
      body.mode = LayerMode::kOverride;
    } else if (mode.value() == "additive") {
      body.mode = LayerMode::kAdditive;
    } else {
      return f_.error(path + ".mode", "'" + mode.value() + "' is not a layer mode (override, additive)");
    }
    const auto reference = c.find("reference");
    if (reference != c.end() && !(reference->is_string() && reference->get<std::string>() == "rest")) {
      const std::string rpath = path + ".reference";
      if (!reference->is_object()) return f_.error(rpath, "must be \"rest\" or {\"clip\": name, \"time_ms\": number}");
      if (Status st = f_.only(*reference, rpath, {"clip", "time_ms"}); !st) return st;
      Result<std::string> clip = f_.string(*reference, rpath, "clip", std::nullopt);
      if (!clip) return clip.error();
      Result<uint16_t> index = clip_index(rpath + ".clip", clip.value(), b.rig, b.model_name);
      if (!index) return index.error();
      Result<double> time = f_.number(*reference, rpath, "time_ms", 0.0, kMaxOffsetMs, 0.0);
      if (!time) return time.error();
      body.reference_clip = index.value();
      body.reference_time_us = ms_to_us(time.value());
    }
    out.body = body;
    return {};
  }

  Result<uint16_t> clip_index(const std::string& path, const std::string& name, const Rig& rig,
                              const std::string& model_name) const {
    for (std::size_t i = 0; i < rig.clips.size(); ++i) {
      if (rig.clips[i].name == name) return static_cast<uint16_t>(i);
    }
    return f_.error(path, "unknown clip '" + name + "' (model '" + model_name + "' has: " + clip_list(rig) + ")");
  }

  Result<SpeedQ16> parse_speed(const Json& c, const std::string& path, uint32_t k,
                               std::optional<double> fallback) const {
    Result<double> speed = f_.number(c, path, "speed", -kMaxSpeed, kMaxSpeed, fallback);
    if (!speed) return speed.error();
    Result<double> step = f_.number(c, path, "speed_step", -kMaxSpeed, kMaxSpeed, 0.0);
    if (!step) return step.error();
    const double value = speed.value() + static_cast<double>(k) * step.value();
    if (!(value >= -kMaxSpeed && value <= kMaxSpeed)) {
      return f_.error(path + ".speed_step", "speed for entity +" + str(k) + " leaves -32767..32767");
    }
    return to_speed(value);
  }

  Status parse_motion(const Json& c, const std::string& path, uint32_t k, const Rig& rig,
                      const std::string& model_name, MotionSpec& spec) const {
    const auto clip = c.find("clip");
    const auto blend = c.find("blend");
    if ((clip == c.end()) == (blend == c.end())) {
      return f_.error(path, "give exactly one of \"clip\" (a name) or \"blend\" (a list of {clip, weight})");
    }
    if (clip != c.end()) {
      if (!clip->is_string()) return f_.error(path + ".clip", "must be a clip name");
      Result<uint16_t> index = clip_index(path + ".clip", clip->get<std::string>(), rig, model_name);
      if (!index) return index.error();
      spec.count = 1;
      spec.clips[0] = ClipWeight{index.value(), 1.0f};
    } else {
      if (!blend->is_array() || blend->empty() || blend->size() > kMaxBlendClips) {
        return f_.error(path + ".blend", "must be an array of 1.." + str(kMaxBlendClips) + " {\"clip\": name, \"weight\": number}");
      }
      spec.count = static_cast<uint8_t>(blend->size());
      for (std::size_t i = 0; i < blend->size(); ++i) {
        const std::string bpath = path + ".blend[" + str(static_cast<int64_t>(i)) + "]";
        const Json& b = (*blend)[i];
        if (!b.is_object()) return f_.error(bpath, "must be {\"clip\": name, \"weight\": number}");
        if (Status st = f_.only(b, bpath, {"clip", "weight"}); !st) return st;
        Result<std::string> name = f_.string(b, bpath, "clip", std::nullopt);
        if (!name) return name.error();
        Result<uint16_t> index = clip_index(bpath + ".clip", name.value(), rig, model_name);
        if (!index) return index.error();
        Result<double> weight = f_.number(b, bpath, "weight", 0.0, 1e6, 1.0);
        if (!weight) return weight.error();
        spec.clips[i] = ClipWeight{index.value(), static_cast<float>(weight.value())};
      }
    }
    Result<std::string> wrap = f_.string(c, path, "wrap", std::string("loop"));
    if (!wrap) return wrap.error();
    if (wrap.value() == "loop") {
      spec.wrap = WrapMode::kLoop;
    } else if (wrap.value() == "clamp") {
      spec.wrap = WrapMode::kClamp;
    } else if (wrap.value() == "ping_pong") {
      spec.wrap = WrapMode::kPingPong;
    } else {
      return f_.error(path + ".wrap", "'" + wrap.value() + "' is not a wrap mode (loop, clamp, ping_pong)");
    }
    Result<SpeedQ16> speed = parse_speed(c, path, k, 1.0);
    if (!speed) return speed.error();
    spec.speed = speed.value();
    Result<double> offset = f_.number(c, path, "offset_ms", -kMaxOffsetMs, kMaxOffsetMs, 0.0);
    if (!offset) return offset.error();
    Result<double> step = f_.number(c, path, "offset_step_ms", -kMaxOffsetMs, kMaxOffsetMs, 0.0);
    if (!step) return step.error();
    const double offset_ms = offset.value() + static_cast<double>(k) * step.value();
    if (!(offset_ms >= -kMaxOffsetMs && offset_ms <= kMaxOffsetMs)) {
      return f_.error(path + ".offset_step_ms", "offset for entity +" + str(k) + " is out of range");
    }
    spec.start_offset_us = ms_to_us(offset_ms);
    return {};
  }

  std::string_view text_;
  std::string file_;
  JsonFields f_;
  Json root_;
  Scenario* scenario_ = nullptr;
  std::map<EntityId, LiveEntity> live_;  // ordered: no hash-order dependence
};

}  // namespace

Result<ScenarioHeader> read_scenario_header(std::string_view text, const std::string& file_name) {
  try {
    ScenarioParser parser(text, file_name);
    return parser.header();
  } catch (const std::exception& e) {
    // The parser reports errors as values; this is a last line for library exceptions.
    return Error{file_name + ": " + e.what()};
  }
}

Result<Scenario> parse_scenario(std::string_view text, const std::string& file_name,
                                std::vector<std::shared_ptr<const Model>> models) {
  try {
    ScenarioParser parser(text, file_name);
    return parser.scenario(std::move(models));
  } catch (const std::exception& e) {
    return Error{file_name + ": " + e.what()};
  }
}

}  // namespace posecast::sim
