// The pose codec's scenarios (codec_scenarios.h).

#include "codec_scenarios.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "posecast/blending.h"
#include "posecast/gltf_import.h"
#include "posecast/rig/model_source.h"
#include "posecast/sampling.h"

namespace posecast::codec_scenarios {
namespace {

std::string asset(const std::string& name) { return std::string(POSECAST_ASSETS_DIR) + "/" + name; }

Result<Model> load(const std::string& source) {
  if (rig::is_generated_rig_source(source)) return rig::load_model_source(source);
  ImportOptions options;
  options.load_images = false;
  return import_gltf_file(asset(source), options);
}

int find_clip(const Rig& rig, const std::string& name) {
  for (std::size_t i = 0; i < rig.clips.size(); ++i)
    if (rig.clips[i].name == name) return static_cast<int>(i);
  return name.empty() && !rig.clips.empty() ? 0 : -1;
}

struct ClipPlayer {
  const Rig* rig = nullptr;
  const Clip* clip = nullptr;
  SamplingCursor cursor;
  std::vector<Transform> out;
  int64_t clip_time(int64_t time_us) const {
    return clip->duration_us > 0 ? time_us % clip->duration_us : 0;
  }
  void sample(int64_t time_us) {
    SampleJob job{&rig->skeleton, clip, clip_time(time_us), cursor.keys, out};
    (void)job.Run();
  }
};

// The animator's blend (BlendJob): weight 1 - w of a, w of b.
void blend(std::span<const Transform> a, std::span<const Transform> b, float w,
           std::span<const Transform> rest, std::span<Transform> out) {
  const BlendInput inputs[2] = {{a, 1.0f - w}, {b, w}};
  BlendJob job{inputs, rest, out};
  (void)job.Run();
}

// Weight of "Run" at time t in the crossfade cycle: walk 1 s, fade 0.5 s, run 1 s, fade back.
float crossfade_weight(double t) {
  const double c = std::fmod(t, 3.0);
  if (c < 1.0) return 0.0f;
  if (c < 1.5) return static_cast<float>((c - 1.0) / 0.5);
  if (c < 2.5) return 1.0f;
  return static_cast<float>(1.0 - (c - 2.5) / 0.5);
}

}  // namespace

Scenario build_scenario(const std::string& source, const std::string& clip_a, const std::string& clip_b,
               int send_hz) {
  Scenario s;
  static std::map<std::string, std::shared_ptr<const Model>> models;
  static std::map<std::string, std::shared_ptr<const PoseFormat>> formats;
  if (!models.count(source)) {
    auto loaded = load(source);
    if (!loaded.ok()) {
      s.error = loaded.error().message;
      return s;
    }
    models[source] = std::make_shared<const Model>(std::move(loaded.value()));
  }
  s.model = models[source];
  if (s.model->rigs.empty()) {
    s.error = source + ": no rig";
    return s;
  }
  s.rig = &s.model->rigs[0];
  if (!formats.count(source)) {
    auto f = protocol::build_pose_format(s.rig->skeleton, s.rig->clips);
    if (!f.ok()) {
      s.error = f.error().message;
      return s;
    }
    formats[source] = std::make_shared<const PoseFormat>(std::move(f.value()));
  }
  s.format = formats[source];
  const int a = find_clip(*s.rig, clip_a);
  const int b = clip_b.empty() ? -1 : find_clip(*s.rig, clip_b);
  if (a < 0 || (!clip_b.empty() && b < 0)) {
    s.error = source + ": clip not found";
    return s;
  }
  const std::size_t nodes = s.rig->skeleton.node_count();
  ClipPlayer pa{s.rig, &s.rig->clips[static_cast<std::size_t>(a)], {}, std::vector<Transform>(nodes)};
  pa.cursor.reset(*pa.clip);
  ClipPlayer pb = pa;
  if (b >= 0) {
    pb.clip = &s.rig->clips[static_cast<std::size_t>(b)];
    pb.cursor.reset(*pb.clip);
  }
  const int ticks_per_send = kServerTickHz / send_hz;
  const int updates = static_cast<int>(kSeconds * send_hz);
  std::vector<Transform> mixed(nodes);
  for (int u = 0; u < updates; ++u) {
    const int64_t time_us = static_cast<int64_t>(u) * ticks_per_send * kServerTickUs;
    pa.sample(time_us);
    PoseRecipe recipe;
    recipe.count = 1;
    recipe.inputs[0] = {static_cast<uint16_t>(a), pa.clip_time(time_us), 1.0f};
    if (b < 0) {
      s.poses.push_back(pa.out);
      s.recipes.push_back(recipe);
      continue;
    }
    pb.sample(time_us);
    const float w = crossfade_weight(static_cast<double>(time_us) / 1e6);
    recipe.count = 2;
    recipe.inputs[0].weight = 1.0f - w;
    recipe.inputs[1] = {static_cast<uint16_t>(b), pb.clip_time(time_us), w};
    s.recipes.push_back(recipe);
    blend(pa.out, pb.out, w, s.rig->skeleton.rest, mixed);
    s.poses.push_back(mixed);
  }
  return s;
}

std::vector<QuantizedPose> quantize_all(const Scenario& s, bool with_recipes) {
  protocol::PoseQuantizer quantizer(*s.format);
  std::vector<QuantizedPose> q(s.poses.size());
  for (std::size_t u = 0; u < s.poses.size(); ++u) {
    (void)quantizer.quantize(s.poses[u], u > 0 && !with_recipes ? &q[u - 1] : nullptr, q[u]);
  }
  return q;
}

PoseReference reference_for(const std::vector<QuantizedPose>& q, std::size_t u, bool delta, int age) {
  PoseReference ref;
  ref.tick_rate_hz = kServerTickHz;
  if (!delta || u == 0) return ref;
  ref.baseline = &q[u - 1];
  ref.baseline_age = static_cast<uint32_t>(age);
  if (u >= 2) {
    ref.prior = &q[u - 2];
    ref.prior_age = static_cast<uint32_t>(age);
  }
  if (u >= 3) {
    ref.older = &q[u - 3];
    ref.older_age = static_cast<uint32_t>(age);
  }
  return ref;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1),
                                                           std::floor(p * static_cast<double>(v.size() - 1) + 0.5)));
  return v[i];
}

}  // namespace posecast::codec_scenarios
