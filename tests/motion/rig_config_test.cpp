// Rig configs: parsing, clear errors for bad input, resolution against a skeleton (defaults and
// names), and how a model file finds its sidecar config.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "posecast/gltf_import.h"
#include "posecast/rig/model_source.h"
#include "posecast/rig/rig_generator.h"
#include "posecast/rig_config.h"
#include "motion_test_support.h"

namespace posecast {
namespace {

using motion_test::node_named;

const Rig& first_rig(const Model& model) { return model.rigs.front(); }

TEST(RigConfig, ParsesEveryField) {
  Result<RigConfig> config = parse_rig_config(
      R"({"root_motion_joint": "hips", "foot_joints": ["foot_l", "foot_r"], "travel_threshold": 0.1,
          "locomotion": {"idle": "Survey", "walk": "Walk", "run": "Run"}})",
      "fox.posecast.json");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->root_motion_joint, "hips");
  EXPECT_EQ(config->foot_joints, (std::vector<std::string>{"foot_l", "foot_r"}));
  EXPECT_FLOAT_EQ(config->travel_threshold, 0.1f);
  EXPECT_EQ(config->locomotion_clips[static_cast<std::size_t>(LocomotionRole::kIdle)], "Survey");
  EXPECT_EQ(config->locomotion_clips[static_cast<std::size_t>(LocomotionRole::kRun)], "Run");
}

TEST(RigConfig, EmptyObjectMeansDefaults) {
  Result<RigConfig> config = parse_rig_config("{}", "c.json");
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(config->root_motion_joint.empty());
  EXPECT_TRUE(config->foot_joints.empty());
  EXPECT_EQ(config->travel_threshold, kDefaultTravelThreshold);
}

TEST(RigConfig, RootMotionOffLeavesEveryClipInPlace) {
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{24, /*travelling_gaits=*/true});
  ASSERT_TRUE(glb.ok());
  ImportOptions options;
  options.rig_config_json = R"({"root_motion": false})";
  Result<Model> model = import_gltf_memory(glb.value(), "gen-rig:24:travel", options);
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(first_rig(model.value()).motion_config.root_node, -1);
  for (const RootMotionTrack& track : first_rig(model.value()).root_motion) EXPECT_FALSE(track.travels);
}

TEST(RigConfig, BadDocumentsGiveClearErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"{", "c.json: $: not valid JSON"},
      {"[1]", "c.json: $: expected a JSON object"},
      {R"({"root_motion_joint": 3})", "c.json: root_motion_joint: expected a string"},
      {R"({"root_motion_joint": ""})", "c.json: root_motion_joint: must not be empty"},
      {R"({"foot_joints": "foot"})", "c.json: foot_joints: expected an array of joint names"},
      {R"({"foot_joints": ["a", 2]})", "c.json: foot_joints[1]: expected a string"},
      {R"({"travel_threshold": "x"})", "c.json: travel_threshold: expected a number"},
      {R"({"travel_threshold": 0})", "c.json: travel_threshold: must be in (0, 1]"},
      {R"({"locomotion": {"jog": "x"}})", "c.json: locomotion.jog: unknown role (expected idle, walk or run)"},
      {R"({"locomotion": []})", "c.json: locomotion: expected an object"},
      {R"({"root_joint": "hips"})", "c.json: root_joint: unknown field"},
      {R"({"root_motion": 1})", "c.json: root_motion: expected true or false"},
      {R"({"foot_lock": "yes"})", "c.json: foot_lock: expected true or false"},
  };
  for (const auto& [text, message] : cases) {
    Result<RigConfig> config = parse_rig_config(text, "c.json");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.error().message, message);
  }
}

TEST(RigConfig, UnknownNamesAreRefusedAtLoad) {
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{24});
  ASSERT_TRUE(glb.ok());
  const std::pair<const char*, const char*> cases[] = {
      {R"({"root_motion_joint": "x"})", "my.json: root_motion_joint: no joint named 'x'"},
      {R"({"foot_joints": ["toe_l", "hoof"]})", "my.json: foot_joints[1]: no joint named 'hoof'"},
      {R"({"locomotion": {"walk": "stroll"}})", "my.json: locomotion.walk: no clip named 'stroll'"},
      {R"({"root_motion_joint": 1})", "my.json: root_motion_joint: expected a string"},
  };
  for (const auto& [text, message] : cases) {
    ImportOptions options;
    options.rig_config_json = text;
    options.rig_config_name = "my.json";
    Result<Model> model = import_gltf_memory(glb.value(), "gen-rig:24", options);
    ASSERT_FALSE(model.ok()) << text;
    EXPECT_EQ(model.error().message, message);
  }
}

TEST(RigConfig, DefaultsFindTheGeneratedRigsRootFeetAndClips) {
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{24});
  ASSERT_TRUE(glb.ok());
  Result<Model> model = import_gltf_memory(glb.value(), "gen-rig:24");  // no config: defaults
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = first_rig(model.value());
  const ResolvedRigConfig& c = rig.motion_config;
  EXPECT_EQ(c.root_node, node_named(rig.skeleton, "hips"));
  // foot_l -> toe_l and foot_r -> toe_r are chains of foot-like names: the lower joint, the toe.
  EXPECT_EQ(c.foot_nodes, (std::vector<uint16_t>{static_cast<uint16_t>(node_named(rig.skeleton, "toe_l")),
                                                 static_cast<uint16_t>(node_named(rig.skeleton, "toe_r"))}));
  EXPECT_EQ(c.locomotion_clips[0], model->find_clip("idle"));
  EXPECT_EQ(c.locomotion_clips[1], model->find_clip("walk"));
  EXPECT_EQ(c.locomotion_clips[2], model->find_clip("run"));

  // "gen-rig:N" loads with these defaults: no config bytes, the hash of the rig's bytes alone.
  Result<Model> source = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(first_rig(source.value()).motion_config.foot_nodes, c.foot_nodes);
  EXPECT_EQ(source->content_hash, model->content_hash);
}

TEST(RigConfig, SmallRigsWithoutFeetFallBackToTheLowestLeaves) {
  Result<Model> model = rig::load_model_source("gen-rig:6");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = first_rig(model.value());
  ASSERT_FALSE(rig.motion_config.foot_nodes.empty());
  for (uint16_t foot : rig.motion_config.foot_nodes) {
    const std::string& name = rig.skeleton.names[foot];
    EXPECT_TRUE(name.find("shin") != std::string::npos || name.find("thigh") != std::string::npos) << name;
  }
}

TEST(RigConfig, ASidecarBesideTheFileIsReadAndHashed) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "posecast_rig_config_test";
  std::filesystem::create_directories(dir);
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{24});
  ASSERT_TRUE(glb.ok());
  const std::filesystem::path file = dir / "creature.glb";
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(glb->data()),
                                              static_cast<std::streamsize>(glb->size()));
  const std::filesystem::path sidecar = dir / "creature.posecast.json";
  EXPECT_EQ(rig_config_sidecar_path(file.string()), sidecar.string());
  std::filesystem::remove(sidecar);
  Result<Model> plain = import_gltf_file(file.string());
  ASSERT_TRUE(plain.ok()) << plain.error().message;

  std::ofstream(sidecar) << R"({"foot_joints": ["foot_l", "foot_r"]})";
  Result<Model> configured = import_gltf_file(file.string());
  ASSERT_TRUE(configured.ok()) << configured.error().message;
  EXPECT_NE(configured->content_hash, plain->content_hash);
  const Skeleton& skeleton = first_rig(configured.value()).skeleton;
  EXPECT_EQ(first_rig(configured.value()).motion_config.foot_nodes,
            (std::vector<uint16_t>{static_cast<uint16_t>(node_named(skeleton, "foot_l")),
                                   static_cast<uint16_t>(node_named(skeleton, "foot_r"))}));

  std::ofstream(sidecar) << R"({"root_motion_joint": "x"})";
  Result<Model> bad = import_gltf_file(file.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, sidecar.string() + ": root_motion_joint: no joint named 'x'");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace posecast
