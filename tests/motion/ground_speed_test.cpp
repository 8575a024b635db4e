// Ground speeds from the feet of in-place clips: the generated rig's authored (in-place) walk
// and run give back the speed its travelling clips carry; Fox and CesiumMan get theirs from
// their own clips (printed; skipped when the sample assets are absent).

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "motion_test_support.h"
#include "posecast/root_motion_extraction.h"

namespace posecast {
namespace {

using motion_test::asset_path;
using motion_test::authored_generated_rig;
using motion_test::load;

TEST(GroundSpeed, TheGeneratedGaitsPlantTheirToes) {
  const Model travelling = load("gen-rig:24:travel");
  const Model authored = authored_generated_rig();
  for (const char* name : {"walk", "run"}) {
    const std::size_t c = static_cast<std::size_t>(travelling.find_clip(name));
    const float carried = travelling.rigs.front().root_motion[c].ground_speed;
    // The extracted pose walks in place: its planted toe moves back about as fast as the root
    // carried it on average (the gait's root speed is not constant over the loop).
    const float from_feet = foot_ground_speed(travelling.rigs.front(), c);
    // The authored clip carries its root so that the planted toe stands still.
    const float authored_feet = foot_ground_speed(authored.rigs.front(), c);
    std::printf("gen-rig:24:travel %s: ground speed %.4f (root), %.4f (feet of the held pose), %.4f (feet, authored)\n",
                name, static_cast<double>(carried), static_cast<double>(from_feet),
                static_cast<double>(authored_feet));
    EXPECT_GT(from_feet, 0.5f * carried) << name;
    EXPECT_LT(authored_feet, 0.02f * carried) << name;
  }
}

TEST(GroundSpeed, FoxWalkAndRun) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model fox = load(asset_path("Fox.glb"));
  const Rig& rig = fox.rigs.front();
  ASSERT_EQ(rig.motion_config.foot_nodes.size(), 2u);
  for (std::size_t c = 0; c < rig.clips.size(); ++c) {
    EXPECT_FALSE(rig.root_motion[c].travels) << rig.clips[c].name;
    std::printf("Fox %s: ground speed %.3f units/s\n", rig.clips[c].name.c_str(),
                static_cast<double>(rig.root_motion[c].ground_speed));
  }
  const float walk = rig.root_motion[static_cast<std::size_t>(fox.find_clip("Walk"))].ground_speed;
  const float run = rig.root_motion[static_cast<std::size_t>(fox.find_clip("Run"))].ground_speed;
  EXPECT_GT(walk, 10.0f);
  EXPECT_GT(run, 1.5f * walk);
  EXPECT_EQ(walk, foot_ground_speed(rig, static_cast<std::size_t>(fox.find_clip("Walk"))));
}

// Foot locking (rig config "foot_lock": true): the walk and run clips' root keys are resampled
// so the planted feet move back at one steady speed, the stride's, which becomes the ground
// speed; the idle-like Survey and the vertical motion are untouched.
TEST(GroundSpeed, FoxFootLockedGaitsPlantAtTheirGroundSpeed) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model authored = load(asset_path("Fox.glb"));
  ImportOptions options;
  options.rig_config_json = R"({"foot_lock": true})";
  const Result<Model> locked = import_gltf_file(asset_path("Fox.glb"), options);
  ASSERT_TRUE(locked.ok()) << locked.error().message;
  const Rig& rig = locked.value().rigs.front();
  for (const char* name : {"Walk", "Run"}) {
    const std::size_t c = static_cast<std::size_t>(locked.value().find_clip(name));
    const FootStride before = foot_stride(authored.rigs.front(), c);
    const FootStride after = foot_stride(rig, c);
    ASSERT_FALSE(before.advance.empty() || after.advance.empty()) << name;
    const float ground = rig.root_motion[c].ground_speed;
    const double loop_distance = static_cast<double>(ground) * 1e-6 * static_cast<double>(rig.clips[c].duration_us);
    EXPECT_NEAR(loop_distance, before.advance.back(), 1e-3 * before.advance.back()) << name;
    // Locked, the feet's advance is steady: within 1 % of the loop's stride of a straight line.
    double largest = 0.0;
    const double n = static_cast<double>(after.advance.size() - 1);
    for (std::size_t i = 0; i < after.advance.size(); ++i)
      largest = std::max(largest, std::fabs(after.advance[i] - after.advance.back() * static_cast<double>(i) / n));
    std::printf("Fox %s foot-locked: ground speed %.3f units/s, largest uneven advance %.3f of %.3f\n", name,
                static_cast<double>(ground), largest, after.advance.back());
    EXPECT_LT(largest, 0.01 * after.advance.back()) << name;
    EXPECT_EQ(rig.root_motion[c].travels, false) << name;
  }
  const std::size_t survey = static_cast<std::size_t>(locked.value().find_clip("Survey"));
  EXPECT_EQ(rig.clips[survey].values, authored.rigs.front().clips[survey].values);
}

// Foot locking rewrites nothing without a root-motion joint, for an empty stride, or when no
// key would move by more than the tolerance.
TEST(GroundSpeed, FootLockLeavesWhatItCannotOrNeedNotLock) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model authored = load(asset_path("Fox.glb"));
  ImportOptions options;
  options.rig_config_json = R"({"foot_lock": true, "root_motion": false})";
  const Result<Model> no_root = import_gltf_file(asset_path("Fox.glb"), options);
  ASSERT_TRUE(no_root.ok()) << no_root.error().message;
  for (std::size_t c = 0; c < authored.rigs.front().clips.size(); ++c)
    EXPECT_EQ(no_root.value().rigs.front().clips[c].values, authored.rigs.front().clips[c].values) << c;

  Rig rig = authored.rigs.front();
  const std::size_t walk = static_cast<std::size_t>(authored.find_clip("Walk"));
  const FootStride stride = foot_stride(rig, walk);
  ASSERT_FALSE(stride.advance.empty());
  EXPECT_FALSE(lock_planted_feet(rig, walk, FootStride{}, 0.0f));
  EXPECT_FALSE(lock_planted_feet(rig, walk, stride, 1e9f));
  EXPECT_FALSE(lock_planted_feet(rig, rig.clips.size(), stride, 0.0f));
  EXPECT_EQ(rig.clips[walk].values, authored.rigs.front().clips[walk].values);
  EXPECT_EQ(rig.clips[walk].times, authored.rigs.front().clips[walk].times);
  EXPECT_TRUE(lock_planted_feet(rig, walk, stride, 0.0f));
  EXPECT_NE(rig.clips[walk].values, authored.rigs.front().clips[walk].values);
}

TEST(GroundSpeed, CesiumMan) {
  SKIP_WITHOUT_MOTION_ASSET("cesium_man.gltf");
  const Model man = load(asset_path("cesium_man.gltf"));
  const Rig& rig = man.rigs.front();
  ASSERT_FALSE(rig.motion_config.foot_nodes.empty());
  ASSERT_EQ(rig.root_motion.size(), 1u);
  EXPECT_FALSE(rig.root_motion[0].travels);
  std::printf("CesiumMan: feet %zu, ground speed %.3f units/s\n", rig.motion_config.foot_nodes.size(),
              static_cast<double>(rig.root_motion[0].ground_speed));
  EXPECT_GT(rig.root_motion[0].ground_speed, 0.3f);
  EXPECT_LT(rig.root_motion[0].ground_speed, 3.0f);
}

}  // namespace
}  // namespace posecast
