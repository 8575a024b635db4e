// Clip markers (docs/events.md): from the glTF animation's extras.posecast_events and the rig
// config's `events`, sorted per clip, and refused at load with the file and the field when a
// time lies outside the clip, a clip name is unknown or a name repeats.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "posecast/gltf_import.h"
#include "posecast/rig/model_source.h"
#include "posecast/rig/rig_generator.h"

namespace posecast {
namespace {

std::vector<uint8_t> generated_glb() {
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{24});
  EXPECT_TRUE(glb.ok());
  return glb.ok() ? glb.value() : std::vector<uint8_t>{};
}

// The generated rig's .glb with its JSON chunk edited by `edit`.
std::vector<uint8_t> edited_glb(const std::function<void(nlohmann::json&)>& edit) {
  const std::vector<uint8_t> glb = generated_glb();
  uint32_t json_length = 0;
  std::memcpy(&json_length, glb.data() + 12, 4);
  nlohmann::json doc = nlohmann::json::parse(glb.begin() + 20, glb.begin() + 20 + json_length);
  edit(doc);
  std::string text = doc.dump();
  while (text.size() % 4 != 0) text.push_back(' ');
  std::vector<uint8_t> out(glb.begin(), glb.begin() + 12);
  const uint32_t length = static_cast<uint32_t>(text.size());
  const uint32_t type = 0x4E4F534Au;  // "JSON"
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&length), reinterpret_cast<const uint8_t*>(&length) + 4);
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(&type), reinterpret_cast<const uint8_t*>(&type) + 4);
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), glb.begin() + 20 + json_length, glb.end());
  const uint32_t total = static_cast<uint32_t>(out.size());
  std::memcpy(out.data() + 8, &total, 4);
  return out;
}

const Clip& clip_named(const Model& model, const std::string& name) {
  return model.rigs[0].clips[static_cast<std::size_t>(model.find_clip(name))];
}

TEST(ClipMarkers, TheGeneratedRigsWalkAndRunMarkTheirFootsteps) {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  for (const char* gait : {"walk", "run"}) {
    const Clip& clip = clip_named(model.value(), gait);
    ASSERT_EQ(clip.markers.size(), 2u) << gait;
    EXPECT_EQ(clip.markers[0], (ClipMarker{"footstep_l", 0, 0}));
    EXPECT_EQ(clip.markers[1].name, "footstep_r");
    EXPECT_NEAR(static_cast<double>(clip.markers[1].time_us), static_cast<double>(clip.duration_us) / 2, 1.0);
  }
  EXPECT_TRUE(clip_named(model.value(), "idle").markers.empty());
}

TEST(ClipMarkers, TheRigConfigAddsMarkersSortedByTime) {
  ImportOptions options;
  options.rig_config_json = R"({"events": {
      "idle": [ { "name": "breath", "time": 2.0, "duration": 0.5 }, { "name": "blink", "time": 0.25 } ],
      "walk": [ { "name": "mid", "time": 0.75, "comment": "between the steps" } ] }})";
  Result<Model> model = import_gltf_memory(generated_glb(), "gen-rig:24", options);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Clip& idle = clip_named(model.value(), "idle");
  ASSERT_EQ(idle.markers.size(), 2u);
  EXPECT_EQ(idle.markers[0], (ClipMarker{"blink", 250000, 0}));
  EXPECT_EQ(idle.markers[1], (ClipMarker{"breath", 2000000, 500000}));
  const Clip& walk = clip_named(model.value(), "walk");
  ASSERT_EQ(walk.markers.size(), 3u);  // the file's two and the config's
  EXPECT_EQ(walk.markers[2].name, "mid");
  // A marker at the very end of the clip is inside it.
  options.rig_config_json = R"({"events": {"walk": [ { "name": "end", "time": 1.0 } ]}})";
  ASSERT_TRUE(import_gltf_memory(generated_glb(), "gen-rig:24", options).ok());
}

TEST(ClipMarkers, BadConfigMarkersAreRefusedAtLoadNamingTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"events": {"walk": [ { "name": "late", "time": 1.5 } ]}})",
       "my.json: events.walk[0].time: 1.5 s is outside the clip (0 to 1 s)"},
      {R"({"events": {"sprint": [ { "name": "x", "time": 0 } ]}})",
       "my.json: events.sprint: no clip named 'sprint' (the clips: idle, walk, run, wave, step_pose, sway_cubic)"},
      {R"({"events": {"walk": [ { "name": "footstep_l", "time": 0.5 } ]}})",
       "my.json: events.walk[0].name: duplicate marker 'footstep_l' in clip 'walk'"},
      {R"({"events": {"idle": [ { "name": "a", "time": 0.5 }, { "name": "a", "time": 1.0 } ]}})",
       "my.json: events.idle[1].name: duplicate marker 'a' in clip 'idle'"},
      {R"({"events": {"idle": [ { "name": "a", "time": -1 } ]}})",
       "my.json: events.idle[0].time: must be a finite number >= 0"},
      {R"({"events": {"idle": [ { "name": "a" } ]}})", "my.json: events.idle[0].time: missing"},
      {R"({"events": {"idle": [ { "time": 1 } ]}})", "my.json: events.idle[0].name: missing"},
      {R"({"events": {"idle": [ { "name": "a", "time": 1, "when": 2 } ]}})",
       "my.json: events.idle[0].when: unknown field"},
      {R"({"events": {"idle": { "name": "a" }}})", "my.json: events.idle: expected an array of markers"},
      {R"({"events": ["idle"]})", "my.json: events: expected an object of clip name: [markers]"},
  };
  for (const auto& [text, message] : cases) {
    ImportOptions options;
    options.rig_config_json = text;
    options.rig_config_name = "my.json";
    Result<Model> model = import_gltf_memory(generated_glb(), "gen-rig:24", options);
    ASSERT_FALSE(model.ok()) << text;
    EXPECT_EQ(model.error().message, message);
  }
}

TEST(ClipMarkers, BadFileMarkersAreRefusedAtLoadNamingTheAnimation) {
  const auto walk_markers = [](nlohmann::json markers) {
    return edited_glb([markers](nlohmann::json& doc) {
      doc["animations"][1]["extras"] = {{"posecast_events", markers}};
    });
  };
  const std::pair<std::vector<uint8_t>, const char*> cases[] = {
      {walk_markers(nlohmann::json::parse(R"([ { "name": "far", "time": 3 } ])")),
       "rig.glb: animations[1].extras.posecast_events[0].time: 3 s is outside the clip (0 to 1 s)"},
      {walk_markers(nlohmann::json::parse(R"([ { "name": "a", "time": 0 }, { "name": "a", "time": 0.1 } ])")),
       "rig.glb: animations[1].extras.posecast_events[1].name: duplicate marker 'a' in clip 'walk'"},
      {walk_markers(nlohmann::json::parse(R"([ { "name": 4, "time": 0 } ])")),
       "rig.glb: animations[1].extras.posecast_events[0].name: expected a non-empty string"},
  };
  for (const auto& [bytes, message] : cases) {
    Result<Model> model = import_gltf_memory(bytes, "rig.glb");
    ASSERT_FALSE(model.ok()) << message;
    EXPECT_EQ(model.error().message, message);
  }
  // Other extras are left alone.
  Result<Model> other = import_gltf_memory(edited_glb([](nlohmann::json& doc) {
                                             doc["animations"][0]["extras"] = {{"author", "me"}};
                                           }),
                                           "rig.glb");
  ASSERT_TRUE(other.ok()) << other.error().message;
}

// Fox (a public sample asset beside the checkout, never copied into the repository) gets its
// markers from the rig config the repository keeps: assets/rig-configs/Fox.posecast.json.
TEST(ClipMarkers, FoxGetsItsMarkersFromTheRepositorysRigConfig) {
  const std::string fox = std::string(POSECAST_ASSETS_DIR) + "/Fox.glb";
  if (!std::filesystem::exists(fox)) GTEST_SKIP() << fox << " is absent";
  const std::string config_path = std::string(POSECAST_SOURCE_DIR) + "/assets/rig-configs/Fox.posecast.json";
  std::ifstream file(config_path);
  ASSERT_TRUE(file) << config_path;
  std::stringstream text;
  text << file.rdbuf();
  ImportOptions options;
  options.rig_config_json = text.str();
  options.rig_config_name = config_path;
  Result<Model> model = import_gltf_file(fox, options);
  ASSERT_TRUE(model.ok()) << model.error().message;
  for (const char* clip : {"Walk", "Run"}) {
    const Clip& c = clip_named(model.value(), clip);
    EXPECT_GE(c.markers.size(), 4u) << clip;  // four feet
  }
  EXPECT_FALSE(clip_named(model.value(), "Survey").markers.empty());
}

}  // namespace
}  // namespace posecast
