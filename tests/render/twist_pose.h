#pragma once
// A joint twisted about its bone axis from the rest pose, for the skinning tests (LBS against
// DQS volume on the CPU, GPU DQS against the CPU reference).

#include <gtest/gtest.h>

#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <string>
#include <vector>

#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/skeleton.h"

namespace posecast::render::testing {

// The first node named `name`, or -1.
inline int node_named(const Skeleton& skeleton, const std::string& name) {
  for (std::size_t n = 0; n < skeleton.node_count(); ++n)
    if (skeleton.names[n] == name) return static_cast<int>(n);
  return -1;
}

// The palette entry of `node`, or -1 when it is not a joint.
inline int joint_of_node(const Skeleton& skeleton, int node) {
  for (std::size_t j = 0; j < skeleton.joint_count(); ++j)
    if (skeleton.joint_nodes[j] == node) return static_cast<int>(j);
  return -1;
}

// The first child of `node`, or -1.
inline int first_child(const Skeleton& skeleton, int node) {
  for (std::size_t n = 0; n < skeleton.node_count(); ++n)
    if (skeleton.parents[n] == node) return static_cast<int>(n);
  return -1;
}

// The palette of the rest pose with `node` twisted by `degrees` about its bone axis (towards
// `child`): local rotation = rest rotation * twist about the child's rest translation. The
// angle goes through det_sin_cos, as everything in the project does.
inline std::vector<glm::mat4> twisted_palette(const Skeleton& skeleton, int node, int child,
                                              float degrees) {
  std::vector<Transform> locals = skeleton.rest;
  const glm::vec3 axis =
      glm::normalize(skeleton.rest[static_cast<std::size_t>(child)].translation);
  float s = 0.0f;
  float c = 1.0f;
  det_sin_cos(0.5f * degrees * kDetPi / 180.0f, s, c);
  const glm::quat twist(c, s * axis.x, s * axis.y, s * axis.z);
  Transform& local = locals[static_cast<std::size_t>(node)];
  local.rotation = local.rotation * twist;
  std::vector<glm::mat4> models(skeleton.node_count());
  std::vector<glm::mat4> palette(skeleton.joint_count());
  LocalToModelJob to_model{&skeleton, locals, models};
  EXPECT_TRUE(to_model.Run());
  PaletteJob job{&skeleton, models, palette};
  EXPECT_TRUE(job.Run());
  return palette;
}

}  // namespace posecast::render::testing
