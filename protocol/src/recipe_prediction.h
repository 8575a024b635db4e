#pragma once
// Private to posecast_protocol, a part of pose_codec.cpp: what each field of a recipe is
// expected to be, worked out the same way on both sides from the baseline's (and the prior's)
// recipe. recipe_coding.h codes a field as its residual from the prediction, or raw when there
// is none (-1).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "posecast/protocol/pose_codec.h"

namespace posecast::protocol::codec {
// Internal linkage on purpose, as when this was pose_codec.cpp itself (its top comment).
namespace {

// One server tick in microseconds, rounded (a tick rate of 0 counts as 1 Hz).
int64_t tick_us(const PoseReference& ref) {
  const int64_t hz = std::max<uint32_t>(1, ref.tick_rate_hz);
  return (1000000 + hz / 2) / hz;
}

// The baseline's age in microseconds (rounded tick length; bounded so products with a speed
// stay inside int64 whatever the reference says).
int64_t age_us(const PoseReference& ref) {
  return std::min<int64_t>(static_cast<int64_t>(ref.baseline_age) * tick_us(ref), int64_t{1} << 31);
}

// The recipe of the baseline, when there is one to predict from.
const PoseRecipe* baseline_recipe(const PoseReference& ref, int references) {
  if (references < 1 || ref.baseline->recipe.count == 0 ||
      !recipe_shape_valid(ref.baseline->recipe)) {
    return nullptr;
  }
  return &ref.baseline->recipe;
}

// Which motion input `i` belongs to: 0 a crossfade's source (a frozen chain's base), 1 the
// target (or plain) motion, 2 + k a frozen chain's mix k.
int role_of(const PoseRecipe& r, uint8_t i) {
  if (!r.crossfade() || i >= r.source_count) return 1;
  if (!r.frozen() || i < r.frozen_source_count) return 0;
  int k = 0;
  while (k + 1 < r.frozen_mix_count && i >= r.frozen_mixes[k].end) ++k;
  return 2 + k;
}

// The role in `base` that continues `role`: a frozen chain's last mix was the interrupted
// fade's target (role 1) in a baseline that was that fade (whose own chain, if any, is one
// mix shorter).
int base_role(const PoseRecipe& base, int role) {
  return role >= 2 && role - 2 == base.frozen_mix_count ? 1 : role;
}

// The input of `base` that continues `clip` in motion `role`: the first with the same clip and
// role, else the first with the same clip (a plain motion that became a crossfade's source);
// -1 when none.
int matching_input(const PoseRecipe& base, uint16_t clip, int role) {
  int any = -1;
  for (uint8_t j = 0; j < base.count && j < kMaxRecipeInputs; ++j) {
    if (base.inputs[j].clip != clip) continue;
    if (role_of(base, j) == role) return j;
    if (any < 0) any = j;
  }
  return any;
}

int64_t floor_mod(int64_t n, int64_t d) {  // d > 0
  const int64_t m = n % d;
  return m < 0 ? m + d : m;
}

// Where input `i`'s clip time is expected to be: the baseline recipe's time for the same clip
// (matching_input) advanced by the baseline's age at the motion's speed (this recipe's, coded
// before the inputs), wrapped by the clip duration (clamped for a clamped motion); -1 when the
// baseline has no such input. A frozen source's times stay where a frozen baseline had them;
// after a baseline that was the interrupted fade they are its times advanced at its playback
// until the interrupt (this fade's elapsed time, coded before the inputs, ago).
int64_t predicted_time(const PoseFormat& format, const PoseRecipe& recipe, uint8_t i,
                       const PoseReference& ref, int references) {
  const PoseRecipe* base = baseline_recipe(ref, references);
  if (base == nullptr) return -1;
  const int role = role_of(recipe, i);
  const int j = matching_input(*base, recipe.inputs[i].clip, base_role(*base, role));
  if (j < 0) return -1;
  int64_t speed = role == 1 ? recipe.speed : recipe.source_speed;
  uint8_t wrap = role == 1 ? recipe.wrap : recipe.source_wrap;
  int64_t advance = age_us(ref);
  if (role != 1 && recipe.frozen()) {
    const int played = role_of(*base, static_cast<uint8_t>(j));
    if (base->frozen() && played != 1) return base->inputs[j].time_us;
    speed = played == 1 ? base->speed : base->source_speed;
    wrap = played == 1 ? base->wrap : base->source_wrap;
    advance = std::max<int64_t>(0, advance - recipe.fade_elapsed_us);
  }
  // |speed| <= 2^31 and advance <= 2^31: the product fits; >> floors (arithmetic shift).
  int64_t t = base->inputs[j].time_us + ((advance * speed) >> 16);
  const int64_t duration = format.clip_durations_us[recipe.inputs[i].clip];
  if (duration > 0) {
    t = wrap == 1 ? std::clamp<int64_t>(t, 0, duration) : floor_mod(t, duration);
  } else {
    t = 0;
  }
  return t;
}

// The IEEE bits of `f` (weights are predicted, and their residuals coded, as bits).
uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Expected IEEE bits of input `i`'s weight, from the same input (matching_input) of the
// baseline and prior recipes: constant-rate extrapolation in float, or the baseline's weight.
// -1 when the baseline has no such input (the weight is then sent raw).
int64_t predicted_weight_bits(const PoseRecipe& recipe, uint8_t i, const PoseReference& ref,
                              int references) {
  const PoseRecipe* base = baseline_recipe(ref, references);
  if (base == nullptr) return -1;
  const int role = role_of(recipe, i);
  const int j = matching_input(*base, recipe.inputs[i].clip, base_role(*base, role));
  if (j < 0) return -1;
  const PoseRecipe::Input& b = base->inputs[j];
  float w = b.weight;
  if (references >= 2 && ref.prior->recipe.count > 0 && recipe_shape_valid(ref.prior->recipe)) {
    const int k = matching_input(ref.prior->recipe, b.clip, role_of(*base, static_cast<uint8_t>(j)));
    if (k >= 0 && ref.prior_age > 0) {
      const float ratio = static_cast<float>(ref.baseline_age) / static_cast<float>(ref.prior_age);
      const float extrapolated = b.weight + (b.weight - ref.prior->recipe.inputs[k].weight) * ratio;
      if (std::isfinite(extrapolated)) w = extrapolated < 0.0f ? 0.0f : extrapolated;
    }
  }
  return float_bits(w);
}

// The motion parameters (speeds, wraps) equal the baseline's: one likely decision. A frozen
// source has none (speed 0, loop: implied by the shape).
bool same_motion(const PoseRecipe& r, const PoseRecipe& base) {
  return r.speed == base.speed && r.wrap == base.wrap &&
         (!r.crossfade() || r.frozen() ||
          (r.source_speed == base.source_speed && r.source_wrap == base.source_wrap));
}

// Frozen mix k's fade state expected from the baseline: the baseline chain's mix k (it is
// constant), or, for the mix after the baseline's chain (the baseline was the interrupted fade
// itself), that fade's duration and its elapsed time moved on to the interrupt (this fade's
// elapsed time before now). -1 without a prediction.
int64_t predicted_mix_duration(const PoseRecipe* base, uint8_t k) {
  if (base == nullptr) return -1;
  if (k < base->frozen_mix_count) return base->frozen_mixes[k].duration_us;
  return k == base->frozen_mix_count && base->crossfade() ? base->fade_duration_us : -1;
}
int64_t predicted_mix_elapsed(const PoseRecipe& r, const PoseRecipe* base, uint8_t k,
                              const PoseReference& ref) {
  if (base == nullptr) return -1;
  if (k < base->frozen_mix_count) return base->frozen_mixes[k].elapsed_us;
  if (k != base->frozen_mix_count || !base->crossfade()) return -1;
  return std::max<int64_t>(0, base->fade_elapsed_us + age_us(ref) - r.fade_elapsed_us);
}

// A crossfade's duration expected from a crossfading baseline (-1 without one).
int64_t predicted_duration(const PoseRecipe* base) {
  return base != nullptr && base->crossfade() ? base->fade_duration_us : -1;
}

// A crossfade's elapsed time expected from a baseline fading with the same duration.
int64_t predicted_elapsed(const PoseRecipe& r, const PoseRecipe* base, const PoseReference& ref) {
  if (base == nullptr || !base->crossfade() || base->fade_duration_us != r.fade_duration_us) return -1;
  return base->fade_elapsed_us + age_us(ref);
}

// The steady time expected from the baseline's: moved on by the baseline's age, at most
// kMaxRecipeTimeUs; -1 without a baseline recipe.
int64_t predicted_steady(const PoseRecipe* base, const PoseReference& ref) {
  if (base == nullptr) return -1;
  return std::min(base->steady_us + age_us(ref), kMaxRecipeTimeUs);
}

}  // namespace
}  // namespace posecast::protocol::codec
