#include "posecast/protocol/error_metric.h"

#include <cmath>
#include <cstdio>

namespace posecast::protocol {
namespace {

float distance(const glm::vec3& a, const glm::vec3& b) {
  const glm::vec3 d = a - b;
  return std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
}

}  // namespace

JointError measure_pose_error(const Skeleton& skeleton, const ErrorScale& scale,
                              std::span<const glm::mat4> exact_models,
                              std::span<const glm::mat4> test_models) {
  JointError worst;
  if (exact_models.size() != skeleton.node_count() || test_models.size() != skeleton.node_count()) {
    return worst;
  }
  const float r = scale.shell_radius;
  for (std::size_t j = 0; j < skeleton.joint_count(); ++j) {
    const std::size_t node = skeleton.joint_nodes[j];
    if (node >= exact_models.size()) continue;
    const glm::mat4& a = exact_models[node];
    const glm::mat4& b = test_models[node];
    const glm::vec3 ta(a[3]), tb(b[3]);
    float e = 0.0f;
    for (int axis = 0; axis < 3; ++axis) {
      // Virtual vertex at r along the joint's local axis: M * (r e_axis) = r * column + t.
      const glm::vec3 pa = glm::vec3(a[axis]) * r + ta;
      const glm::vec3 pb = glm::vec3(b[axis]) * r + tb;
      e = std::max(e, distance(pa, pb));
    }
    if (worst.joint < 0 || e > worst.error) {
      worst.joint = static_cast<int32_t>(j);
      worst.error = e;
    }
  }
  return worst;
}

void TrackErrorReport::add(int64_t tick, const JointError& error) {
  if (error.joint < 0) return;
  if (worst_.joint < 0 || error.error > worst_.error) {
    worst_ = error;
    worst_tick_ = tick;
  }
}

void TrackErrorReport::add_skinned(int64_t tick, float displacement) {
  if (worst_skinned_tick_ < 0 || displacement > worst_skinned_) {
    worst_skinned_ = displacement;
    worst_skinned_tick_ = tick;
  }
}

std::string TrackErrorReport::describe(const Skeleton& skeleton) const {
  std::string name = "?";
  if (worst_.joint >= 0 && static_cast<std::size_t>(worst_.joint) < skeleton.joint_count()) {
    const std::size_t node = skeleton.joint_nodes[static_cast<std::size_t>(worst_.joint)];
    if (node < skeleton.names.size()) name = skeleton.names[node];
  }
  char buffer[320];
  int used = std::snprintf(buffer, sizeof buffer,
                           "worst joint '%s' (%d) at tick %lld: %.5f cm scaled (bound %.5f cm)",
                           name.c_str(), worst_.joint, static_cast<long long>(worst_tick_),
                           static_cast<double>(worst_cm_scaled()),
                           static_cast<double>(scale_.bound / scale_.units_per_cm));
  if (worst_skinned_tick_ >= 0 && used > 0 && static_cast<std::size_t>(used) < sizeof buffer) {
    std::snprintf(buffer + used, sizeof buffer - static_cast<std::size_t>(used),
                  "; skinned vertices: %.5f cm scaled at tick %lld",
                  static_cast<double>(worst_skinned_cm_scaled()),
                  static_cast<long long>(worst_skinned_tick_));
  }
  return buffer;
}

void skin_positions(const SkinnedMesh& mesh, std::span<const glm::mat4> palette,
                    std::span<glm::vec3> out) {
  const std::size_t count = std::min(out.size(), mesh.positions.size());
  for (std::size_t v = 0; v < count; ++v) {
    const glm::vec4 p(mesh.positions[v], 1.0f);
    glm::vec3 sum(0.0f);
    for (int i = 0; i < 4; ++i) {
      const float w = v < mesh.weights.size() ? mesh.weights[v][i] : (i == 0 ? 1.0f : 0.0f);
      if (w == 0.0f) continue;
      const std::size_t joint = v < mesh.joints.size() ? mesh.joints[v][i] : 0u;
      if (joint >= palette.size()) continue;
      sum += w * glm::vec3(palette[joint] * p);
    }
    out[v] = sum;
  }
}

float max_skinned_displacement(const SkinnedMesh& mesh, std::span<const glm::mat4> palette_a,
                               std::span<const glm::mat4> palette_b, float space_scale,
                               std::vector<glm::vec3>& scratch_a,
                               std::vector<glm::vec3>& scratch_b) {
  scratch_a.resize(mesh.positions.size());
  scratch_b.resize(mesh.positions.size());
  skin_positions(mesh, palette_a, scratch_a);
  skin_positions(mesh, palette_b, scratch_b);
  float worst = 0.0f;
  for (std::size_t v = 0; v < scratch_a.size(); ++v) {
    worst = std::max(worst, distance(scratch_a[v], scratch_b[v]));
  }
  return worst * space_scale;
}

}  // namespace posecast::protocol
