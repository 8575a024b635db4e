#pragma once
// A small hand-built rig for the animator tests: five nodes (root -> spine -> {head, arm ->
// hand}), identity inverse binds and no mesh node (so the palette is the world matrices), and
// four clips with known keys. Built in code so the tests need no file and no importer.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "posecast/model.h"

namespace posecast::test {

inline glm::quat axis_angle(float x, float y, float z, float degrees) {
  const float half = degrees * 3.14159265358979f / 360.0f;
  const float s = std::sin(half);
  return glm::quat(std::cos(half), x * s, y * s, z * s);
}

struct TrackKeys {
  uint16_t node;
  TrackTarget target;
  std::vector<float> times;
  std::vector<float> values;  // 3 or 4 per key (rotations x, y, z, w)
};

inline void push_quat(std::vector<float>& v, const glm::quat& q) {
  v.insert(v.end(), {q.x, q.y, q.z, q.w});
}

inline Clip make_clip(const std::string& name, float duration, std::vector<TrackKeys> tracks) {
  Clip clip;
  clip.name = name;
  clip.duration_seconds = duration;
  clip.duration_us = std::llround(static_cast<double>(duration) * 1e6);
  for (const TrackKeys& k : tracks) {
    Track t;
    t.node = k.node;
    t.target = k.target;
    t.interpolation = Interpolation::kLinear;
    t.key_count = static_cast<uint32_t>(k.times.size());
    t.times_offset = static_cast<uint32_t>(clip.times.size());
    t.values_offset = static_cast<uint32_t>(clip.values.size());
    clip.times.insert(clip.times.end(), k.times.begin(), k.times.end());
    clip.values.insert(clip.values.end(), k.values.begin(), k.values.end());
    clip.tracks.push_back(t);
  }
  return clip;
}

inline std::vector<float> quats(std::initializer_list<glm::quat> qs) {
  std::vector<float> v;
  for (const glm::quat& q : qs) push_quat(v, q);
  return v;
}

// Clip indices of the test rig.
enum TestClip : uint16_t { kWalk = 0, kRun = 1, kWave = 2, kIdle = 3 };

inline std::shared_ptr<const Model> make_test_model() {
  auto model = std::make_shared<Model>();
  model->source = "test-rig";
  model->content_hash = 0x5157e57u;
  Rig rig;
  Skeleton& s = rig.skeleton;
  s.parents = {-1, 0, 1, 1, 3};
  s.names = {"root", "spine", "head", "arm", "hand"};
  s.source_nodes = {0, 1, 2, 3, 4};
  s.rest.resize(5);
  s.rest[1].translation = glm::vec3(0.0f, 1.0f, 0.0f);
  s.rest[2].translation = glm::vec3(0.0f, 0.5f, 0.0f);
  s.rest[3].translation = glm::vec3(0.3f, 0.4f, 0.0f);
  s.rest[3].rotation = axis_angle(0, 0, 1, -20.0f);
  s.rest[4].translation = glm::vec3(0.4f, 0.0f, 0.0f);
  s.rest[4].scale = glm::vec3(1.0f, 1.5f, 1.0f);
  s.joint_nodes = {0, 1, 2, 3, 4};
  s.inverse_bind.assign(5, glm::mat4(1.0f));
  s.skin_name = "test";

  rig.clips.push_back(make_clip(
      "walk", 1.0f,
      {{0, TrackTarget::kTranslation, {0.0f, 0.5f, 1.0f}, {0, 0, 0, 0, 0.1f, 0.5f, 0, 0, 1.0f}},
       {1, TrackTarget::kRotation, {0.0f, 0.5f, 1.0f},
        quats({axis_angle(0, 0, 1, 0), axis_angle(0, 0, 1, 30), axis_angle(0, 0, 1, 0)})},
       {3, TrackTarget::kRotation, {0.0f, 0.5f, 1.0f},
        quats({axis_angle(1, 0, 0, 0), axis_angle(1, 0, 0, 45), axis_angle(1, 0, 0, 0)})}}));
  rig.clips.push_back(make_clip(
      "run", 0.6f,
      {{0, TrackTarget::kTranslation, {0.0f, 0.3f, 0.6f}, {0, 0, 0, 0, 0.3f, 1.0f, 0, 0, 2.0f}},
       {1, TrackTarget::kRotation, {0.0f, 0.3f, 0.6f},
        quats({axis_angle(0, 0, 1, -10), axis_angle(0, 0, 1, 50), axis_angle(0, 0, 1, -10)})},
       {3, TrackTarget::kRotation, {0.0f, 0.3f, 0.6f},
        quats({axis_angle(0, 1, 0, 10), axis_angle(0, 1, 0, 80), axis_angle(0, 1, 0, 10)})}}));
  rig.clips.push_back(make_clip(
      "wave", 2.0f,
      {{3, TrackTarget::kRotation, {0.0f, 1.0f, 2.0f},
        quats({axis_angle(0, 0, 1, 10), axis_angle(0, 0, 1, 90), axis_angle(0, 0, 1, 10)})},
       {4, TrackTarget::kRotation, {0.0f, 0.5f, 1.0f, 1.5f, 2.0f},
        quats({axis_angle(0, 1, 0, 0), axis_angle(0, 1, 0, 40), axis_angle(0, 1, 0, 0),
               axis_angle(0, 1, 0, -40), axis_angle(0, 1, 0, 0)})},
       {4, TrackTarget::kScale, {0.0f, 2.0f}, {1.0f, 1.5f, 1.0f, 1.2f, 1.5f, 1.0f}}}));
  rig.clips.push_back(make_clip(
      "idle", 3.0f,
      {{1, TrackTarget::kRotation, {0.0f, 1.5f, 3.0f},
        quats({axis_angle(1, 0, 0, 0), axis_angle(1, 0, 0, 5), axis_angle(1, 0, 0, 0)})}}));
  model->rigs.push_back(std::move(rig));
  return model;
}

}  // namespace posecast::test
