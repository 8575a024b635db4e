#pragma once
// Hand-built skinned rigs and clips for the protocol tests (no importer needed), plus helpers
// to load the sample assets when they and the importer are available.

#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "posecast/clip.h"
#include "posecast/gltf_import.h"
#include "posecast/local_to_model.h"
#include "posecast/rig/model_source.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::test {

// A branching rig: a root (translating), a spine chain of `spine` joints and two arms of
// `arm` joints hanging off the top, bones `bone` units long. Every node is a skin joint, inverse
// binds come from the rest pose, there is no mesh node.
inline Skeleton branching_skeleton(int spine = 5, int arm = 4, float bone = 0.2f) {
  Skeleton s;
  auto add = [&](int parent, glm::vec3 offset, const std::string& name) {
    s.parents.push_back(static_cast<int16_t>(parent));
    Transform t;
    t.translation = offset;
    s.rest.push_back(t);
    s.names.push_back(name);
    s.source_nodes.push_back(static_cast<int32_t>(s.parents.size() - 1));
    return static_cast<int>(s.parents.size() - 1);
  };
  int top = add(-1, glm::vec3(0.0f, 0.9f, 0.0f), "root");
  for (int i = 0; i < spine; ++i) top = add(top, glm::vec3(0.0f, bone, 0.0f), "spine" + std::to_string(i));
  for (int side = 0; side < 2; ++side) {
    int p = top;
    const float dir = side == 0 ? 1.0f : -1.0f;
    for (int i = 0; i < arm; ++i) {
      p = add(p, glm::vec3(dir * bone, 0.0f, 0.0f),
              std::string(side == 0 ? "left" : "right") + std::to_string(i));
    }
  }
  std::vector<glm::mat4> world(s.parents.size());
  LocalToModelJob job{&s, s.rest, world};
  (void)job.Run();
  for (std::size_t n = 0; n < s.parents.size(); ++n) {
    s.joint_nodes.push_back(static_cast<uint16_t>(n));
    glm::mat4 inverse(1.0f);
    (void)affine_inverse(world[n], inverse);
    s.inverse_bind.push_back(inverse);
  }
  return s;
}

// Seeded generator for bounded random tests (splitmix64; 32-bit outputs, no conversions).
struct TestRng {
  uint64_t state = 1;
  uint32_t operator()() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
  }
};

// xyzw of `radians` about a unit axis (test-side math, libm is fine here).
inline glm::quat axis_angle(glm::vec3 axis, double radians) {
  const double s = std::sin(radians / 2.0);
  return glm::quat(static_cast<float>(std::cos(radians / 2.0)), static_cast<float>(static_cast<double>(axis.x) * s),
                   static_cast<float>(static_cast<double>(axis.y) * s), static_cast<float>(static_cast<double>(axis.z) * s));
}

// A looping clip (`seconds` long, keys at `key_hz`) swinging every joint about a mix of axes
// with amplitude `amplitude` radians and a per-joint phase; the root also translates.
inline Clip swing_clip(const Skeleton& s, const std::string& name, double seconds, double amplitude,
                       double frequency_hz, int key_hz = 30) {
  Clip clip;
  clip.name = name;
  const int keys = static_cast<int>(seconds * key_hz) + 1;
  const double two_pi = 6.283185307179586;
  for (std::size_t n = 0; n < s.parents.size(); ++n) {
    if (n == 0) {
      Track t;
      t.node = 0;
      t.target = TrackTarget::kTranslation;
      t.key_count = static_cast<uint32_t>(keys);
      t.times_offset = static_cast<uint32_t>(clip.times.size());
      t.values_offset = static_cast<uint32_t>(clip.values.size());
      for (int k = 0; k < keys; ++k) {
        const double time = static_cast<double>(k) / key_hz;
        clip.times.push_back(static_cast<float>(time));
        clip.values.push_back(static_cast<float>(0.05 * std::sin(two_pi * frequency_hz * time)));
        clip.values.push_back(static_cast<float>(0.9 + 0.03 * std::cos(two_pi * 2 * frequency_hz * time)));
        clip.values.push_back(static_cast<float>(0.4 * time));
      }
      clip.tracks.push_back(t);
    }
    Track t;
    t.node = static_cast<uint16_t>(n);
    t.target = TrackTarget::kRotation;
    t.key_count = static_cast<uint32_t>(keys);
    t.times_offset = static_cast<uint32_t>(clip.times.size());
    t.values_offset = static_cast<uint32_t>(clip.values.size());
    const glm::vec3 axis = glm::normalize(glm::vec3(1.0f + 0.1f * static_cast<float>(n), 0.5f,
                                                    0.3f * static_cast<float>(n % 3)));
    for (int k = 0; k < keys; ++k) {
      const double time = static_cast<double>(k) / key_hz;
      clip.times.push_back(static_cast<float>(time));
      const double angle =
          amplitude * std::sin(two_pi * frequency_hz * time + 0.7 * static_cast<double>(n));
      const glm::quat q = axis_angle(axis, angle);
      clip.values.insert(clip.values.end(), {q.x, q.y, q.z, q.w});
    }
    clip.tracks.push_back(t);
  }
  clip.duration_seconds = static_cast<float>(static_cast<double>(keys - 1) / key_hz);
  clip.duration_us = static_cast<int64_t>(std::llround(static_cast<double>(clip.duration_seconds) * 1e6));
  return clip;
}

// A model for the asset tests: "gen-rig:N", or a file name in the sample assets folder
// (POSECAST_ASSETS_DIR, images not loaded). When that file is not there, `*absent` is set and
// an error returned: the caller skips (GTEST_SKIP) rather than fails.
inline Result<Model> load_test_model(const std::string& source, bool* absent) {
  *absent = false;
  if (rig::is_generated_rig_source(source)) return rig::load_model_source(source);
  const std::string path = std::string(POSECAST_ASSETS_DIR) + "/" + source;
  if (!std::filesystem::exists(path)) {
    *absent = true;
    return Error{path + " is absent"};
  }
  ImportOptions options;
  options.load_images = false;
  return import_gltf_file(path, options);
}

}  // namespace posecast::test
