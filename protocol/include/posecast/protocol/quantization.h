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

// How the server evaluated a pose, when it is layer 0's motion alone (docs/codec.md, "Recipes"):
//  - plain (source_count 0): BlendJob over the `count` inputs in this order, each clip sampled
//    (SampleJob) at its clip-local time (a single contributing clip sampled straight);
//  - crossfade (source_count > 0, layer 0 fading from a playing motion): inputs
//    [0, source_count) are the source motion and [source_count, count) the target motion, each
//    evaluated as a plain blend; then OverrideBlendJob mixes the target over the source with
//    alpha = fade_elapsed_us / fade_duration_us (recipe_fade_alpha, exactly sim::fade_alpha;
//    alpha 0 shows the source unchanged).
//  - crossfade from a frozen pose (frozen_source_count > 0: layer 0 fading from the pose it
//    froze when a crossfade was interrupted): the source block [0, source_count) is a chain
//    that rebuilds the frozen pose. Its base motion [0, frozen_source_count) is evaluated as a
//    plain blend; then each of the frozen_mix_count mixes k in order evaluates its motion
//    [previous end, frozen_mixes[k].end) and mixes it over at frozen_mixes[k]'s fixed
//    progress (recipe_frozen_mix_alpha). One mix: a crossfade between two motions was
//    interrupted; each further mix: a fade from such a frozen pose was interrupted again
//    (up to kMaxFrozenMixes). Its clip times are fixed (the frozen pose does not move:
//    source_speed 0, source_wrap 0); then the target motion is mixed over it as above.
//  - the rest pose: a motion of one input with weight 0 (kRestInput) is the skeleton's rest
//    pose (BlendJob with no weight gives `rest`), which is how a fade in from the rest pose is
//    described (a crossfade from it at speed 0, or the base of a frozen chain).
// Lets the codec predict the pose from the shared clips (clip_dictionary.h) and the client
// evaluate the server's pose at any render time. count 0 = no recipe.
// The speed, wrap and steady_us fields do not change what the recipe evaluates to; they say how
// its clip times move (the client derives recipes between and past snapshots from them).
inline constexpr uint8_t kMaxRecipeMotionInputs = 4;  // clips of one motion (sim::kMaxBlendClips)
// Mixes in a frozen chain: a crossfade interrupted three times in a row is still described.
inline constexpr uint8_t kMaxFrozenMixes = 3;
// Inputs of all motions together. A chain of five 4-clip motions would need 20; the server
// describes poses up to this many inputs (typical motions have one or two clips) and sends the
// others without a recipe.
inline constexpr uint8_t kMaxRecipeInputs = 16;
inline constexpr int64_t kMaxRecipeTimeUs = (int64_t{1} << 32) - 1;
inline constexpr uint8_t kRecipeWrapModes = 3;  // sim::WrapMode: 0 loop, 1 clamp, 2 ping-pong

struct PoseRecipe {
  struct Input {
    // Built as {clip, time_us, weight}; stored time first so an input takes 16 bytes, not 24
    // (a recipe holds kMaxRecipeInputs of them, and every pooled client sample one recipe).
    Input() = default;
    constexpr Input(uint16_t clip_index, int64_t time, float w)
        : time_us(time), weight(w), clip(clip_index) {}
    int64_t time_us = 0;   // clip-local time, 0..kMaxRecipeTimeUs
    float weight = 1.0f;   // finite, >= 0 (BlendJob normalises)
    uint16_t clip = 0;     // index into the rig's clips
    bool operator==(const Input&) const = default;
  };
  static_assert(sizeof(Input) == 16, "recipe inputs stay small");
  // One mix of a frozen chain: its motion ends at input `end`; its fade progress when it froze,
  // 0 <= elapsed_us < duration_us <= kMaxRecipeTimeUs.
  struct FrozenMix {
    int64_t elapsed_us = 0;
    int64_t duration_us = 0;
    uint8_t end = 0;
    bool operator==(const FrozenMix&) const = default;
  };
  Input inputs[kMaxRecipeInputs];  // [0, count) used; later ones unspecified, never read
  uint8_t count = 0;
  uint8_t source_count = 0;  // 0: plain; else the source block's inputs (1..4, or a frozen
                             // chain's), and 1..4 target inputs follow
  // 0: the crossfade's source is a playing motion (or the recipe is plain). 1..4: the source
  // is a frozen chain (above): its first frozen_source_count inputs are the base motion, then
  // frozen_mix_count (1..kMaxFrozenMixes) mixes, the last ending at source_count.
  uint8_t frozen_source_count = 0;
  uint8_t frozen_mix_count = 0;
  FrozenMix frozen_mixes[kMaxFrozenMixes];  // [0, frozen_mix_count) used; later ones zero
  // Playback of the target (plain) motion and of the crossfade's source: speed in signed 16.16
  // (sim::SpeedQ16) and wrap mode (< kRecipeWrapModes). Source fields are 1x/loop when plain,
  // 0/loop when the source is frozen.
  int32_t speed = 1 << 16;
  int32_t source_speed = 1 << 16;
  uint8_t wrap = 0;
  uint8_t source_wrap = 0;
  // Crossfade progress (world microseconds, not scaled by speed): 0 <= elapsed < duration <=
  // kMaxRecipeTimeUs. Both 0 when plain.
  int64_t fade_elapsed_us = 0;
  int64_t fade_duration_us = 0;
  // Server time since a command last changed the entity (its segment of steady motion began
  // then), 0..kMaxRecipeTimeUs (saturating): between two snapshots the motion follows the
  // older one's recipe until then and the newer one's from then on.
  int64_t steady_us = kMaxRecipeTimeUs;

  uint8_t target_count() const { return static_cast<uint8_t>(count - source_count); }
  bool crossfade() const { return source_count > 0; }
  bool frozen() const { return frozen_source_count > 0; }
  // First input of frozen mix k's motion (k < frozen_mix_count).
  uint8_t frozen_mix_begin(uint8_t k) const {
    return k == 0 ? frozen_source_count : frozen_mixes[k - 1].end;
  }
  bool operator==(const PoseRecipe& other) const {
    if (count != other.count || source_count != other.source_count ||
        frozen_source_count != other.frozen_source_count ||
        frozen_mix_count != other.frozen_mix_count || speed != other.speed ||
        source_speed != other.source_speed || wrap != other.wrap ||
        source_wrap != other.source_wrap || fade_elapsed_us != other.fade_elapsed_us ||
        fade_duration_us != other.fade_duration_us || steady_us != other.steady_us) {
      return false;
    }
    for (uint8_t k = 0; k < frozen_mix_count && k < kMaxFrozenMixes; ++k)
      if (!(frozen_mixes[k] == other.frozen_mixes[k])) return false;
    for (uint8_t i = 0; i < count && i < kMaxRecipeInputs; ++i)
      if (!(inputs[i] == other.inputs[i])) return false;
    return true;
  }
};

// The input that stands for the rest pose: a motion of this input alone evaluates to the
// skeleton's rest pose (weight 0: BlendJob with no weight gives `rest`).
inline constexpr PoseRecipe::Input kRestInput{0, 0, 0.0f};

// True when inputs [first, end) are the rest pose's motion (one input, weight 0).
inline bool recipe_motion_is_rest(const PoseRecipe& r, uint8_t first, uint8_t end) {
  return end == first + 1 && r.inputs[first].weight == 0.0f;
}

// A fade state a recipe can carry: 0 <= elapsed_us < duration_us <= kMaxRecipeTimeUs.
inline bool recipe_fade_in_range(int64_t elapsed_us, int64_t duration_us) {
  return elapsed_us >= 0 && elapsed_us < duration_us && duration_us <= kMaxRecipeTimeUs;
}

// True when the recipe's shape is one the evaluators accept: count 1..kMaxRecipeInputs; plain
// with at most kMaxRecipeMotionInputs inputs, or a crossfade with 1..4 inputs on each side and
// 0 <= fade_elapsed_us < fade_duration_us <= kMaxRecipeTimeUs, or a crossfade from a frozen
// chain: a base of 1..4 inputs, 1..kMaxFrozenMixes mixes of 1..4 inputs each ending at
// source_count, each with a fade state in range, source speed 0, source wrap 0; wrap modes in
// range; plain recipes carry no fade state, recipes that are not frozen no frozen state.
// Inputs themselves (clips, times, weights) are not checked here.
inline bool recipe_shape_valid(const PoseRecipe& r) {
  if (r.count == 0 || r.count > kMaxRecipeInputs || r.wrap >= kRecipeWrapModes ||
      r.source_wrap >= kRecipeWrapModes || r.steady_us < 0 || r.steady_us > kMaxRecipeTimeUs ||
      r.frozen_mix_count > kMaxFrozenMixes) {
    return false;
  }
  for (uint8_t k = r.frozen_mix_count; k < kMaxFrozenMixes; ++k) {
    if (!(r.frozen_mixes[k] == PoseRecipe::FrozenMix{})) return false;
  }
  if (r.frozen_source_count == 0) {
    if (r.frozen_mix_count != 0) return false;
    if (r.source_count > kMaxRecipeMotionInputs) return false;
  } else {
    if (r.frozen_source_count > kMaxRecipeMotionInputs || r.frozen_mix_count == 0 ||
        r.source_speed != 0 || r.source_wrap != 0) {
      return false;
    }
    uint8_t begin = r.frozen_source_count;
    for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
      const PoseRecipe::FrozenMix& mix = r.frozen_mixes[k];
      if (mix.end <= begin || mix.end - begin > kMaxRecipeMotionInputs ||
          !recipe_fade_in_range(mix.elapsed_us, mix.duration_us)) {
        return false;
      }
      begin = mix.end;
    }
    if (begin != r.source_count) return false;
  }
  if (r.source_count == 0) {
    return r.count <= kMaxRecipeMotionInputs && r.fade_elapsed_us == 0 && r.fade_duration_us == 0;
  }
  return r.source_count < r.count && r.count - r.source_count <= kMaxRecipeMotionInputs &&
         recipe_fade_in_range(r.fade_elapsed_us, r.fade_duration_us);
}

// elapsed / duration rounded once from double to float, exactly as sim::fade_alpha computes a
// layer's fade weight; 1 at or past the end (or for no duration).
inline float recipe_fade_fraction(int64_t elapsed_us, int64_t duration_us) {
  if (duration_us <= 0 || elapsed_us >= duration_us) return 1.0f;
  return static_cast<float>(static_cast<double>(elapsed_us) / static_cast<double>(duration_us));
}

// The crossfade weight of the target: elapsed / duration rounded once from double to float, as
// sim::fade_alpha computes it (1 when plain or elapsed >= duration).
inline float recipe_fade_alpha(const PoseRecipe& r) {
  return r.source_count == 0 ? 1.0f : recipe_fade_fraction(r.fade_elapsed_us, r.fade_duration_us);
}

// Frozen mix k's weight, rounded as sim::fade_alpha rounded it for the interrupted fade it
// stands for (k < frozen_mix_count).
inline float recipe_frozen_mix_alpha(const PoseRecipe& r, uint8_t k) {
  return recipe_fade_fraction(r.frozen_mixes[k].elapsed_us, r.frozen_mixes[k].duration_us);
}

// True when `a` and `b` evaluate to the same pose bit for bit: the same inputs (weights
// compared as bits) and the same crossfade and frozen splits and progress. Speeds, wraps and
// steady_us only say how clip times move, so they are not compared.
inline bool recipe_same_evaluation(const PoseRecipe& a, const PoseRecipe& b) {
  if (a.count != b.count || a.source_count != b.source_count ||
      a.fade_elapsed_us != b.fade_elapsed_us || a.fade_duration_us != b.fade_duration_us ||
      a.frozen_source_count != b.frozen_source_count ||
      a.frozen_mix_count != b.frozen_mix_count) {
    return false;
  }
  for (uint8_t k = 0; k < a.frozen_mix_count && k < kMaxFrozenMixes; ++k) {
    if (!(a.frozen_mixes[k] == b.frozen_mixes[k])) return false;
  }
  for (uint8_t i = 0; i < a.count && i < kMaxRecipeInputs; ++i) {
    const PoseRecipe::Input& x = a.inputs[i];
    const PoseRecipe::Input& y = b.inputs[i];
    if (x.clip != y.clip || x.time_us != y.time_us ||
        std::bit_cast<uint32_t>(x.weight) != std::bit_cast<uint32_t>(y.weight)) {
      return false;
    }
  }
  return true;
}

struct QuantizedPose {
  std::vector<int32_t> values;  // node_count * kValuesPerNode
  // True when some channel the layout calls static is away from rest in this pose: the codec
  // then sends every channel of every node for it (docs/codec.md).
  bool off_layout = false;
  // The recipe the server attached (sent with the pose, so both sides hold the same one; the
  // next records predict clip times from it). Set by the caller before encoding.
  PoseRecipe recipe;

  // Sizes `values` for the format and sets the rest pose.
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
