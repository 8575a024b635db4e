#include "viewer_options.h"

#include <optional>

#include "command_line.h"

namespace posecast::viewer {
namespace {

constexpr const char kDescription[] =
    "Shows skinned entities with GPU skinning: a model played locally (--model) or what a live\n"
    "posecast-server streams (--connect), in a window or headless (--frames, --screenshot).\n"
    "Give exactly one of --model and --connect (docs/viewer.md).";

constexpr const char kFooter[] =
    "Interactive keys: left drag orbit, right/middle drag (or shift+left) pan, wheel zoom,\n"
    "  F frame all, K skeleton lines, X wireframe, G grid, H overlay, Space pause, Esc quit.\n"
    "  --connect, an owned entity (server --grant N): 1 idle, 2 walk, 3 run, 4 wave (crossfades),\n"
    "  = / - speed x1.25 / /1.25, Tab next owned entity. A replay server: P pause/resume,\n"
    "  . step one tick, Left/Right seek 5 s, [ / ] half/double speed.\n"
    "Without a display, run under xvfb-run (see docs/viewer.md); headless runs also work on\n"
    "Mesa's EGL surfaceless platform with no X server at all.\n"
    "Exit codes: 0 success, 1 the work failed (bad file, no display, GL error), 2 bad command line.";

// The options given as text and turned into values after parsing (their errors are the
// viewer's own: an --act script, a skinning mode).
struct TextOptions {
  std::string act;
  std::string skinning;
};

// Declares every option on `command_line`, bound to `o` and `text`.
void declare(cli::CommandLine& command_line, ViewerOptions& o, TextOptions& text) {
  CLI::App& app = command_line.app();
  app.footer(kFooter);
  app.add_option("--model", o.model, "a .gltf/.glb file, or gen-rig:N for the generated rig with N joints")
      ->type_name("FILE|gen-rig:N");
  app.add_option("--connect", o.connect,
                 "show what a live posecast-server streams (models from its welcome\n"
                 "manifest: gen-rig:N generated, files looked up by name under\n"
                 "--models-dir). Entities are placed on a grid by entity id; headless\n"
                 "runs are paced to real time")
      ->type_name("HOST:PORT");
  app.add_option("--models-dir", o.models_dir, "--connect: folder holding the server's model files")->type_name("DIR");
  app.add_flag("--interpolate-poses", o.interpolate_poses,
               "--connect: between snapshots, interpolate the decoded poses instead of\n"
               "evaluating the server's clip recipes at the render time (the default;\n"
               "exact but it samples clips: docs/client.md)");
  app.add_option("--act", text.act,
                 "headless: press a session key before that frame (idle walk run wave\n"
                 "faster slower next-owned replay-toggle replay-step replay-back\n"
                 "replay-forward replay-slower replay-faster)")
      ->type_name("FRAME:ACTION[,...]");
  app.add_option("--clip", o.clip,
                 "clip to loop (default: walk (any case) if present, else the first\nclip; rest = bind pose)")
      ->type_name("NAME|INDEX|rest");
  app.add_option("--count", o.count, "entities in a grid on the ground, each at a different phase")
      ->type_name("N")
      ->check(cli::integer_in(1, 100000));
  app.add_option("--frames", o.frames, "headless: render N frames offscreen (1/60 s apart) and exit")
      ->type_name("N")
      ->check(cli::integer_in(1, 10000000))
      ->default_str("");  // none: a window
  app.add_option("--screenshot", o.screenshot, "headless: write the last frame as a PNG (alone: --frames 1)")
      ->type_name("OUT.png");
  app.add_flag("--stats", o.stats, "print frame-time statistics (median, p99) at exit");
  app.add_option("--width", o.width, "image or window width")->type_name("W")->check(cli::integer_in(16, 16384));
  app.add_option("--height", o.height, "image or window height")->type_name("H")->check(cli::integer_in(16, 16384));
  app.add_option("--shader-dir", o.shader_dir, "load the *.glsl shaders from DIR instead of the built-in copies")
      ->type_name("DIR");
  app.add_flag("--overlay", o.overlay, "headless: draw the debug overlay into the image (interactive: always on)");
  app.add_option("--skinning", text.skinning,
                 "lbs (linear blend, default) or dqs (dual quaternions; a model whose\n"
                 "joints carry scale stays on lbs, with a warning)")
      ->type_name("lbs|dqs");
}

// What only a combination of options can get wrong.
Status check(const ViewerOptions& o) {
  if (o.model.empty() && o.connect.empty()) return Error{"--model FILE|gen-rig:N or --connect HOST:PORT is required"};
  if (!o.model.empty() && !o.connect.empty()) return Error{"--model and --connect exclude each other: give exactly one"};
  if (!o.models_dir.empty() && o.connect.empty()) return Error{"--models-dir: only with --connect"};
  if (o.interpolate_poses && o.connect.empty()) return Error{"--interpolate-poses: only with --connect"};
  return {};
}

}  // namespace

Result<ViewerOptions> parse_viewer_options(const std::vector<std::string>& args) {
  cli::CommandLine command_line(kViewerProgram, kDescription);
  ViewerOptions options;
  TextOptions text;
  declare(command_line, options, text);
  switch (command_line.parse_quietly(args)) {
    case cli::CommandLine::Outcome::kHelp:
      options.help = true;
      return options;
    case cli::CommandLine::Outcome::kUsageError:
      return Error{command_line.error()};
    case cli::CommandLine::Outcome::kRun:
      break;
  }
  if (!text.act.empty()) {
    Result<std::vector<ScriptedAction>> script = parse_action_script(text.act);
    if (!script) return script.error();
    options.actions = std::move(script).value();
  }
  if (!text.skinning.empty()) {
    const std::optional<render::SkinningMode> mode = render::parse_skinning_mode(text.skinning);
    if (!mode) return Error{"--skinning: expected lbs or dqs, got '" + text.skinning + "'"};
    options.skinning = *mode;
  }
  if (Status s = check(options); !s) return s.error();
  if (!options.screenshot.empty() && command_line.app().count("--frames") == 0) options.frames = 1;
  return options;
}

std::string viewer_usage() {
  cli::CommandLine command_line(kViewerProgram, kDescription);
  ViewerOptions options;
  TextOptions text;
  declare(command_line, options, text);
  return command_line.help();
}

}  // namespace posecast::viewer
