#pragma once
// PoseRecipe: a pose described by the animation state that produced it (which clips of the
// rig, at which clip times, with which weights and fades), and the checks and weights every
// evaluator of recipes shares. Animation state, so it lives with the animator; the codec sends
// it (protocol/quantization.h) and the evaluators run it (recipe_evaluator.h).

#include <bit>
#include <cstdint>

namespace posecast::sim {

// How the server evaluated a pose, when it is layer 0's motion alone (docs/codec.md, "Recipes"):
//  - plain (source_count 0): BlendJob over the `count` inputs in this order, each clip sampled
//    (SampleJob) at its clip-local time (a single contributing clip sampled straight);
//  - crossfade (source_count > 0, layer 0 fading from a playing motion): inputs
//    [0, source_count) are the source motion and [source_count, count) the target motion, each
//    evaluated as a plain blend; then OverrideBlendJob mixes the target over the source with
//    alpha = fade_elapsed_us / fade_duration_us (recipe_fade_alpha, exactly fade_alpha;
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
// Lets the codec predict the pose from the shared clips (protocol/clip_dictionary.h) and the client
// evaluate the server's pose at any render time. count 0 = no recipe.
// The speed, wrap and steady_us fields do not change what the recipe evaluates to; they say how
// its clip times move (the client derives recipes between and past snapshots from them).
inline constexpr uint8_t kMaxRecipeMotionInputs = 4;  // clips of one motion (kMaxBlendClips)
// Mixes in a frozen chain: a crossfade interrupted three times in a row is still described.
inline constexpr uint8_t kMaxFrozenMixes = 3;
// Inputs of all motions together. A chain of five 4-clip motions would need 20; the server
// describes poses up to this many inputs (typical motions have one or two clips) and sends the
// others without a recipe.
inline constexpr uint8_t kMaxRecipeInputs = 16;
inline constexpr int64_t kMaxRecipeTimeUs = (int64_t{1} << 32) - 1;
inline constexpr uint8_t kRecipeWrapModes = 3;  // WrapMode: 0 loop, 1 clamp, 2 ping-pong

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
  // (SpeedQ16) and wrap mode (< kRecipeWrapModes). Source fields are 1x/loop when plain,
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

// elapsed / duration rounded once from double to float, exactly as fade_alpha computes a
// layer's fade weight; 1 at or past the end (or for no duration).
inline float recipe_fade_fraction(int64_t elapsed_us, int64_t duration_us) {
  if (duration_us <= 0 || elapsed_us >= duration_us) return 1.0f;
  return static_cast<float>(static_cast<double>(elapsed_us) / static_cast<double>(duration_us));
}

// The crossfade weight of the target: elapsed / duration rounded once from double to float, as
// fade_alpha computes it (1 when plain or elapsed >= duration).
inline float recipe_fade_alpha(const PoseRecipe& r) {
  return r.source_count == 0 ? 1.0f : recipe_fade_fraction(r.fade_elapsed_us, r.fade_duration_us);
}

// Frozen mix k's weight, rounded as fade_alpha rounded it for the interrupted fade it
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

}  // namespace posecast::sim
