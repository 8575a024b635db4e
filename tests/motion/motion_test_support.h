#pragma once
// Shared helpers of the motion tests: models with and without extraction, model-space joint
// positions, and an entity driven by root-motion deltas.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "posecast/gltf_import.h"
#include "posecast/pose_evaluation.h"
#include "posecast/rig/model_source.h"
#include "posecast/rig/rig_generator.h"
#include "posecast/root_motion.h"

namespace posecast::motion_test {

inline std::string asset_path(const std::string& name) { return std::string(POSECAST_ASSETS_DIR) + "/" + name; }

#define SKIP_WITHOUT_MOTION_ASSET(name)                                                 \
  do {                                                                                  \
    if (!std::filesystem::exists(::posecast::motion_test::asset_path(name)))            \
      GTEST_SKIP() << "sample asset " << (name) << " not found in " POSECAST_ASSETS_DIR; \
  } while (0)

inline int node_named(const Skeleton& skeleton, const std::string& name) {
  for (std::size_t i = 0; i < skeleton.names.size(); ++i)
    if (skeleton.names[i] == name) return static_cast<int>(i);
  return -1;
}

// The generated rig with travelling gaits as authored: root motion on "spine", which no clip
// translates or turns for good, so every clip stays in place and the hips keep their keys.
inline Model authored_generated_rig(uint32_t joints = 24) {
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(rig::RigOptions{joints, /*travelling_gaits=*/true});
  EXPECT_TRUE(glb.ok());
  ImportOptions options;
  options.rig_config_json = R"({"root_motion_joint": "spine"})";
  Result<Model> model = import_gltf_memory(glb.value(), "gen-rig (authored)", options);
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(model).value();
}

inline Model load(const std::string& source) {
  Result<Model> model = rig::load_model_source(source);
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(model).value();
}

// Fox.glb with its walk and run foot-locked (rig config "foot_lock": true).
inline Model load_foot_locked_fox() {
  ImportOptions options;
  options.rig_config_json = R"({"foot_lock": true})";
  Result<Model> model = import_gltf_file(asset_path("Fox.glb"), options);
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::move(model).value();
}

// Model-space matrix of `node` in clip `clip` at `time_us`.
inline glm::mat4 model_matrix(const Rig& rig, int clip, int64_t time_us, int node) {
  SamplingCursor cursor;
  PoseBuffers buffers;
  EXPECT_TRUE(evaluate_pose(rig, clip, time_us, cursor, buffers));
  return buffers.models[static_cast<std::size_t>(node)];
}

// An entity on the ground moved by root-motion deltas the way the World applies them.
struct Mover {
  float x = 0.0f, z = 0.0f, yaw = 0.0f;
  void apply(const RootMotionDelta& d) {
    float wx, wz;
    rotate_by_yaw(yaw, d.dx, d.dz, wx, wz);
    x += wx;
    z += wz;
    yaw += d.dyaw;
  }
  // Where a point of the (extracted) pose lands in the world.
  glm::vec3 place(const glm::vec3& p) const {
    float wx, wz;
    rotate_by_yaw(yaw, p.x, p.z, wx, wz);
    return glm::vec3(x + wx, p.y, z + wz);
  }
};

}  // namespace posecast::motion_test
