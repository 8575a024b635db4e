#include "posecast/client/recipe_at_time.h"

namespace posecast::client {
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
  }
  return "?";
}

RecipeTiming recipe_at_time(const protocol::PoseRecipe& a, int64_t a_us,
                            const protocol::PoseRecipe& b, int64_t b_us, int64_t render_us,
                            std::span<const int64_t> clip_durations_us,
                            protocol::PoseRecipe& out) {
  using protocol::kMaxRecipeInputs;
  using protocol::kMaxRecipeTimeUs;
  if (a.count == 0 || b.count == 0) return RecipeTiming::kMissing;
  if (a.count > kMaxRecipeInputs || b.count > kMaxRecipeInputs) return RecipeTiming::kInvalid;
  if (a.count != b.count) return RecipeTiming::kClipSetChanged;
  for (uint8_t i = 0; i < a.count; ++i) {
    if (a.inputs[i].clip != b.inputs[i].clip) return RecipeTiming::kClipSetChanged;
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
  const float f = static_cast<float>(static_cast<double>(elapsed) / static_cast<double>(span));
  protocol::PoseRecipe r;
  r.count = a.count;
  bool any_weight = false;
  for (uint8_t i = 0; i < a.count; ++i) {
    const protocol::PoseRecipe::Input& x = a.inputs[i];
    const protocol::PoseRecipe::Input& y = b.inputs[i];
    if (x.clip >= clip_durations_us.size()) return RecipeTiming::kInvalid;
    const int64_t duration = clip_durations_us[x.clip];
    if (duration < 0 || x.time_us < 0 || y.time_us < 0 || x.time_us > kMaxRecipeTimeUs ||
        y.time_us > kMaxRecipeTimeUs) {
      return RecipeTiming::kInvalid;
    }
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
    any_weight |= w > 0.0f;
    r.inputs[i] = protocol::PoseRecipe::Input{x.clip, time, w};
  }
  if (!any_weight) return RecipeTiming::kInvalid;
  out = r;
  return RecipeTiming::kOk;
}

}  // namespace posecast::client
