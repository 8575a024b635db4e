#pragma once
// Diagnosing a divergence: which tick, which entity, which joint, and by how much, so a
// regression is readable without a debugger (docs/recording-format.md, "Divergence reports",
// and docs/regression.md).

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posecast/replay/recording.h"
#include "posecast/skeleton.h"
#include "posecast/sim/animation_state.h"

namespace posecast::replay {

class Replayer;

// How far one joint is from its reference, in the model space of the entity (the space the
// palette is relative to: the skinned mesh node, or the scene root).
struct JointDifference {
  int joint = -1;          // palette index (skin joint order); -1 when nothing differs
  std::string joint_name;  // the joint's node name ("" when the file has none)
  // Largest displacement, in model units, of the joint's origin and of the tips of its unit
  // axes: covers translation, rotation and scale differences in one number.
  float displacement = 0.0f;
  float translation = 0.0f;   // distance between the two joint origins
  float max_element = 0.0f;   // largest |difference| among the 16 palette matrix elements
  uint64_t differing_joints = 0;
};

// Compares two palettes of one entity (joint_count() matrices each) and names the worst
// joint, by displacement. The model-space joint matrix is palette * inverse(inverse_bind).
// Sizes that differ from the skeleton give joint -1 and differing_joints = the larger size.
JointDifference compare_palettes(const Skeleton& skeleton, std::span<const glm::mat4> current,
                                 std::span<const glm::mat4> reference);

// One entity's matrices of a recorded palette sample (16 floats per joint, column-major) as
// palette matrices, for compare_palettes.
std::vector<glm::mat4> sample_palette(const PaletteSample::Entity& entity);

// The first field in which two entity states differ, as a path with both values
// ("layers[0].target.slots[0].phase: 123 vs 456"); empty when they are equal. Sampling cursors
// are ignored (they never change output).
std::string first_state_difference(const sim::EntityState& current, const sim::EntityState& reference);

struct DivergenceReport {
  uint64_t tick = 0;  // the first tick whose world hash differs
  uint64_t replayed_hash = 0;
  uint64_t recorded_hash = 0;

  // Where the entity and joint were found: a tick at or after `tick` for which the recording
  // has per-entity reference data (the tick before a checkpoint), or `tick` itself.
  std::optional<uint64_t> located_at;
  std::optional<uint32_t> entity;
  std::string entity_note;  // "palette hash differs", "missing in the replay", ...
  std::optional<JointDifference> joint;
  std::string joint_reference;   // what the joint was compared against
  std::string state_difference;  // "entity 7: layers[0]...: a vs b" when the state diverged
  std::string limits;            // what could not be found, and why

  // Multi-line, human-readable: the first line is "tick T: world hash A, recorded B" (or "as
  // recorded" / "none recorded" when the tick check alone differs).
  std::string to_text() const;
};

// Called right after `replayer.step()` returned a mismatch (`first`): steps the replay on to the
// first checkpoint after the divergence and compares (1) every entity's palette hash at the
// tick before that checkpoint with the recorded ones -> the entity; (2) the palettes with the
// recorded PALS sample when the recording has one -> joint and size; otherwise (3) the replay's
// state with the checkpoint's, and the palettes both give at the checkpoint tick -> the state
// field, joint and size. The replay is left past the divergence (seek before reusing it).
DivergenceReport diagnose_divergence(Replayer& replayer, uint64_t tick, uint64_t replayed_hash,
                                     uint64_t recorded_hash);

// Short form of a joint difference: "joint 12 'spine_02': 0.0123 model units (translation
// 0.01, max palette element 0.004; 3 joints differ)".
std::string describe(const JointDifference& d);

}  // namespace posecast::replay
