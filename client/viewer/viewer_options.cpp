#include "viewer_options.h"

#include <charconv>
#include <cstring>
#include <optional>

namespace posecast::viewer {

const char kViewerUsage[] =
    "usage: posecast-viewer --model FILE|gen-rig:N [--clip NAME|INDEX|rest] [--count N]\n"
    "                       [--frames N] [--screenshot OUT.png] [--stats]\n"
    "                       [--width W] [--height H] [--shader-dir DIR] [--overlay]\n"
    "                       [--skinning lbs|dqs]\n"
    "       posecast-viewer --connect HOST:PORT [--models-dir DIR] [--interpolate-poses]\n"
    "                       (same display options)\n"
    "  --model       a .gltf/.glb file, or gen-rig:N for the generated rig with N joints\n"
    "  --connect     show what a live posecast-server streams (models from its welcome manifest:\n"
    "                gen-rig:N generated, files looked up by name under --models-dir). Entities\n"
    "                are placed on a grid by entity id; headless runs are paced to real time\n"
    "  --models-dir  --connect: folder holding the server's model files\n"
    "  --interpolate-poses  --connect: between snapshots, interpolate the decoded poses instead\n"
    "                of evaluating the server's clip recipes at the render time (the default;\n"
    "                exact but it samples clips: docs/client.md)\n"
    "  --act         headless: FRAME:ACTION[,...] presses a session key before that frame\n"
    "                (idle walk run wave faster slower next-owned replay-toggle replay-step\n"
    "                replay-back replay-forward replay-slower replay-faster)\n"
    "  --clip        clip to loop (default: walk (any case) if present, else the first clip; rest = bind pose)\n"
    "  --count       entities in a grid on the ground, each at a different phase (default 1)\n"
    "  --frames      headless: render N frames offscreen (1/60 s apart) and exit\n"
    "  --screenshot  headless: write the last frame as a PNG (alone: --frames 1)\n"
    "  --stats       print frame-time statistics (median, p99) at exit\n"
    "  --width/--height  image or window size (default 1280x720)\n"
    "  --shader-dir  load the *.glsl shaders from DIR instead of the built-in copies\n"
    "  --overlay     headless: draw the debug overlay into the image (interactive: always on)\n"
    "  --skinning    lbs (linear blend, default) or dqs (dual quaternions; a model whose joints\n"
    "                carry scale stays on lbs, with a warning)\n"
    "Interactive keys: left drag orbit, right/middle drag (or shift+left) pan, wheel zoom,\n"
    "  F frame all, K skeleton lines, X wireframe, G grid, H overlay, Space pause, Esc quit.\n"
    "  --connect, an owned entity (server --grant N): 1 idle, 2 walk, 3 run, 4 wave (crossfades),\n"
    "  = / - speed x1.25 / /1.25, Tab next owned entity. A replay server: P pause/resume,\n"
    "  . step one tick, Left/Right seek 5 s, [ / ] half/double speed.\n"
    "Without a display, run under xvfb-run (see docs/viewer.md); headless runs also work on\n"
    "Mesa's EGL surfaceless platform with no X server at all.\n";

namespace {

Result<long long> parse_int(const std::string& option, const char* text, long long min,
                            long long max) {
  long long value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value < min || value > max) {
    return Error{"--" + option + ": expected an integer in " + std::to_string(min) + ".." +
                 std::to_string(max) + ", got '" + text + "'"};
  }
  return value;
}

}  // namespace

Result<ViewerOptions> parse_viewer_options(int argc, const char* const* argv) {
  ViewerOptions options;
  bool frames_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg == "--stats") {
      options.stats = true;
      continue;
    }
    if (arg == "--overlay") {
      options.overlay = true;
      continue;
    }
    if (arg == "--interpolate-poses") {
      options.interpolate_poses = true;
      continue;
    }
    // --skinning MODE, kept apart from the table below.
    if (arg == "--skinning") {
      if (i + 1 >= argc) return Error{arg + ": missing value"};
      const std::optional<render::SkinningMode> mode = render::parse_skinning_mode(argv[++i]);
      if (!mode) {
        return Error{"--skinning: expected lbs or dqs, got '" + std::string(argv[i]) + "'"};
      }
      options.skinning = *mode;
      continue;
    }
    if (arg.rfind("--", 0) != 0) return Error{"unexpected argument '" + arg + "' (see --help)"};
    const std::string name = arg.substr(2);
    static const char* const kWithValue[] = {"model", "clip",  "count",  "frames",
                                             "screenshot", "width", "height", "shader-dir",
                                             "connect", "models-dir", "act"};
    bool known = false;
    for (const char* option : kWithValue) known = known || name == option;
    if (!known) return Error{"unknown option '" + arg + "' (see --help)"};
    if (i + 1 >= argc) return Error{arg + ": missing value"};
    const char* value = argv[++i];
    if (name == "model") {
      options.model = value;
    } else if (name == "connect") {
      options.connect = value;
    } else if (name == "models-dir") {
      options.models_dir = value;
    } else if (name == "act") {
      Result<std::vector<ScriptedAction>> script = parse_action_script(value);
      if (!script) return script.error();
      options.actions = std::move(script).value();
    } else if (name == "clip") {
      options.clip = value;
    } else if (name == "screenshot") {
      options.screenshot = value;
    } else if (name == "shader-dir") {
      options.shader_dir = value;
    } else {
      const long long max = name == "count" ? 100000 : name == "frames" ? 10000000 : 16384;
      const long long min = (name == "width" || name == "height") ? 16 : 1;
      Result<long long> number = parse_int(name, value, min, max);
      if (!number) return number.error();
      if (name == "count") options.count = static_cast<uint32_t>(number.value());
      if (name == "frames") {
        options.frames = static_cast<uint32_t>(number.value());
        frames_given = true;
      }
      if (name == "width") options.width = static_cast<int>(number.value());
      if (name == "height") options.height = static_cast<int>(number.value());
    }
  }
  if (options.help) return options;
  if (options.model.empty() && options.connect.empty()) {
    return Error{"--model FILE|gen-rig:N or --connect HOST:PORT is required (see --help)"};
  }
  if (!options.model.empty() && !options.connect.empty()) {
    return Error{"--model and --connect exclude each other: give exactly one"};
  }
  if (!options.models_dir.empty() && options.connect.empty()) {
    return Error{"--models-dir: only with --connect"};
  }
  if (options.interpolate_poses && options.connect.empty()) {
    return Error{"--interpolate-poses: only with --connect"};
  }
  if (!options.screenshot.empty() && !frames_given) options.frames = 1;
  return options;
}

}  // namespace posecast::viewer
