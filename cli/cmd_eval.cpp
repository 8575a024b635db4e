// posecast eval MODEL --clip NAME|INDEX|rest --time SECONDS [--skin K] [--json]

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "posecast/pose_evaluation.h"
#include "posecast/rig/model_source.h"

namespace posecast::cli {

namespace {
constexpr const char kProgram[] = "posecast eval";

struct EvalOptions {
  std::string model;
  std::string clip;
  double seconds = 0.0;
  uint32_t skin = 0;
  bool json = false;
  CLI::App* app = nullptr;  // to ask which options were given
};

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast eval: %s\n", why.c_str());
  return code;
}

// Shortest text that reads back as the same float.
std::string number(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

template <class Floats>
std::string json_array(const Floats& values, int count) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) {
    if (i) out += ',';
    out += number(values[i]);
  }
  out += ']';
  return out;
}

// Resolves --clip: "rest", a clip name, or an index. Names win over indices.
Result<int> resolve_clip(const Rig& rig, const std::string& text) {
  if (text == "rest") return kRestPose;
  for (std::size_t i = 0; i < rig.clips.size(); ++i)
    if (rig.clips[i].name == text) return static_cast<int>(i);
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || index >= rig.clips.size()) {
    return Error{"--clip: no clip named '" + text + "' and not an index in 0.." +
                 std::to_string(static_cast<long long>(rig.clips.size()) - 1) + " (see posecast info)"};
  }
  return static_cast<int>(index);
}

int eval(const EvalOptions& o) {
  if (o.app->count("--time") == 0 && o.clip != "rest") return print_usage_error(kProgram, "--time is required");
  const double seconds = o.seconds;
  Result<Model> model = rig::load_model_source(o.model);
  if (!model) return fail(model.error().message, kExitFailure);
  if (model->rigs.empty()) return fail(model->source + ": the file has no nodes to evaluate", kExitFailure);
  if (o.skin >= model->rigs.size()) {
    return print_usage_error(kProgram, "--skin: " + std::to_string(o.skin) + " is not in 0.." +
                                           std::to_string(model->rigs.size() - 1));
  }
  const long long skin = o.skin;
  const Rig& rig = model->rigs[o.skin];
  Result<int> clip = resolve_clip(rig, o.clip);
  if (!clip) return print_usage_error(kProgram, clip.error().message);

  const int64_t time_us = std::llround(seconds * 1e6);
  SamplingCursor cursor;
  PoseBuffers pose;
  if (!evaluate_pose(rig, clip.value(), time_us, cursor, pose)) {
    return fail(model->source + ": evaluation failed (singular mesh node transform?)", kExitFailure);
  }
  const Skeleton& s = rig.skeleton;
  const std::string clip_name = clip.value() == kRestPose ? "rest" : rig.clips[static_cast<std::size_t>(clip.value())].name;

  if (o.json) {
    std::string out = "{\"model\":" + json_string(model->source) + ",\"clip\":" + json_string(clip_name) +
                      ",\"time\":" + number(static_cast<float>(seconds)) + ",\"joints\":[";
    for (std::size_t j = 0; j < s.joint_count(); ++j) {
      const std::size_t node = s.joint_nodes[j];
      const Transform& t = pose.locals[node];
      const float r[4] = {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w};
      float palette[16];
      for (int c = 0; c < 4; ++c)
        for (int row = 0; row < 4; ++row) palette[c * 4 + row] = pose.palette[j][c][row];
      out += std::string(j ? "," : "") + "{\"name\":" + json_string(s.names[node]) +
             ",\"node\":" + std::to_string(s.source_nodes[node]) + ",\"t\":" + json_array(&t.translation.x, 3) +
             ",\"r\":" + json_array(r, 4) + ",\"s\":" + json_array(&t.scale.x, 3) +
             ",\"palette\":" + json_array(palette, 16) + "}";
    }
    out += "]}\n";
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  }

  std::printf("%s  clip %s  time %s s  skin %lld  (%zu joints)\n", model->source.c_str(), clip_name.c_str(),
              number(static_cast<float>(seconds)).c_str(), skin, s.joint_count());
  for (std::size_t j = 0; j < s.joint_count(); ++j) {
    const std::size_t node = s.joint_nodes[j];
    const Transform& t = pose.locals[node];
    std::printf("[%zu] %s (node %d)\n  t %s %s %s  r %s %s %s %s  s %s %s %s\n  palette", j,
                s.names[node].c_str(), s.source_nodes[node], number(t.translation.x).c_str(),
                number(t.translation.y).c_str(), number(t.translation.z).c_str(), number(t.rotation.x).c_str(),
                number(t.rotation.y).c_str(), number(t.rotation.z).c_str(), number(t.rotation.w).c_str(),
                number(t.scale.x).c_str(), number(t.scale.y).c_str(), number(t.scale.z).c_str());
    for (int c = 0; c < 4; ++c)
      for (int row = 0; row < 4; ++row) std::printf(" %s", number(pose.palette[j][c][row]).c_str());
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace

Command add_eval_command(CommandLine& command_line) {
  CLI::App* app = command_line.add_command(
      "eval", "evaluate a clip at a time: local TRS and palette per joint (text or --json)",
      "Samples the clip at the time (clamped to its first and last keys; no looping) for skin K\n"
      "and prints, per joint in skin order, the local T, R (x,y,z,w), S and the palette matrix\n"
      "inverse(world(mesh node)) * world(joint) * inverseBind, column-major. For a file without\n"
      "skins: every node in node order, palette = its world matrix.");
  auto o = std::make_shared<EvalOptions>();
  o->app = app;
  app->add_option("MODEL", o->model, "a .gltf/.glb path or gen-rig:N")->required();
  app->add_option("--clip", o->clip, "a clip name, an index (posecast info), or rest (the bind pose)")
      ->type_name("NAME|INDEX|rest")
      ->required();
  app->add_option("--time", o->seconds, "seconds into the clip (needed but for rest)")
      ->type_name("SECONDS")
      ->check(number_in(-1e9, 1e9));
  app->add_option("--skin", o->skin, "the skin to evaluate")->type_name("K")->check(integer_in(0, 1u << 20));
  app->add_flag("--json", o->json,
                "print {\"model\",\"clip\",\"time\",\"joints\":[{\"name\",\"node\",\"t\",\"r\",\"s\",\"palette\"}]}");
  return {app, [o] { return eval(*o); }};
}

}  // namespace posecast::cli
