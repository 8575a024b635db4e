#pragma once
// The pose codec's scenarios, shared by its profile-guided build's training run
// (codec_train.cpp), bench_codec (sizes, errors, times) and
// codec_tables (the residual tables in and out of sample): what the server would stream for
// Fox Run, Fox Walk <-> Run crossfades, CesiumMan's walk and the 128-joint generated rig, at
// a send rate of a 60 Hz tick, 10 seconds of updates each. Fox and CesiumMan are read from
// the sample assets beside the checkout (POSECAST_ASSETS_DIR).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"

namespace posecast::codec_scenarios {

using protocol::PoseFormat;
using protocol::PoseRecipe;
using protocol::PoseReference;
using protocol::QuantizedPose;

constexpr int64_t kServerTickUs = 1'000'000 / 60;
constexpr int kServerTickHz = 60;
constexpr double kSeconds = 10.0;

struct Scenario {
  std::string error;  // non-empty: the benchmark reports it and skips
  std::shared_ptr<const Model> model;
  const Rig* rig = nullptr;
  std::shared_ptr<const PoseFormat> format;
  // Per update: the exact local pose (what the server evaluated) and its recipe (the clips,
  // times and weights it is a blend of: what the animator would attach).
  std::vector<std::vector<Transform>> poses;
  std::vector<PoseRecipe> recipes;
};

// One scenario: a model (an asset file name, or a generated-rig source such as "gen-rig:128"),
// the clip it plays (`clip_a`; empty: the first clip) and, when `clip_b` is not empty, the
// clip it crossfades with (walk 1 s, fade 0.5 s, run 1 s, fade back), sampled every
// 60 / send_hz ticks. Models and formats are loaded once per source and shared. A failure
// (missing asset, clip not found) is in Scenario::error.
Scenario build_scenario(const std::string& source, const std::string& clip_a,
                        const std::string& clip_b, int send_hz);

// Quantises every pose the way the server does: a pose without a recipe against the previous
// one's axes (hysteresis), a pose sent with its recipe (`with_recipes`) without a reference,
// as the clip dictionary predicts (docs/codec.md, "Exact records").
std::vector<QuantizedPose> quantize_all(const Scenario& s, bool with_recipes = false);

// The references of update `u` of `q` when each update is acked in time: the previous three
// updates, `age` ticks apart; none for absolute coding (`delta` false) or the first update.
PoseReference reference_for(const std::vector<QuantizedPose>& q, std::size_t u, bool delta,
                            int age);

// The `p` (0..1) quantile of `v`, the nearest rank (0 when empty): bench_codec's medians and
// p99s.
double percentile(std::vector<double> v, double p);

struct ScenarioSpec {
  const char* name;
  const char* source;
  const char* clip_a;
  const char* clip_b;
};

// The four scenarios, in benchmark order.
inline constexpr ScenarioSpec kScenarios[] = {
    {"FoxRun", "Fox.glb", "Run", ""},
    {"FoxWalkRun", "Fox.glb", "Walk", "Run"},
    {"CesiumManWalk", "cesium_man.gltf", "", ""},
    {"GenRig128", "gen-rig:128", "run", ""},
};
inline constexpr int kSendRates[] = {60, 30, 20};

}  // namespace posecast::codec_scenarios
