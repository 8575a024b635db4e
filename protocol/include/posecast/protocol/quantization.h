#pragma once
// Quantised poses: the integer form both server and client hold, and the only thing the pose
// codec sends (as differences).
//
// Per node, 10 integers (kValuesPerNode), all relative to the node's rest TRS:
//   [0..2]  translation codes:  t = rest.t + code * translation_step
//   [3]     rotation axis a (0..3 = x, y, z, w): the component of d = conj(rest.r) * r that is
//           divided out (kept >= 0)
//   [4..6]  rotation codes of d's other three components over d[a] ("Gibbs" coordinates,
//           |g| <= 2), step rotation_step:   d = (g, 1) / sqrt(1 + |g|^2),  r = rest.r * d
//   [7..9]  scale codes:        s = rest.s + code * scale_step
// The rest TRS is all codes 0 with axis 3, so channels that do not animate cost nothing.
//
// dequantize_pose() uses only + - * / sqrt in a fixed order: every machine turns the same
// codes into the same bits, so the server's baseline and the client's decoded pose agree
// exactly, and the palettes from quantized_palette() do too.

#include <glm/mat4x4.hpp>

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/root_coding.h"
#include "posecast/sim/pose_recipe.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::protocol {

inline constexpr int kValuesPerNode = 10;
inline constexpr int kTranslationCode = 0;
inline constexpr int kRotationAxis = 3;
inline constexpr int kRotationCode = 4;
inline constexpr int kScaleCode = 7;
// Translation and scale codes stay within +-kMaxLinearCode (quantize_pose fails beyond).
inline constexpr int32_t kMaxLinearCode = 1 << 30;

// Recipes are animation state (sim/pose_recipe.h): the codec sends them with the pose.
using sim::kMaxRecipeMotionInputs;
using sim::kMaxFrozenMixes;
using sim::kMaxRecipeInputs;
using sim::kMaxRecipeTimeUs;
using sim::kRecipeWrapModes;
using sim::PoseRecipe;
using sim::kRestInput;
using sim::recipe_motion_is_rest;
using sim::recipe_fade_in_range;
using sim::recipe_shape_valid;
using sim::recipe_fade_fraction;
using sim::recipe_fade_alpha;
using sim::recipe_frozen_mix_alpha;
using sim::recipe_same_evaluation;

struct QuantizedPose {
  std::vector<int32_t> values;  // node_count * kValuesPerNode
  // True when some channel the layout calls static is away from rest in this pose: the codec
  // then sends every channel of every node for it (docs/codec.md).
  bool off_layout = false;
  // The recipe the server attached (sent with the pose, so both sides hold the same one; the
  // next records predict clip times from it). Set by the caller before encoding.
  PoseRecipe recipe;
  // Where the entity stands: the held root transform (root_coding.h), coded beside the pose
  // (encode_root / decode_root), not by the pose codec, which leaves it as it is.
  QuantizedRoot root;

  // Sizes `values` for the format and sets the rest pose (root at the origin).
  void reset(const PoseFormat& format);
  bool operator==(const QuantizedPose&) const = default;
};

namespace detail {
// PoseQuantizer's schedule: an implementation detail, in the header only because the quantizer
// holds it (see quantization.cpp). quantize() works on four nodes at a time (lanes), with
// everything that depends only on the format precomputed lane by lane; a group or block with
// fewer than four nodes repeats its last node (those lanes compute and write the same values).

// Translations and scales of four consecutive nodes (and their finiteness check).
struct alignas(16) LinearBlock {
  float rest_translation[3][4];  // lanes x, y, z
  float rest_scale[3][4];
  // Per node the rest values as its pose rows hold them: (tx, ty, tz, 0) and (0, sx, sy, sz).
  float rest_translation_row[4][4];
  float rest_scale_row[4][4];
  float translation_step[4];
  float scale_step[4];
  int32_t translation_unanimated[4];  // -1 where the node has no such channel, else 0
  int32_t scale_unanimated[4];
  int32_t node[4];
};

enum class RotationGroupKind : uint8_t {
  kRoot,         // no parent: world rotation = local rotation
  kChild,        // quantised as it is (not compensated), below a parent
  kCompensated,  // quantised against the parent's quantised world rotation
};

// Rotations of up to four nodes of one kind whose parents are all in earlier groups.
struct alignas(16) RotationGroup {
  float conj_rest[4][4];  // conj(rest rotation) as lanes x, y, z, w
  float rest[4][4];       // rest rotation as lanes x, y, z, w
  float step[4];          // rotation_step
  float bound[4];         // rotation_limit as float
  int32_t unanimated[4];  // -1 where the node has no rotation channel, else 0
  int32_t node[4];
  int32_t parent[4];      // the node itself for roots (never read)
  RotationGroupKind kind = RotationGroupKind::kRoot;
  bool all_unanimated = false;  // no lane has a rotation channel
};
}  // namespace detail

// Quantises local poses for one format. Holds scratch buffers and a per-format schedule
// (allocated once, in the constructor); quantize() itself never allocates once `out` is sized.
class PoseQuantizer {
 public:
  explicit PoseQuantizer(const PoseFormat& format);  // `format` must outlive the quantizer

  // Quantises `pose` (node_count TRS). `reference` (nullable): the entity's previous quantised
  // pose (the server quantises once per tick for every client); its rotation axes are kept
  // while still well conditioned (hysteresis), so deltas stay small. Any reference gives a
  // correct pose; a different one only changes which axes are picked. With format.compensated,
  // rotations are quantised against the parent's quantised world rotation. Returns false (out
  // unspecified) when the pose has the wrong size, a non-finite value, or a translation/scale
  // beyond kMaxLinearCode steps from rest, or when the format is malformed (per-node arrays of
  // different sizes, a parent not before its child; build_pose_format never makes one).
  bool quantize(std::span<const Transform> pose, const QuantizedPose* reference,
                QuantizedPose& out);

  // After a successful quantize(): node n's local rotation as dequantize_pose() gives it for
  // `out` (the quantiser computes it anyway, for the compensated parents), node_count entries.
  // Unspecified after a failed quantize().
  std::span<const glm::quat> coded_rotations() const { return coded_local_; }

 private:
  const PoseFormat& format_;
  bool valid_format_ = false;
  std::vector<detail::LinearBlock> linear_blocks_;  // the nodes in order, four to a block
  std::vector<detail::RotationGroup> groups_;       // parents' groups first
  std::vector<glm::quat> coded_local_;  // dequantised local rotations of the last quantize()
  std::vector<glm::quat> true_world_;   // world rotations of the input pose (compensated only)
  std::vector<glm::quat> coded_world_;  // world rotations of the quantised pose (compensated only)
};

// Codes -> local TRS (node_count entries). Deterministic (see above). Precondition: `pose`
// was produced by PoseQuantizer or decode_pose for this format (values in range).
void dequantize_pose(const PoseFormat& format, const QuantizedPose& pose,
                     std::span<Transform> out);

// dequantize_pose() for a pose whose codes mostly equal those of `known`, a pose of the same
// format whose dequantised rotations are at hand (`known_rotations`, node_count entries, e.g.
// PoseQuantizer::coded_rotations() of the quantize() that produced `known`): a node whose
// rotation codes equal known's takes known_rotations[n] (the same bits dequantize_pose would
// compute), the others are dequantised. Translations and scales are dequantised as usual.
// Falls back to dequantize_pose() when `known` or `known_rotations` has the wrong size.
void dequantize_pose_reusing(const PoseFormat& format, const QuantizedPose& pose,
                             const QuantizedPose& known,
                             std::span<const glm::quat> known_rotations,
                             std::span<Transform> out);

// Dequantised rotation of one node from its codes, exposed for tests.
glm::quat dequantize_rotation(const Transform& rest, const int32_t* codes, float step);

// Buffers for quantized_palette().
struct PaletteScratch {
  std::vector<Transform> locals;
  std::vector<glm::mat4> models;
};

// The skinning palette of a quantised pose through the core jobs (dequantize_pose,
// LocalToModelJob, PaletteJob): the server and every client compute the same bits.
// `skeleton` is the one the format was built from. Returns false when a job rejects its input
// (sizes disagree, singular mesh node).
bool quantized_palette(const Skeleton& skeleton, const PoseFormat& format,
                       const QuantizedPose& pose, PaletteScratch& scratch,
                       std::span<glm::mat4> palette);

}  // namespace posecast::protocol
