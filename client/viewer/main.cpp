// posecast-viewer: shows skinned entities with GPU skinning. Today: --model FILE|gen-rig:N
// (local playback through the core library), interactive or headless (--frames/--screenshot).
// See docs/viewer.md.

#include <cctype>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "headless_run.h"
#include "interactive_run.h"
#include "local_playback_source.h"
#ifdef POSECAST_VIEWER_HAS_NETWORK
#include "network_pose_source.h"
#endif
#include "posecast/pose_evaluation.h"
#include "posecast/rig/model_source.h"
#include "viewer_options.h"
#include "command_line.h"

namespace {

using namespace posecast;
using namespace posecast::viewer;

int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast-viewer: %s\n", why.c_str());
  return code;
}

// --clip: a name (wins), an index, or "rest"; empty picks "walk", else clip 0, else rest.
Result<int> resolve_clip(const Model& model, const std::string& text) {
  const std::vector<Clip>& clips = model.rigs.front().clips;
  if (text.empty()) {
    for (std::size_t i = 0; i < clips.size(); ++i) {
      std::string lower = clips[i].name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "walk") return static_cast<int>(i);  // Fox calls it "Walk"
    }
    return clips.empty() ? kRestPose : 0;
  }
  if (text == "rest") return kRestPose;
  const int named = model.find_clip(text);
  if (named >= 0) return named;
  bool digits = !text.empty() && text.size() < 9;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (digits && static_cast<std::size_t>(std::stoi(text)) < clips.size()) return std::stoi(text);
  std::string names;
  for (const Clip& clip : clips) names += (names.empty() ? "" : ", ") + clip.name;
  return Error{"--clip: " + model.source + " has no clip '" + text + "' (clips: " +
               (names.empty() ? std::string("none") : names) + "; or an index, or rest)"};
}

}  // namespace

int main(int argc, char** argv) {
  Result<ViewerOptions> parsed = parse_viewer_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed) return cli::print_usage_error(kViewerProgram, parsed.error().message);
  const ViewerOptions& options = parsed.value();
  if (options.help) {
    std::fputs(viewer_usage().c_str(), stdout);
    return kExitOk;
  }

  if (!options.connect.empty()) {
#ifdef POSECAST_VIEWER_HAS_NETWORK
    NetworkSourceOptions network;
    network.server = options.connect;
    if (!options.models_dir.empty()) network.models_dirs.push_back(options.models_dir);
    network.evaluate_recipes = !options.interpolate_poses;
    Result<std::unique_ptr<NetworkPoseSource>> remote = NetworkPoseSource::create(network);
    if (!remote) return cli::print_usage_error(kViewerProgram, remote.error().message);
    // Connect (and wait for the first entities) before the run frames its camera on them.
    if (Status status = remote.value()->update(0); !status) {
      return fail(status.error().message, kExitFailure);
    }
    return options.headless() ? run_headless(options, *remote.value())
                              : run_interactive(options, *remote.value());
#else
    return cli::print_usage_error(kViewerProgram, "--connect: this build has no network client (posecast_client)");
#endif
  }

  Result<Model> loaded = rig::load_model_source(options.model);
  if (!loaded) return fail(loaded.error().message, kExitFailure);
  auto model = std::make_shared<const Model>(std::move(loaded.value()));
  if (model->rigs.empty()) return fail(model->source + ": no skins and no nodes to show", kExitFailure);
  Result<int> clip = resolve_clip(*model, options.clip);
  if (!clip) return cli::print_usage_error(kViewerProgram, clip.error().message);

  Result<std::unique_ptr<LocalPlaybackSource>> source =
      LocalPlaybackSource::create(model, clip.value(), options.count);
  if (!source) return fail(source.error().message, kExitFailure);

  return options.headless() ? run_headless(options, *source.value())
                            : run_interactive(options, *source.value());
}
