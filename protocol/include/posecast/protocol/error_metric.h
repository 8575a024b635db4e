#pragma once
// Error measurement as the animation compression field does it (ACL's track error): the error
// of a joint is the largest displacement of virtual vertices on a shell around it (three points
// at shell_radius along its local axes), in model space after the whole hierarchy, between an
// exact pose and a lossy one. Distances are reported in "scaled centimetres": centimetres of a
// character the skeleton's bind-pose height scaled to 1.8 m (ErrorScale).
// Also: the largest displacement of the real mesh vertices under CPU linear-blend skinning.

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "posecast/protocol/pose_format.h"
#include "posecast/skeleton.h"
#include "posecast/skinned_mesh.h"

namespace posecast::protocol {

struct JointError {
  int32_t joint = -1;   // palette (skin joint) index, -1 when nothing was measured
  float error = 0.0f;   // model units
};

// Worst virtual-vertex displacement over the skin joints. `exact_models` and `test_models` are
// world matrices of every skeleton node (LocalToModelJob output). Sizes must agree with the
// skeleton; returns {-1, 0} otherwise.
JointError measure_pose_error(const Skeleton& skeleton, const ErrorScale& scale,
                              std::span<const glm::mat4> exact_models,
                              std::span<const glm::mat4> test_models);

// Keeps the worst joint error seen over many ticks (ACL's track-error report).
class TrackErrorReport {
 public:
  explicit TrackErrorReport(const ErrorScale& scale) : scale_(scale) {}

  void add(int64_t tick, const JointError& error);
  // Largest skinned-vertex displacement of a tick, in model units.
  void add_skinned(int64_t tick, float displacement);

  float worst_cm_scaled() const { return worst_.error / scale_.units_per_cm; }
  int32_t worst_joint() const { return worst_.joint; }
  int64_t worst_tick() const { return worst_tick_; }
  float worst_skinned_cm_scaled() const { return worst_skinned_ / scale_.units_per_cm; }
  int64_t worst_skinned_tick() const { return worst_skinned_tick_; }
  bool within_bound() const { return worst_.error <= scale_.bound; }
  // "worst joint 'b_Tail03' (7) at tick 41: 0.0061 cm (bound 0.01 cm); skinned vertices:
  //  0.0042 cm at tick 12"
  std::string describe(const Skeleton& skeleton) const;

 private:
  ErrorScale scale_;
  JointError worst_;
  int64_t worst_tick_ = -1;
  float worst_skinned_ = 0.0f;
  int64_t worst_skinned_tick_ = -1;
};

// CPU linear-blend skinning: out[v] = sum_i weight_i * palette[joint_i] * position[v].
// Joint indices at or past the palette size are skipped. `out` must have one entry per vertex.
void skin_positions(const SkinnedMesh& mesh, std::span<const glm::mat4> palette,
                    std::span<glm::vec3> out);

// Largest distance between the vertices skinned with `palette_a` and with `palette_b`, times
// `space_scale` (the mesh node's world scale, to turn mesh units into model units).
// `scratch_a`/`scratch_b` are resized to the vertex count.
float max_skinned_displacement(const SkinnedMesh& mesh, std::span<const glm::mat4> palette_a,
                               std::span<const glm::mat4> palette_b, float space_scale,
                               std::vector<glm::vec3>& scratch_a,
                               std::vector<glm::vec3>& scratch_b);

}  // namespace posecast::protocol
