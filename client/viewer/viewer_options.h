#pragma once
// posecast-viewer's command line, in the common style (cli/common/command_line.h).

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/render/skinning_mode.h"
#include "posecast/result.h"
#include "viewer_action.h"

namespace posecast::viewer {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work failed: bad file, no display, GL error
inline constexpr int kExitUsage = 2;    // bad command line
inline constexpr char kViewerProgram[] = "posecast-viewer";

struct ViewerOptions {
  std::string model;          // a .gltf/.glb path or gen-rig:N
  std::string connect;        // HOST:PORT of a posecast-server (the alternative to --model)
  std::string models_dir;     // --connect: where manifest models are looked for by file name
  std::string clip;           // name, index or "rest"; empty: "walk" if present, else clip 0
  uint32_t count = 1;         // entities, in a grid
  uint32_t frames = 0;        // > 0: headless, render this many frames then exit
  std::string screenshot;     // PNG written after the last frame (implies headless)
  bool stats = false;         // print frame-time statistics at exit
  int width = 1280;
  int height = 720;
  std::string shader_dir;     // load shaders/*.glsl from here instead of the embedded copies
  bool overlay = false;       // headless: draw the debug overlay into the images too
  // --connect: show interpolated decoded poses only, never evaluating the server's clip
  // recipes at render time (docs/client.md, "Thin client and render-time recipes").
  bool interpolate_poses = false;
  // --skinning lbs|dqs: every model's skinning mode (docs/viewer.md, "Dual-quaternion
  // skinning"); a model whose joints carry scale stays on LBS with a warning.
  render::SkinningMode skinning = render::SkinningMode::kLinearBlend;
  std::vector<ScriptedAction> actions;  // headless: --act FRAME:ACTION,... (the keys, scripted)
  bool help = false;

  bool headless() const { return frames > 0 || !screenshot.empty(); }
};

// Parses `args` (without the program name); prints nothing. --help sets `help` (print
// viewer_usage()). Errors are one line naming the option and the reason, without the program
// name ("--count: 0 is not in 1..100000"). --screenshot without --frames renders one frame.
Result<ViewerOptions> parse_viewer_options(const std::vector<std::string>& args);

// The --help text.
std::string viewer_usage();

}  // namespace posecast::viewer
