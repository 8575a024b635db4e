// The generated rig's clips: names, key times, interpolation modes, unit rotations, seamless
// loops, shared walk/run phase, the upper-body-only wave, and motion on every joint.

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "glb_test_reader.h"

namespace posecast::rig {
namespace {

using test::kClipNames;
using test::rig_file;

struct Channel {
  int node = -1;
  std::string path;
  std::string interpolation;
  std::vector<float> times;
  std::vector<float> values;
  std::size_t components() const { return path == "rotation" ? 4 : 3; }
  // Elements per key: 3 for CUBICSPLINE (in-tangent, value, out-tangent), else 1.
  std::size_t elements() const { return interpolation == "CUBICSPLINE" ? 3 : 1; }
  // Value (not tangent) of key k, component c.
  float value(std::size_t k, std::size_t c) const {
    return values.at((k * elements() + (elements() == 3 ? 1 : 0)) * components() + c);
  }
};


std::vector<Channel> clip_channels(const test::GlbFile& file, const std::string& name) {
  for (const auto& animation : file.json.at("animations")) {
    if (animation.at("name") != name) continue;
    std::vector<Channel> channels;
    for (const auto& ch : animation.at("channels")) {
      const auto& sampler = animation.at("samplers").at(ch.at("sampler").get<std::size_t>());
      Channel c;
      c.node = ch.at("target").at("node").get<int>();
      c.path = ch.at("target").at("path").get<std::string>();
      c.interpolation = test::string_or(sampler, "interpolation", "LINEAR");
      c.times = test::read_floats(file, sampler.at("input").get<int>());
      c.values = test::read_floats(file, sampler.at("output").get<int>());
      channels.push_back(std::move(c));
    }
    return channels;
  }
  ADD_FAILURE() << "no clip named " << name;
  return {};
}

std::string node_name(const test::GlbFile& file, int node) {
  return test::string_or(file.json.at("nodes").at(static_cast<std::size_t>(node)), "name", "");
}

// z of (0, -1, 0) rotated by the key's quaternion: how far forward a hanging limb swings.
float forward_swing(const Channel& c, std::size_t k) {
  const float x = c.value(k, 0), y = c.value(k, 1), z = c.value(k, 2), w = c.value(k, 3);
  return -2.0f * (y * z + w * x);  // -(row z, column y) of the rotation matrix
}

const Channel* find_channel(const std::vector<Channel>& channels, int node, const std::string& path) {
  for (const Channel& c : channels)
    if (c.node == node && c.path == path) return &c;
  return nullptr;
}

TEST(RigClips, HasTheDocumentedClipsInOrder) {
  for (uint32_t n : {2u, 24u, 512u}) {
    std::vector<std::string> names;
    for (const auto& animation : rig_file(n).json.at("animations")) names.push_back(animation.at("name"));
    EXPECT_EQ(names, kClipNames) << n << " joints";
  }
}

TEST(RigClips, KeyTimesStartAtZeroIncreaseAndMatchTheValueCount) {
  for (uint32_t n : {2u, 24u, 128u}) {
    for (const std::string& clip : kClipNames) {
      SCOPED_TRACE(std::to_string(n) + " joints, " + clip);
      const std::vector<Channel> channels = clip_channels(rig_file(n), clip);
      ASSERT_FALSE(channels.empty());
      for (const Channel& c : channels) {
        ASSERT_GE(c.times.size(), 2u);
        EXPECT_EQ(c.times.front(), 0.0f);
        for (std::size_t k = 1; k < c.times.size(); ++k) EXPECT_LT(c.times[k - 1], c.times[k]);
        EXPECT_EQ(c.values.size(), c.times.size() * c.elements() * c.components());
      }
    }
  }
}

TEST(RigClips, InterpolationModesMatchTheClipNames) {
  const test::GlbFile& file = rig_file(24);
  for (const std::string& clip : kClipNames) {
    const std::string expected = clip == "step_pose" ? "STEP" : clip == "sway_cubic" ? "CUBICSPLINE" : "LINEAR";
    for (const Channel& c : clip_channels(file, clip)) EXPECT_EQ(c.interpolation, expected) << clip;
  }
}

TEST(RigClips, RotationKeysAreUnitQuaternions) {
  for (uint32_t n : {2u, 24u, 512u}) {
    for (const std::string& clip : kClipNames) {
      for (const Channel& c : clip_channels(rig_file(n), clip)) {
        if (c.path != "rotation") continue;
        for (std::size_t k = 0; k < c.times.size(); ++k) {
          double len2 = 0.0;
          for (std::size_t i = 0; i < 4; ++i) len2 += static_cast<double>(c.value(k, i)) * static_cast<double>(c.value(k, i));
          EXPECT_NEAR(std::sqrt(len2), 1.0, 1e-6) << clip << " node " << c.node << " key " << k;
        }
      }
    }
  }
}

TEST(RigClips, EveryClipLoopsSeamlessly) {
  for (uint32_t n : {2u, 24u, 128u}) {
    for (const std::string& clip : kClipNames) {
      for (const Channel& c : clip_channels(rig_file(n), clip)) {
        const std::size_t per_key = c.elements() * c.components();
        const std::size_t last = c.values.size() - per_key;
        for (std::size_t i = 0; i < per_key; ++i)
          EXPECT_EQ(c.values[i], c.values[last + i]) << clip << " node " << c.node << " " << c.path;
      }
    }
  }
}

TEST(RigClips, CubicClipHasNonZeroTangentsOnRotationAndTranslationTracks) {
  const std::vector<Channel> channels = clip_channels(rig_file(24), "sway_cubic");
  bool rotation_tangent = false, translation_tangent = false;
  for (const Channel& c : channels) {
    const std::size_t d = c.components();
    for (std::size_t k = 0; k < c.times.size(); ++k) {
      for (std::size_t i = 0; i < d; ++i) {
        const float in = c.values[(3 * k) * d + i], out = c.values[(3 * k + 2) * d + i];
        if (in != 0.0f || out != 0.0f) (c.path == "rotation" ? rotation_tangent : translation_tangent) = true;
      }
    }
  }
  EXPECT_TRUE(rotation_tangent);
  EXPECT_TRUE(translation_tangent);
}

TEST(RigClips, StepPoseHoldsSeveralDistinctPoses) {
  const std::vector<Channel> channels = clip_channels(rig_file(24), "step_pose");
  const Channel* hips = find_channel(channels, test::find_node(rig_file(24), "hips"), "translation");
  ASSERT_NE(hips, nullptr);
  std::set<float> heights;
  for (std::size_t k = 0; k < hips->times.size(); ++k) heights.insert(hips->value(k, 1));
  EXPECT_GE(heights.size(), 2u) << "the crouch lowers the hips";
  std::set<std::vector<float>> arm_poses;
  const Channel* arm = find_channel(channels, test::find_node(rig_file(24), "upper_arm_l"), "rotation");
  ASSERT_NE(arm, nullptr);
  for (std::size_t k = 0; k < arm->times.size(); ++k)
    arm_poses.insert({arm->value(k, 0), arm->value(k, 1), arm->value(k, 2), arm->value(k, 3)});
  EXPECT_GE(arm_poses.size(), 3u);
}

TEST(RigClips, WalkAndRunShareNormalisedKeyTimesAndFootContacts) {
  for (uint32_t n : {24u, 128u}) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    const std::vector<Channel> walk = clip_channels(file, "walk"), run = clip_channels(file, "run");
    ASSERT_FALSE(walk.empty());
    ASSERT_FALSE(run.empty());
    const std::vector<float>& wt = walk[0].times;
    const std::vector<float>& rt = run[0].times;
    ASSERT_EQ(wt.size(), rt.size());
    for (std::size_t k = 0; k < wt.size(); ++k) EXPECT_NEAR(wt[k] / wt.back(), rt[k] / rt.back(), 1e-6) << k;

    // The left leg is furthest forward (heel strike) at normalised time 0, the right at 0.5,
    // in both gaits.
    for (const std::vector<Channel>* gait : {&walk, &run}) {
      for (const auto& [leg, contact] : {std::pair<const char*, float>{"thigh_l", 0.0f}, {"thigh_r", 0.5f}}) {
        const Channel* thigh = find_channel(*gait, test::find_node(file, leg), "rotation");
        ASSERT_NE(thigh, nullptr) << leg;
        std::size_t best = 0;
        for (std::size_t k = 0; k + 1 < thigh->times.size(); ++k)
          if (forward_swing(*thigh, k) > forward_swing(*thigh, best)) best = k;
        EXPECT_NEAR(thigh->times[best] / thigh->times.back(), contact, 1e-6) << leg;
      }
    }
    // The hips bob: lowest at both contacts.
    const Channel* hips = find_channel(walk, test::find_node(file, "hips"), "translation");
    ASSERT_NE(hips, nullptr);
    const std::size_t half = (hips->times.size() - 1) / 2, quarter = half / 2;
    EXPECT_LT(hips->value(0, 1), hips->value(quarter, 1));
    EXPECT_LT(hips->value(half, 1), hips->value(quarter, 1));
  }
}

TEST(RigClips, WalkAndRunAnimateEveryJoint) {
  for (uint32_t n : {2u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    const auto joints = file.json.at("skins")[0].at("joints").get<std::vector<int>>();
    for (const char* clip : {"walk", "run"}) {
      std::set<int> moving;
      for (const Channel& c : clip_channels(file, clip)) {
        if (c.path != "rotation") continue;
        for (std::size_t k = 1; k < c.times.size(); ++k)
          for (std::size_t i = 0; i < 4; ++i)
            if (c.value(k, i) != c.value(0, i)) moving.insert(c.node);
      }
      for (int j : joints) EXPECT_TRUE(moving.count(j)) << clip << ": " << node_name(file, j) << " never moves";
    }
  }
}

TEST(RigClips, WaveAnimatesOnlyTheUpperBody) {
  for (uint32_t n : {2u, 9u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    const std::vector<int> parents = test::node_parents(file);
    const int spine = test::find_node(file, "spine");
    ASSERT_GE(spine, 0);
    std::set<int> animated;
    for (const Channel& c : clip_channels(file, "wave")) {
      int node = c.node;
      while (node >= 0 && node != spine) node = parents.at(static_cast<std::size_t>(node));
      EXPECT_EQ(node, spine) << node_name(file, c.node) << " is not upper body";
      EXPECT_EQ(c.path, "rotation");
      animated.insert(c.node);
    }
    EXPECT_FALSE(animated.empty());
    if (n >= 24) {
      EXPECT_TRUE(animated.count(test::find_node(file, "forearm_r"))) << "the right arm waves";
      EXPECT_FALSE(animated.count(test::find_node(file, "forearm_l"))) << "one arm only";
    }
  }
}

}  // namespace
}  // namespace posecast::rig
