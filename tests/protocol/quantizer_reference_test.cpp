// PoseQuantizer against the former per-node implementation (kept below, verbatim but for
// names): the lane-parallel quantiser must give the same codes, off_layout flag, success and
// coded rotations (bit for bit) on every pose, so goldens, recordings and codec sizes stay
// as they were. Runs over every 60 Hz tick of every clip of the sample assets (skipped when
// absent) and the generated 128-joint rig, blends of clip pairs, compensated and not, with no
// reference, the previous pose, random (also invalid) reference axes and the output as its
// own reference; and over random poses of a hand-built rig: rotations anywhere on the sphere
// (every axis), static channels moved off rest, rest values held exactly, non-finite values,
// out-of-range translations.

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "posecast/blending.h"
#include "posecast/det_math.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sampling.h"
#include "protocol_rigs.h"

namespace posecast::protocol {
namespace {

// ---------------------------------------------------------------- the reference quantiser
// protocol/src/quantization.cpp's formulation without lanes (namespace `former`), as a free
// function with its scratch buffers as locals. Do not "improve" it: it is the reference.
namespace former {

glm::quat conjugate(const glm::quat& q) { return glm::quat(q.w, -q.x, -q.y, -q.z); }

float component(const glm::quat& q, int i) {
  switch (i) {
    case 0: return q.x;
    case 1: return q.y;
    case 2: return q.z;
    default: return q.w;
  }
}

constexpr int kOthers[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};

// round_codes3 and quantize_linear were generic-vector code; these scalar forms are the
// expressions they documented as equal ((int32_t)(v < 0 ? -floor(-v + 0.5f) : floor(v + 0.5f))
// within the limit, with the same float operations in the same order).
bool round_code(float v, int32_t limit, int32_t& out) {
  const float magnitude = std::fabs(v);
  if (!(magnitude <= static_cast<float>(limit))) return false;
  const int32_t rounded = static_cast<int32_t>(magnitude + 0.5f);
  out = v < 0.0f ? -rounded : rounded;
  return true;
}

bool round_codes3(const float v[3], int32_t limit, int32_t* out) {
  int32_t codes[3];
  for (int i = 0; i < 3; ++i)
    if (!round_code(v[i], limit, codes[i])) return false;
  for (int i = 0; i < 3; ++i) out[i] = codes[i];
  return true;
}

bool finite3(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

bool finite4(const glm::quat& q) {
  return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}

bool quantize_linear(const glm::vec3& value, const glm::vec3& rest, float step, int32_t* out) {
  const float v[3] = {(value.x - rest.x) / step, (value.y - rest.y) / step,
                      (value.z - rest.z) / step};
  return round_codes3(v, kMaxLinearCode, out);
}

bool quantize_rotation(const glm::quat& rest, const glm::quat& target, int reference_axis,
                       float step, int32_t limit, int32_t* out) {
  const glm::quat d = det_mul(conjugate(rest), target);
  int axis = 3;
  float largest = std::fabs(d.w);
  for (int i = 0; i < 3; ++i) {
    const float m = std::fabs(component(d, i));
    if (m > largest) {
      largest = m;
      axis = i;
    }
  }
  if (!(largest > 0.0f)) return false;
  if (reference_axis >= 0 && reference_axis <= 3 && reference_axis != axis &&
      std::fabs(component(d, reference_axis)) >= 0.5f * largest) {
    axis = reference_axis;
  }
  const float pivot = component(d, axis);
  out[0] = axis;
  const float v[3] = {(component(d, kOthers[axis][0]) / pivot) / step,
                      (component(d, kOthers[axis][1]) / pivot) / step,
                      (component(d, kOthers[axis][2]) / pivot) / step};
  return round_codes3(v, limit, out + 1);
}

bool is_rest_rotation(const int32_t* codes) {
  return codes[0] == 3 && codes[1] == 0 && codes[2] == 0 && codes[3] == 0;
}

bool is_zero3(const int32_t* codes) { return codes[0] == 0 && codes[1] == 0 && codes[2] == 0; }

glm::quat dequantize_rotation(const Transform& rest, const int32_t* codes, float step) {
  const int axis = codes[0] & 3;
  const float g0 = static_cast<float>(codes[1]) * step;
  const float g1 = static_cast<float>(codes[2]) * step;
  const float g2 = static_cast<float>(codes[3]) * step;
  const float n = 1.0f / std::sqrt(((1.0f + g0 * g0) + g1 * g1) + g2 * g2);
  float c[4];
  c[axis] = n;
  c[kOthers[axis][0]] = g0 * n;
  c[kOthers[axis][1]] = g1 * n;
  c[kOthers[axis][2]] = g2 * n;
  return det_mul(rest.rotation, glm::quat(c[3], c[0], c[1], c[2]));
}

bool quantize(const PoseFormat& format, std::span<const Transform> pose,
              const QuantizedPose* reference, QuantizedPose& out,
              std::vector<glm::quat>& coded_local) {
  const std::size_t count = format.node_count();
  std::vector<glm::quat> true_world(count), coded_world(count);
  coded_local.assign(count, glm::quat(1.0f, 0.0f, 0.0f, 0.0f));
  if (pose.size() != count) return false;
  if (reference != nullptr && reference->values.size() != count * kValuesPerNode) {
    reference = nullptr;
  }
  if (out.values.size() != count * kValuesPerNode) out.values.resize(count * kValuesPerNode);
  bool off_layout = false;
  for (std::size_t n = 0; n < count; ++n) {
    const Transform& src = pose[n];
    const Transform& rest = format.rest[n];
    const NodePrecision& precision = format.precision[n];
    const uint8_t channels = format.channels[n];
    int32_t* codes = &out.values[n * kValuesPerNode];
    if (!finite3(src.translation) || !finite4(src.rotation) || !finite3(src.scale)) return false;
    if (src.translation == rest.translation) {
      codes[kTranslationCode] = codes[kTranslationCode + 1] = codes[kTranslationCode + 2] = 0;
    } else if (!quantize_linear(src.translation, rest.translation, precision.translation_step,
                                codes + kTranslationCode)) {
      return false;
    }
    if (src.scale == rest.scale) {
      codes[kScaleCode] = codes[kScaleCode + 1] = codes[kScaleCode + 2] = 0;
    } else if (!quantize_linear(src.scale, rest.scale, precision.scale_step, codes + kScaleCode)) {
      return false;
    }
    if (!(channels & kChannelTranslation) && !is_zero3(codes + kTranslationCode)) off_layout = true;
    if (!(channels & kChannelScale) && !is_zero3(codes + kScaleCode)) off_layout = true;

    const int parent = format.parents[n];
    true_world[n] = parent < 0 ? src.rotation : det_mul(true_world[parent], src.rotation);
    const int reference_axis =
        reference != nullptr ? reference->values[n * kValuesPerNode + kRotationAxis] : -1;
    glm::quat target = src.rotation;
    if ((channels & kChannelRotation) && format.compensated && parent >= 0) {
      target = det_mul(conjugate(coded_world[parent]), true_world[n]);
    }
    if (!(channels & kChannelRotation) && src.rotation == rest.rotation) {
      codes[kRotationAxis] = 3;
      codes[kRotationCode] = codes[kRotationCode + 1] = codes[kRotationCode + 2] = 0;
    } else if (!quantize_rotation(rest.rotation, target, reference_axis, precision.rotation_step,
                                  precision.rotation_limit, codes + kRotationAxis)) {
      return false;
    }
    if (!(channels & kChannelRotation) && !is_rest_rotation(codes + kRotationAxis)) {
      off_layout = true;
    }
    const glm::quat coded = is_rest_rotation(codes + kRotationAxis)
                                ? rest.rotation
                                : dequantize_rotation(rest, codes + kRotationAxis,
                                                      precision.rotation_step);
    coded_local[n] = coded;
    coded_world[n] = parent < 0 ? coded : det_mul(coded_world[parent], coded);
  }
  out.off_layout = off_layout;
  return true;
}

}  // namespace former

// ---------------------------------------------------------------- comparison

bool same_quat_bits(const void* a, const void* b, std::size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

// Quantises `pose` with both implementations and compares everything the quantiser promises.
// Returns the new quantiser's pose (for use as the next reference). `label` names the case.
class QuantizerComparer {
 public:
  explicit QuantizerComparer(const PoseFormat& format) : format_(format), quantizer_(format) {}

  QuantizedPose check(std::span<const Transform> pose, const QuantizedPose* reference,
                      const std::string& label) {
    QuantizedPose expected;
    expected.reset(format_);
    QuantizedPose got;
    got.reset(format_);
    std::vector<glm::quat> expected_rotations;
    const bool expected_ok = former::quantize(format_, pose, reference, expected, expected_rotations);
    const bool got_ok = quantizer_.quantize(pose, reference, got);
    ++poses_;
    EXPECT_EQ(expected_ok, got_ok) << label;
    if (expected_ok && got_ok) {
      EXPECT_EQ(expected.values, got.values) << label;
      EXPECT_EQ(expected.off_layout, got.off_layout) << label;
      const auto rotations = quantizer_.coded_rotations();
      EXPECT_EQ(rotations.size(), expected_rotations.size()) << label;
      if (rotations.size() == expected_rotations.size()) {
        EXPECT_TRUE(same_quat_bits(rotations.data(), expected_rotations.data(),
                              rotations.size() * sizeof(glm::quat)))
            << label;
      }
      ++succeeded_;
      if (expected.off_layout) ++off_layout_;
    }
    return got;
  }

  // The output as its own reference (the server may hand in the pose it overwrites).
  void check_in_place(std::span<const Transform> pose, const QuantizedPose& previous,
                      const std::string& label) {
    QuantizedPose expected = previous;
    std::vector<glm::quat> expected_rotations;
    const bool expected_ok = former::quantize(format_, pose, &expected, expected, expected_rotations);
    QuantizedPose got = previous;
    const bool got_ok = quantizer_.quantize(pose, &got, got);
    EXPECT_EQ(expected_ok, got_ok) << label;
    if (expected_ok && got_ok) {
      EXPECT_EQ(expected.values, got.values) << label;
      EXPECT_EQ(expected.off_layout, got.off_layout) << label;
    }
  }

  std::size_t poses() const { return poses_; }
  std::size_t succeeded() const { return succeeded_; }
  std::size_t off_layout() const { return off_layout_; }

 private:
  const PoseFormat& format_;
  PoseQuantizer quantizer_;
  std::size_t poses_ = 0, succeeded_ = 0, off_layout_ = 0;
};

// Reference axes drawn from -1..5 (out-of-range values must be ignored as before).
QuantizedPose with_random_reference_axes(const QuantizedPose& pose, test::TestRng& rng) {
  QuantizedPose r = pose;
  for (std::size_t i = kRotationAxis; i < r.values.size(); i += kValuesPerNode) {
    r.values[i] = static_cast<int32_t>(rng() % 7u) - 1;
  }
  return r;
}

// Every pose of `poses` (a sequence in time) against no reference, the previous pose, random
// axes, and itself.
void compare_sequence(const PoseFormat& format, const std::vector<std::vector<Transform>>& poses,
                      const std::string& label, QuantizerComparer& comparer) {
  test::TestRng rng;
  rng.state = 7;
  QuantizedPose previous;
  previous.reset(format);
  for (std::size_t i = 0; i < poses.size(); ++i) {
    const std::string at = label + " pose " + std::to_string(i);
    comparer.check(poses[i], nullptr, at + " (no reference)");
    const QuantizedPose random = with_random_reference_axes(previous, rng);
    comparer.check(poses[i], &random, at + " (random axes)");
    if (i % 7 == 0) comparer.check_in_place(poses[i], previous, at + " (in place)");
    previous = comparer.check(poses[i], i > 0 ? &previous : nullptr, at + " (previous)");
  }
}

// ---------------------------------------------------------------- sample assets

struct ReferenceAsset {
  std::unique_ptr<Model> model;
  const ::posecast::Rig* rig = nullptr;
  bool absent = false;  // the sample asset is not installed: the test skips
  std::string error;    // any other load failure (a present asset, gen-rig): the test fails
};

ReferenceAsset load_asset(const std::string& source) {
  ReferenceAsset a;
  Result<Model> m = test::load_test_model(source, &a.absent);
  if (!m.ok()) {
    a.error = m.error().message;
    return a;
  }
  a.model = std::make_unique<Model>(std::move(m.value()));
  a.rig = &a.model->rigs.at(0);
  return a;
}

// Every 60 Hz tick of clip `c` (at most `max_seconds`).
std::vector<std::vector<Transform>> sample_every_tick(const ::posecast::Rig& rig, std::size_t c, double max_seconds) {
  const Clip& clip = rig.clips[c];
  std::vector<std::vector<Transform>> poses;
  std::vector<Transform> out(rig.skeleton.node_count());
  SamplingCursor cursor;
  cursor.reset(clip);
  const int64_t end = std::min<int64_t>(clip.duration_us, static_cast<int64_t>(max_seconds * 1e6));
  for (int64_t t = 0; t <= end; t += 1000000 / 60) {
    SampleJob job{&rig.skeleton, &clip, t, cursor.keys, out};
    EXPECT_TRUE(job.Run());
    poses.push_back(out);
  }
  return poses;
}

class AssetQuantizer : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(AssetQuantizer, GivesTheFormerCodesAndRotationsOnEveryTickOfEveryClipAndBlend) {
  const auto [source, compensate] = GetParam();
  const ReferenceAsset asset = load_asset(source);
  if (asset.absent) GTEST_SKIP() << source << " not in " << POSECAST_ASSETS_DIR;
  ASSERT_TRUE(asset.error.empty()) << source << ": " << asset.error;
  const ::posecast::Rig& rig = *asset.rig;
  PoseFormatOptions options;
  options.compensate_rotations = compensate;
  auto built = build_pose_format(rig.skeleton, rig.clips, options);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const PoseFormat& format = built.value();
  QuantizerComparer comparer(format);
  std::vector<std::vector<std::vector<Transform>>> clips;
  for (std::size_t c = 0; c < rig.clips.size(); ++c) {
    clips.push_back(sample_every_tick(rig, c, 6.0));
    compare_sequence(format, clips.back(), std::string(source) + " clip " + rig.clips[c].name,
                     comparer);
  }
  // Crossfades of neighbouring clips (BlendJob, as the animator does).
  for (std::size_t c = 0; c + 1 < clips.size(); ++c) {
    const std::size_t ticks = std::min(clips[c].size(), clips[c + 1].size());
    std::vector<std::vector<Transform>> blended;
    std::vector<Transform> out(rig.skeleton.node_count());
    for (std::size_t i = 0; i < ticks; ++i) {
      const float w = static_cast<float>(i) / static_cast<float>(ticks);
      const BlendInput inputs[2] = {{clips[c][i], 1.0f - w}, {clips[c + 1][i], w}};
      BlendJob job{inputs, rig.skeleton.rest, out};
      ASSERT_TRUE(job.Run());
      blended.push_back(out);
    }
    compare_sequence(format, blended, std::string(source) + " blend " + std::to_string(c), comparer);
  }
  EXPECT_GT(comparer.succeeded(), 0u);
  RecordProperty("poses", static_cast<int>(comparer.poses()));
}

INSTANTIATE_TEST_SUITE_P(SampleAssets, AssetQuantizer,
                         ::testing::Combine(::testing::Values("Fox.glb", "cesium_man.gltf",
                                                              "gen-rig:128", "SimpleSkin.gltf",
                                                              "rigged_simple.gltf"),
                                            ::testing::Bool()),
                         // Readable names, e.g. Fox_glb_compensated (not the pointer value).
                         [](const ::testing::TestParamInfo<std::tuple<const char*, bool>>& param_info) {
                           std::string name = std::get<0>(param_info.param);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name + (std::get<1>(param_info.param) ? "_compensated" : "_plain");
                         });

// ---------------------------------------------------------------- random poses

struct ReferenceRandomRig {
  Skeleton skeleton = test::branching_skeleton(6, 5);
  std::vector<Clip> clips;
  PoseFormat format;
  explicit ReferenceRandomRig(bool compensate) {
    clips.push_back(test::swing_clip(skeleton, "swing", 2.0, 0.8, 1.0));
    // The last arm joint stays unanimated: its channels are static in the layout.
    const uint16_t still = static_cast<uint16_t>(skeleton.node_count() - 1);
    std::erase_if(clips[0].tracks, [&](const Track& t) { return t.node == still; });
    PoseFormatOptions options;
    options.compensate_rotations = compensate;
    auto f = build_pose_format(skeleton, clips, options);
    EXPECT_TRUE(f.ok());
    if (f.ok()) format = std::move(f.value());
  }
};

float uniform_float(test::TestRng& rng, float lo, float hi) {
  return lo + (hi - lo) * static_cast<float>(rng() >> 8) * (1.0f / 16777216.0f);
}

// A rotation anywhere on the sphere (normalised random quaternion: every component can be
// the largest, with either sign).
glm::quat random_unit_rotation(test::TestRng& rng) {
  for (;;) {
    const glm::quat q(uniform_float(rng, -1, 1), uniform_float(rng, -1, 1), uniform_float(rng, -1, 1),
                      uniform_float(rng, -1, 1));
    const float len2 = det_dot(q, q);
    if (len2 > 0.01f && len2 <= 1.0f) return det_normalize(q);
  }
}

class RandomPoses : public ::testing::TestWithParam<bool> {};

TEST_P(RandomPoses, GiveTheFormerCodesRotationsAndFailures) {
  const ReferenceRandomRig rig(GetParam());
  const PoseFormat& format = rig.format;
  ASSERT_EQ(format.node_count(), rig.skeleton.node_count());
  QuantizerComparer comparer(format);
  test::TestRng rng;
  rng.state = 99;
  QuantizedPose previous;
  previous.reset(format);
  for (int i = 0; i < 3000; ++i) {
    std::vector<Transform> pose = format.rest;
    const int style = i % 6;
    for (std::size_t n = 0; n < pose.size(); ++n) {
      const uint32_t pick = rng() % 8u;
      if (style == 0 || pick == 0) {
        pose[n].rotation = random_unit_rotation(rng);  // anywhere: every axis, both signs
      } else if (pick < 6) {
        // Near rest (the common case), sometimes exactly rest.
        const glm::quat small = det_normalize(glm::quat(
            1.0f, uniform_float(rng, -0.3f, 0.3f), uniform_float(rng, -0.3f, 0.3f), uniform_float(rng, -0.3f, 0.3f)));
        pose[n].rotation = det_mul(format.rest[n].rotation, small);
      }
      if (rng() % 4u == 0) {
        pose[n].translation += glm::vec3(uniform_float(rng, -0.1f, 0.1f), uniform_float(rng, -0.1f, 0.1f),
                                         uniform_float(rng, -0.1f, 0.1f));
      }
      if (rng() % 16u == 0) pose[n].scale = glm::vec3(uniform_float(rng, 0.5f, 2.0f));
      if (rng() % 32u == 0) pose[n].translation.y = format.rest[n].translation.y;  // one lane at rest
    }
    if (style == 3) {
      // Failures: a non-finite value or an unreachable translation in one random node.
      const std::size_t n = rng() % pose.size();
      switch (rng() % 5u) {
        case 0: pose[n].rotation.y = std::numeric_limits<float>::quiet_NaN(); break;
        case 1: pose[n].translation.z = std::numeric_limits<float>::infinity(); break;
        case 2: pose[n].scale.x = -std::numeric_limits<float>::infinity(); break;
        case 3: pose[n].translation.x = 1e30f; break;
        default: pose[n].rotation = glm::quat(0.0f, 0.0f, 0.0f, 0.0f); break;
      }
    }
    const std::string label = "random pose " + std::to_string(i);
    comparer.check(pose, nullptr, label + " (no reference)");
    const QuantizedPose random = with_random_reference_axes(previous, rng);
    comparer.check(pose, &random, label + " (random axes)");
    const QuantizedPose next = comparer.check(pose, &previous, label + " (previous)");
    if (style != 3) previous = next;
  }
  // The cases above must really have been exercised.
  EXPECT_GT(comparer.succeeded(), comparer.poses() / 2);
  EXPECT_LT(comparer.succeeded(), comparer.poses());
  EXPECT_GT(comparer.off_layout(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Compensation, RandomPoses, ::testing::Bool());

TEST(PoseQuantizerFormat, RejectsAFormatWhoseParentsDoNotPrecedeTheirChildren) {
  ReferenceRandomRig rig(true);
  PoseFormat format = rig.format;
  format.parents[1] = 3;  // after its child
  PoseQuantizer quantizer(format);
  QuantizedPose out;
  EXPECT_FALSE(quantizer.quantize(format.rest, nullptr, out));
  PoseFormat short_arrays = rig.format;
  short_arrays.precision.pop_back();
  PoseQuantizer quantizer2(short_arrays);
  EXPECT_FALSE(quantizer2.quantize(short_arrays.rest, nullptr, out));
  PoseQuantizer good(rig.format);
  EXPECT_TRUE(good.quantize(rig.format.rest, nullptr, out));
}

}  // namespace
}  // namespace posecast::protocol
