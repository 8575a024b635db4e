#pragma once
// Private to posecast_protocol, a part of pose_codec.cpp: a recipe on the wire (docs/codec.md):
// which recipes a range-coded record can carry (recipe_valid), and RangeSink::recipe and
// RangeSource::recipe, which code every field against its prediction (recipe_prediction.h).

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "posecast/protocol/pose_codec.h"
#include "pose_coding_streams.h"
#include "pose_prediction.h"
#include "recipe_prediction.h"

namespace posecast::protocol::codec {
// Internal linkage on purpose, as when this was pose_codec.cpp itself (its top comment).
namespace {

uint32_t clip_bits(const PoseFormat& format) {
  return format.clip_durations_us.size() <= 1
             ? 0u
             : static_cast<uint32_t>(std::bit_width(format.clip_durations_us.size() - 1));
}

// Whether RangeSink::recipe can code `recipe` for `format`: recipe_shape_valid, clips of the
// format, times in 0..kMaxRecipeTimeUs, finite non-negative weights.
bool recipe_valid(const PoseFormat& format, const PoseRecipe& recipe) {
  if (!recipe_shape_valid(recipe)) return false;
  for (uint8_t i = 0; i < recipe.count; ++i) {
    const PoseRecipe::Input& in = recipe.inputs[i];
    if (in.clip >= format.clip_durations_us.size() || in.time_us < 0 ||
        in.time_us > kMaxRecipeTimeUs || !std::isfinite(in.weight) || in.weight < 0.0f) {
      return false;
    }
  }
  return true;
}

// Defined out of the class only to keep the recipe in this file: `inline`, as the in-class
// definition it was.
inline void RangeSink::recipe(const PoseFormat& format, const PoseRecipe& r,
                              const PoseReference& ref, int references) {
  rc.encode(models->recipe_crossfade, r.crossfade() ? 1u : 0u);
  if (r.crossfade()) {
    rc.encode(models->recipe_frozen, r.frozen() ? 1u : 0u);
    if (r.frozen()) {
      rc.encode_direct(static_cast<uint32_t>(r.frozen_source_count - 1), 2);
      rc.encode_direct(static_cast<uint32_t>(r.frozen_mix_count - 1), 2);
      for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
        rc.encode_direct(static_cast<uint32_t>(r.frozen_mixes[k].end - r.frozen_mix_begin(k) - 1), 2);
      }
    } else {
      rc.encode_direct(static_cast<uint32_t>(r.source_count - 1), 2);
    }
    rc.encode_direct(static_cast<uint32_t>(r.target_count() - 1), 2);
  } else {
    rc.encode_direct(static_cast<uint32_t>(r.count - 1), 2);
  }
  Expectation exact;
  exact.cls = kRecipeTimeClass;
  const PoseRecipe* base = baseline_recipe(ref, references);
  const bool same = base != nullptr && same_motion(r, *base);
  rc.encode(models->recipe_motion_same, same ? 0u : 1u);
  if (!same) {
    raw(static_cast<uint32_t>(r.speed), 32);
    raw(r.wrap, 2);
    if (r.crossfade() && !r.frozen()) {
      raw(static_cast<uint32_t>(r.source_speed), 32);
      raw(r.source_wrap, 2);
    }
  }
  if (r.crossfade()) {
    predicted_or_raw(exact, r.fade_duration_us, predicted_duration(base));
    predicted_or_raw(exact, r.fade_elapsed_us, predicted_elapsed(r, base, ref));
  }
  for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
    predicted_or_raw(exact, r.frozen_mixes[k].duration_us, predicted_mix_duration(base, k));
    predicted_or_raw(exact, r.frozen_mixes[k].elapsed_us, predicted_mix_elapsed(r, base, k, ref));
  }
  predicted_or_raw(exact, r.steady_us, predicted_steady(base, ref));
  Expectation ulps;
  ulps.cls = kRecipeWeightClass;
  for (uint8_t i = 0; i < r.count; ++i) {
    const PoseRecipe::Input& in = r.inputs[i];
    rc.encode_direct(in.clip, clip_bits(format));
    predicted_or_raw(exact, in.time_us, predicted_time(format, r, i, ref, references));
    predicted_or_raw(ulps, float_bits(in.weight), predicted_weight_bits(r, i, ref, references));
  }
}

inline bool RangeSource::recipe(const PoseFormat& format, PoseRecipe& r, const PoseReference& ref,
                                int references) {
  // Every field but the inputs reset (inputs past `count` are never read: PoseRecipe's
  // contract; those below it are all written here).
  r.count = 0;
  r.source_count = 0;
  r.frozen_source_count = 0;
  r.frozen_mix_count = 0;
  for (PoseRecipe::FrozenMix& mix : r.frozen_mixes) mix = PoseRecipe::FrozenMix{};
  r.speed = r.source_speed = 1 << 16;
  r.wrap = r.source_wrap = 0;
  r.fade_elapsed_us = r.fade_duration_us = 0;
  r.steady_us = kMaxRecipeTimeUs;
  if (rc.decode(models->recipe_crossfade) != 0) {
    // Each motion's count is 2 bits (1..4); a frozen chain's mix count too (1..3).
    if (rc.decode(models->recipe_frozen) != 0) {
      r.frozen_source_count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
      r.frozen_mix_count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
      if (r.frozen_mix_count > kMaxFrozenMixes) return false;
      uint8_t end = r.frozen_source_count;
      for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
        end = static_cast<uint8_t>(end + rc.decode_direct(2) + 1);
        r.frozen_mixes[k].end = end;
      }
      r.source_count = end;
      r.source_speed = 0;  // the frozen source does not move
    } else {
      r.source_count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
    }
    r.count = static_cast<uint8_t>(r.source_count + rc.decode_direct(2) + 1);
    // Up to 4 + 3 x 4 + 4 = 20 motions' inputs can be announced; the array holds 16.
    if (r.count > kMaxRecipeInputs) return false;
  } else {
    r.count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
  }
  Expectation exact;
  exact.cls = kRecipeTimeClass;
  const PoseRecipe* base = baseline_recipe(ref, references);
  if (rc.decode(models->recipe_motion_same) == 0) {
    if (base == nullptr) return false;  // "as the baseline's" without one
    r.speed = base->speed;
    r.wrap = base->wrap;
    if (r.crossfade() && !r.frozen()) {
      r.source_speed = base->source_speed;
      r.source_wrap = base->source_wrap;
    }
  } else {
    r.speed = static_cast<int32_t>(static_cast<uint32_t>(raw(32)));
    r.wrap = static_cast<uint8_t>(raw(2));
    if (r.crossfade() && !r.frozen()) {
      r.source_speed = static_cast<int32_t>(static_cast<uint32_t>(raw(32)));
      r.source_wrap = static_cast<uint8_t>(raw(2));
    }
  }
  if (r.wrap >= kRecipeWrapModes || r.source_wrap >= kRecipeWrapModes) return false;
  if (r.crossfade()) {
    r.fade_duration_us = predicted_or_raw(exact, predicted_duration(base));
    if (failed || r.fade_duration_us <= 0 || r.fade_duration_us > kMaxRecipeTimeUs) return false;
    r.fade_elapsed_us = predicted_or_raw(exact, predicted_elapsed(r, base, ref));
    if (failed || r.fade_elapsed_us < 0 || r.fade_elapsed_us >= r.fade_duration_us) return false;
  }
  for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
    PoseRecipe::FrozenMix& mix = r.frozen_mixes[k];
    mix.duration_us = predicted_or_raw(exact, predicted_mix_duration(base, k));
    if (failed || mix.duration_us <= 0 || mix.duration_us > kMaxRecipeTimeUs) return false;
    mix.elapsed_us = predicted_or_raw(exact, predicted_mix_elapsed(r, base, k, ref));
    if (failed || mix.elapsed_us < 0 || mix.elapsed_us >= mix.duration_us) return false;
  }
  r.steady_us = predicted_or_raw(exact, predicted_steady(base, ref));
  if (failed || r.steady_us < 0 || r.steady_us > kMaxRecipeTimeUs) return false;
  Expectation ulps;
  ulps.cls = kRecipeWeightClass;
  for (uint8_t i = 0; i < r.count; ++i) {
    PoseRecipe::Input& in = r.inputs[i];
    const uint32_t clip = rc.decode_direct(clip_bits(format));
    if (clip >= format.clip_durations_us.size()) return false;
    in.clip = static_cast<uint16_t>(clip);
    in.time_us = predicted_or_raw(exact, predicted_time(format, r, i, ref, references));
    if (failed || in.time_us < 0 || in.time_us > kMaxRecipeTimeUs) return false;
    const int64_t bits = predicted_or_raw(ulps, predicted_weight_bits(r, i, ref, references));
    if (failed || bits < 0 || bits > 0xFFFFFFFFll) return false;
    const auto word = static_cast<uint32_t>(bits);
    std::memcpy(&in.weight, &word, sizeof word);
    if (!std::isfinite(in.weight) || in.weight < 0.0f) return false;
  }
  return recipe_shape_valid(r);
}

}  // namespace
}  // namespace posecast::protocol::codec
