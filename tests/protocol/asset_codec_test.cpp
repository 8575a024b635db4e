// The codec on the sample assets: the error target (worst virtual-vertex error within the scaled
// 0.01 cm bound, 3 cm shell) over every 60 Hz tick of every clip and of crossfades, and exact
// delta-chain round trips. Skips when the assets are absent.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "posecast/blending.h"
#include "posecast/local_to_model.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/error_metric.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sampling.h"
#include "protocol_rigs.h"

namespace posecast::protocol {
namespace {

constexpr int64_t kTickUs = 1000000 / 60;

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<PoseFormat> format;
  const Rig* rig = nullptr;
  std::string error;
};

Loaded load(const std::string& source) {
  Loaded l;
  bool absent = false;
  Result<Model> m = test::load_test_model(source, &absent);
  if (!m.ok()) {
    l.error = absent ? "skip" : m.error().message;
    return l;
  }
  l.model = std::make_unique<Model>(std::move(m.value()));
  l.rig = &l.model->rigs.at(0);
  auto f = build_pose_format(l.rig->skeleton, l.rig->clips);
  if (!f.ok()) {
    l.error = f.error().message;
    return l;
  }
  l.format = std::make_unique<PoseFormat>(std::move(f.value()));
  return l;
}

// Quantises `pose`, measures its error into `report`, keeps the quantised pose as reference.
class ErrorRun {
 public:
  explicit ErrorRun(const Loaded& l)
      : l_(l), quantizer_(*l.format), report_(l.format->error_scale),
        decoded_(l.rig->skeleton.node_count()), exact_m_(decoded_.size()), test_m_(decoded_.size()) {
    previous_.reset(*l.format);
  }
  void add(int64_t tick, std::span<const Transform> pose) {
    QuantizedPose q;
    ASSERT_TRUE(quantizer_.quantize(pose, &previous_, q));
    dequantize_pose(*l_.format, q, decoded_);
    const Skeleton& sk = l_.rig->skeleton;
    ASSERT_TRUE((LocalToModelJob{&sk, pose, exact_m_}.Run()));
    ASSERT_TRUE((LocalToModelJob{&sk, decoded_, test_m_}.Run()));
    report_.add(tick, measure_pose_error(sk, l_.format->error_scale, exact_m_, test_m_));
    previous_ = std::move(q);
  }
  const TrackErrorReport& report() const { return report_; }

 private:
  const Loaded& l_;
  PoseQuantizer quantizer_;
  TrackErrorReport report_;
  QuantizedPose previous_;
  std::vector<Transform> decoded_;
  std::vector<glm::mat4> exact_m_, test_m_;
};

std::vector<Transform> sample(const Rig& rig, const Clip& clip, int64_t t, SamplingCursor& cursor) {
  std::vector<Transform> pose(rig.skeleton.node_count());
  if (cursor.keys.size() != clip.tracks.size()) cursor.reset(clip);
  SampleJob job{&rig.skeleton, &clip, t, cursor.keys, pose};
  EXPECT_TRUE(job.Run());
  return pose;
}

// Every 60 Hz tick of every clip, then 0.5 s crossfades between every pair of clips (both
// playing from 0, weight ramping linearly), through BlendJob as the animator blends.
void expect_within_bound_everywhere(const std::string& source) {
  const Loaded l = load(source);
  if (l.error == "skip") GTEST_SKIP() << source << " not in " << POSECAST_ASSETS_DIR;
  ASSERT_TRUE(l.error.empty()) << l.error;
  const Rig& rig = *l.rig;
  ErrorRun run(l);
  int64_t tick = 0;
  for (const Clip& clip : rig.clips) {
    SamplingCursor cursor;
    for (int64_t t = 0; t <= clip.duration_us; t += kTickUs) run.add(tick++, sample(rig, clip, t, cursor));
  }
  std::vector<Transform> mixed(rig.skeleton.node_count());
  for (std::size_t a = 0; a < rig.clips.size(); ++a) {
    for (std::size_t b = 0; b < rig.clips.size(); ++b) {
      if (a == b) continue;
      SamplingCursor ca, cb;
      for (int64_t t = 0; t <= 500000; t += kTickUs) {
        const auto pa = sample(rig, rig.clips[a], t, ca);
        const auto pb = sample(rig, rig.clips[b], t, cb);
        const float w = static_cast<float>(t) / 500000.0f;
        const BlendInput inputs[2] = {{pa, 1.0f - w}, {pb, w}};
        BlendJob blend{inputs, rig.skeleton.rest, mixed};
        ASSERT_TRUE(blend.Run());
        run.add(tick++, mixed);
      }
    }
  }
  EXPECT_TRUE(run.report().within_bound()) << source << ": " << run.report().describe(rig.skeleton);
  ::testing::Test::RecordProperty("worst", run.report().describe(rig.skeleton));
  std::printf("[ %s ] %lld ticks, %s\n", source.c_str(), static_cast<long long>(tick),
              run.report().describe(rig.skeleton).c_str());
}

TEST(AssetCodec, FoxStaysWithinTheErrorBoundOnEveryTickOfEveryClipAndCrossfade) {
  expect_within_bound_everywhere("Fox.glb");
}

TEST(AssetCodec, CesiumManStaysWithinTheErrorBoundOnEveryTickOfEveryClipAndCrossfade) {
  expect_within_bound_everywhere("cesium_man.gltf");
}

TEST(AssetCodec, GeneratedRigStaysWithinTheErrorBoundOnEveryTickOfEveryClipAndCrossfade) {
  expect_within_bound_everywhere("gen-rig:24");
}

TEST(AssetCodec, FoxRunDeltaChainDecodesExactlyAndStaysSmall) {
  const Loaded l = load("Fox.glb");
  if (l.error == "skip") GTEST_SKIP() << "Fox.glb not in " << POSECAST_ASSETS_DIR;
  ASSERT_TRUE(l.error.empty()) << l.error;
  const int run_clip = l.model->find_clip("Run");
  ASSERT_GE(run_clip, 0);
  const Clip& clip = l.rig->clips[static_cast<std::size_t>(run_clip)];
  PoseQuantizer quantizer(*l.format);
  PoseEncoder encoder(*l.format);
  std::vector<QuantizedPose> sent;
  std::vector<QuantizedPose> received;
  SamplingCursor cursor;
  std::size_t total_bytes = 0, updates = 0;
  for (int u = 0; u < 120; ++u) {  // 6 s at 20 Hz: 3 ticks per update
    const auto pose = sample(*l.rig, clip, (u * 3 * kTickUs) % clip.duration_us, cursor);
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(pose, sent.empty() ? nullptr : &sent.back(), q));
    auto reference = [&](const std::vector<QuantizedPose>& h) {
      PoseReference r;
      const std::size_t n = h.size();
      if (n >= 1) r.baseline = &h[n - 1], r.baseline_age = 3;
      if (n >= 2) r.prior = &h[n - 2], r.prior_age = 3;
      if (n >= 3) r.older = &h[n - 3], r.older_age = 3;
      return r;
    };
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encoder.encode(q, reference(sent), bytes));
    QuantizedPose got;
    const Status st = decode_pose(*l.format, bytes, reference(received), got);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(got, q) << "update " << u;
    if (u >= 3) {
      total_bytes += bytes.size();
      ++updates;
    }
    sent.push_back(q);
    received.push_back(got);
  }
  // docs/codec.md: about 2.7 bytes per animated joint; 3.0 is the target.
  const double per_joint = static_cast<double>(total_bytes) / static_cast<double>(updates) /
                           static_cast<double>(l.format->animated_node_count);
  EXPECT_LE(per_joint, 3.0);
}

TEST(AssetCodec, FoxWalkRunCrossfadeFromTheClipDictionaryDecodesExactlyUnderHalfAByte) {
  const Loaded l = load("Fox.glb");
  if (l.error == "skip") GTEST_SKIP() << "Fox.glb not in " << POSECAST_ASSETS_DIR;
  ASSERT_TRUE(l.error.empty()) << l.error;
  const int walk = l.model->find_clip("Walk"), run = l.model->find_clip("Run");
  ASSERT_GE(walk, 0);
  ASSERT_GE(run, 0);
  const Rig& rig = *l.rig;
  ClipDictionary server(rig.skeleton, rig.clips, *l.format), client(rig.skeleton, rig.clips, *l.format);
  PoseQuantizer quantizer(*l.format);
  PoseEncoder encoder(*l.format, &server);
  std::vector<QuantizedPose> sent, received;
  std::vector<Transform> mixed(rig.skeleton.node_count());
  std::vector<double> per_joint;
  for (int u = 0; u < 120; ++u) {  // 20 Hz: a 1 s fade walk -> run, hold, fade back
    const int64_t t = u * 3 * kTickUs;
    const double phase = std::fmod(static_cast<double>(t) / 1e6, 4.0);
    const float w = static_cast<float>(phase < 1.0 ? phase : phase < 2.0 ? 1.0 : phase < 3.0 ? 3.0 - phase : 0.0);
    PoseRecipe recipe;
    recipe.count = 2;
    recipe.inputs[0] = {static_cast<uint16_t>(walk), t % rig.clips[static_cast<std::size_t>(walk)].duration_us, 1.0f - w};
    recipe.inputs[1] = {static_cast<uint16_t>(run), t % rig.clips[static_cast<std::size_t>(run)].duration_us, w};
    ASSERT_TRUE(server.evaluate(recipe, mixed));
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(mixed, sent.empty() ? nullptr : &sent.back(), q));
    q.recipe = recipe;
    auto reference = [&](const std::vector<QuantizedPose>& h) {
      PoseReference r;
      const std::size_t n = h.size();
      if (n >= 1) r.baseline = &h[n - 1], r.baseline_age = 3;
      if (n >= 2) r.prior = &h[n - 2], r.prior_age = 3;
      if (n >= 3) r.older = &h[n - 3], r.older_age = 3;
      return r;
    };
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encoder.encode(q, reference(sent), bytes));
    QuantizedPose got;
    const Status st = decode_pose(*l.format, bytes, reference(received), got, PoseCoding::kRangeCoded, &client);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(got, q) << "update " << u;
    if (u >= 3) per_joint.push_back(static_cast<double>(bytes.size()) / l.format->animated_node_count);
    sent.push_back(q);
    received.push_back(got);
  }
  std::sort(per_joint.begin(), per_joint.end());
  EXPECT_LE(per_joint[per_joint.size() / 2], 0.5);  // the stretch target, median
}

}  // namespace
}  // namespace posecast::protocol
