#include "posecast/sim/recipe_at_time.h"

#include <algorithm>

namespace posecast::sim {
namespace {

int64_t floor_div(int64_t n, int64_t d) {  // d > 0
  const int64_t q = n / d;
  return (n % d != 0 && n < 0) ? q - 1 : q;
}

int64_t floor_mod(int64_t n, int64_t d) {  // d > 0: [0, d)
  const int64_t r = n % d;
  return r < 0 ? r + d : r;
}

}  // namespace

const char* to_string(RecipeTiming timing) {
  switch (timing) {
    case RecipeTiming::kOk: return "ok";
    case RecipeTiming::kMissing: return "missing";
    case RecipeTiming::kClipSetChanged: return "clip set changed";
    case RecipeTiming::kInvalid: return "invalid";
    case RecipeTiming::kNotDerivable: return "not derivable";
  }
  return "?";
}

namespace {


// A recipe whose inputs name known clips with times in range (and a valid shape).
bool well_formed(const PoseRecipe& r, std::span<const int64_t> clip_durations_us) {
  if (!recipe_shape_valid(r)) return false;
  for (uint8_t i = 0; i < r.count; ++i) {
    const PoseRecipe::Input& in = r.inputs[i];
    if (in.clip >= clip_durations_us.size() || clip_durations_us[in.clip] < 0 ||
        clip_durations_us[in.clip] > kMaxRecipeTimeUs || in.time_us < 0 ||
        in.time_us > kMaxRecipeTimeUs) {
      return false;
    }
  }
  return true;
}

// The same motions: clips in the same order on the same sides of a crossfade, for a
// crossfade the same fade (its elapsed time moved with the records' times), and for a fade
// from a frozen pose the same frozen pose (its inputs and fade state equal: it does not move).
bool same_motions(const PoseRecipe& a, const PoseRecipe& b, int64_t span) {
  if (a.count != b.count || a.source_count != b.source_count ||
      a.frozen_source_count != b.frozen_source_count || a.frozen_mix_count != b.frozen_mix_count) {
    return false;
  }
  for (uint8_t i = 0; i < a.count; ++i) {
    if (a.inputs[i].clip != b.inputs[i].clip) return false;
  }
  if (a.frozen()) {
    for (uint8_t k = 0; k < a.frozen_mix_count; ++k) {
      if (!(a.frozen_mixes[k] == b.frozen_mixes[k])) return false;
    }
    for (uint8_t i = 0; i < a.source_count; ++i) {
      if (!(a.inputs[i] == b.inputs[i])) return false;
    }
  }
  return !a.crossfade() || (a.fade_duration_us == b.fade_duration_us &&
                            b.fade_elapsed_us - a.fade_elapsed_us == span);
}

// Keeps only inputs [first, end) as a plain recipe with the given playback: a crossfade
// before its start (its source) or past its end (its target).
PoseRecipe motion_of(const PoseRecipe& r, uint8_t first, uint8_t end, int32_t speed, uint8_t wrap) {
  PoseRecipe plain;
  for (uint8_t i = first; i < end; ++i) plain.inputs[plain.count++] = r.inputs[i];
  plain.speed = speed;
  plain.wrap = wrap;
  plain.steady_us = r.steady_us;
  return plain;
}

// A crossfade whose elapsed time left [0, duration): its source before the start, its target
// from the end on (where the animator's fade shows exactly these, sim/src/evaluator.cpp).
// Before a fade from a frozen pose, the frozen pose itself (the fade at its first tick): the
// interrupted fade's motion before the interrupt is not described (its speeds are not sent).
// In place: the common case (no crossfade, or one still running) copies nothing.
void settle_fade(PoseRecipe& r) {
  if (!r.crossfade()) return;
  if (r.fade_elapsed_us < 0 && r.frozen()) {
    r.fade_elapsed_us = 0;
  } else if (r.fade_elapsed_us < 0) {
    r = motion_of(r, 0, r.source_count, r.source_speed, r.source_wrap);
  } else if (r.fade_elapsed_us >= r.fade_duration_us) {
    r = motion_of(r, r.source_count, r.count, r.speed, r.wrap);
  }
}

// Some input in [first, end) carries weight.
bool any_weight(const PoseRecipe& r, uint8_t first, uint8_t end) {
  for (uint8_t i = first; i < end; ++i) {
    if (r.inputs[i].weight > 0.0f) return true;
  }
  return false;
}

// Each motion of `r` shows something: its inputs carry weight. A crossfade's source may be
// the rest pose instead (kRestInput: a fade in from rest), and so may a frozen
// chain's base; the target and a frozen chain's mixes never are.
bool motions_show_something(const PoseRecipe& r) {
  if (!any_weight(r, r.source_count, r.count)) return false;
  if (!r.crossfade()) return true;
  const uint8_t base_end = r.frozen() ? r.frozen_source_count : r.source_count;
  if (!any_weight(r, 0, base_end) && !recipe_motion_is_rest(r, 0, base_end)) return false;
  for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
    if (!any_weight(r, r.frozen_mix_begin(k), r.frozen_mixes[k].end)) return false;
  }
  return true;
}

// Recipe `x` (at x_us) carried to `render_us` at its own playback into `r`: each clip time
// moves by speed x (render_us - x_us), rounded down, wrapped by its motion's wrap mode; the
// fade's elapsed time moves with world time. Weights stay. False for a ping-pong motion (a
// clip time alone does not say which way it plays); `r` is then unspecified.
bool continue_recipe(const PoseRecipe& x, int64_t x_us, int64_t render_us,
                     std::span<const int64_t> clip_durations_us, PoseRecipe& r) {
  const int64_t d = render_us - x_us;  // |d| <= 2^31 (checked by the caller)
  r = x;
  for (uint8_t i = 0; i < r.count; ++i) {
    const bool source = r.crossfade() && i < r.source_count;
    if (source && r.frozen()) continue;  // a frozen pose's clip times do not move
    const int64_t speed = source ? r.source_speed : r.speed;
    const uint8_t wrap = source ? r.source_wrap : r.wrap;
    PoseRecipe::Input& in = r.inputs[i];
    const int64_t duration = clip_durations_us[in.clip];
    if (duration == 0 || speed == 0) continue;
    if (wrap == 2) return false;
    const int64_t t = in.time_us + floor_div(speed * d, int64_t{1} << 16);
    in.time_us = wrap == 1 ? (t < 0 ? 0 : (t > duration ? duration : t)) : floor_mod(t, duration);
  }
  if (r.crossfade()) r.fade_elapsed_us += d;
  r.steady_us = std::max<int64_t>(0, std::min(r.steady_us + d, kMaxRecipeTimeUs));
  settle_fade(r);
  return true;
}

// The same motions at both records, into `r`: each clip time moves linearly between the two
// (the short way round its loop), weights lerp, a fade's elapsed time moves with world time.
void interpolate_recipe(const PoseRecipe& a, const PoseRecipe& b, int64_t span, int64_t elapsed,
                        std::span<const int64_t> clip_durations_us, PoseRecipe& r) {
  const float f = static_cast<float>(static_cast<double>(elapsed) / static_cast<double>(span));
  r = b;
  for (uint8_t i = 0; i < a.count; ++i) {
    if (a.frozen() && i < a.source_count) continue;  // the frozen pose: b's (equal to a's)
    const PoseRecipe::Input& x = a.inputs[i];
    const PoseRecipe::Input& y = b.inputs[i];
    const int64_t duration = clip_durations_us[x.clip];
    int64_t time = 0;
    if (duration > 0) {
      int64_t delta = y.time_us - x.time_us;
      // The shortest way round the loop: a wrap between the neighbours is a small step.
      if (delta > duration / 2) delta -= duration;
      if (delta < -(duration / 2)) delta += duration;
      const bool wrapped = delta != y.time_us - x.time_us;
      // |delta| <= 2^32 and elapsed <= 2^30: the product fits int64.
      time = x.time_us + floor_div(delta * elapsed, span);
      // A moving clip reaching its end shows its start, as a looping phase does; a clip held
      // at its end (a clamp, delta 0) stays there.
      if (wrapped || time < 0 || time > duration || (time == duration && delta != 0)) {
        time = floor_mod(time, duration);
      }
    }
    float w = x.weight == y.weight ? x.weight : x.weight + (y.weight - x.weight) * f;
    if (!(w >= 0.0f)) w = 0.0f;  // extrapolated past zero (or NaN from bad input)
    r.inputs[i] = PoseRecipe::Input{x.clip, time, w};
  }
  if (r.crossfade()) r.fade_elapsed_us = a.fade_elapsed_us + elapsed;
  r.steady_us = std::max<int64_t>(0, std::min(a.steady_us + elapsed, kMaxRecipeTimeUs));
  settle_fade(r);
}

}  // namespace

RecipeTiming recipe_at_time(const PoseRecipe& a, int64_t a_us,
                            const PoseRecipe& b, int64_t b_us, int64_t render_us,
                            std::span<const int64_t> clip_durations_us,
                            PoseRecipe& out) {
  if (a.count == 0 || b.count == 0) return RecipeTiming::kMissing;
  if (!well_formed(a, clip_durations_us) || !well_formed(b, clip_durations_us)) {
    return RecipeTiming::kInvalid;
  }
  const int64_t span = b_us - a_us;
  const int64_t elapsed = render_us - a_us;
  if (span <= 0 || span > kMaxRecipeSpanUs || elapsed < -kMaxRecipeSpanUs ||
      elapsed > kMaxRecipeSpanUs) {
    return RecipeTiming::kInvalid;
  }
  if (elapsed == 0 || elapsed == span) {
    out = elapsed == 0 ? a : b;
    return RecipeTiming::kOk;
  }
  // Where the motion changed between the records: a command after a (the newer record's
  // steady time says when), else the end of a's crossfade when the records differ by it.
  int64_t change_us = -1;
  if (b.steady_us < span) {
    change_us = b_us - b.steady_us;
  } else if (!same_motions(a, b, span)) {
    if (!a.crossfade()) return RecipeTiming::kClipSetChanged;
    const int64_t end_us = a_us + (a.fade_duration_us - a.fade_elapsed_us);
    // The target alone goes on: b must be a's target motion, the fade ended by b.
    const PoseRecipe target = motion_of(a, a.source_count, a.count, a.speed, a.wrap);
    if (end_us > b_us || !same_motions(target, b, span)) return RecipeTiming::kClipSetChanged;
    change_us = end_us;
  }
  PoseRecipe r;
  if (change_us >= 0) {
    // Each record holds on its own side of the change: continued at its own playback.
    const bool newer = render_us >= change_us;
    if (!continue_recipe(newer ? b : a, newer ? b_us : a_us, render_us, clip_durations_us, r)) {
      return RecipeTiming::kNotDerivable;
    }
  } else {
    interpolate_recipe(a, b, span, elapsed, clip_durations_us, r);
  }
  if (!motions_show_something(r)) return RecipeTiming::kInvalid;
  out = r;
  return RecipeTiming::kOk;
}

}  // namespace posecast::sim
