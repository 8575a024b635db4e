#include "posecast/client/pose_track.h"

#include <algorithm>

#include "posecast/client/recipe_at_time.h"

#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast::client {

const char* to_string(PresentMode mode) {
  switch (mode) {
    case PresentMode::kNone: return "none";
    case PresentMode::kHold: return "hold";
    case PresentMode::kExact: return "exact";
    case PresentMode::kInterpolate: return "interpolate";
    case PresentMode::kExtrapolate: return "extrapolate";
    case PresentMode::kStalled: return "stalled";
  }
  return "?";
}

const char* to_string(RecipeMiss miss) {
  switch (miss) {
    case RecipeMiss::kNone: return "none";
    case RecipeMiss::kNoRecipe: return "no recipe";
    case RecipeMiss::kUnverified: return "unverified";
    case RecipeMiss::kNotDerivable: return "not derivable";
  }
  return "?";
}

void PoseTrack::reset(std::size_t node_count, std::size_t joint_count, bool skeleton_validated,
                      std::size_t max_clip_tracks) {
  skeleton_validated_ = skeleton_validated;
  evaluator_.reset(node_count, max_clip_tracks);
  target_.assign(node_count, Transform{});
  shown_.assign(node_count, Transform{});
  delta_.assign(node_count, Transform{});
  at_last_.assign(node_count, Transform{});
  models_.assign(node_count, glm::mat4(1.0f));
  palette_.assign(joint_count, glm::mat4(1.0f));
  mode_ = PresentMode::kNone;
  before_tick_ = after_tick_ = 0;
  correcting_ = false;
  recipe_ = false;
  correction_start_us_ = 0;
  extrapolated_us_ = 0;
}

// Interpolated or exact samples are the truth at r; moving r forward over them is continuous
// (at r == a sample's time both neighbouring intervals give that sample). Holding the first
// sample x before r reaches it is continuous with interpolation starting at x, and
// extrapolation from the newest sample starts where that sample is. Anything else
// (extrapolation ending or restarting from a newer sample, a late sample landing before r) is
// a jump to be faded.
bool PoseTrack::continues_from_last(PresentMode mode, uint32_t before_tick,
                                    uint32_t after_tick, bool recipe) const {
  if (mode_ == PresentMode::kNone) return true;  // nothing shown yet: no pop possible
  // A recipe gives the server's pose at r, pose interpolation a blend of two poses: they differ
  // by up to hundreds of codec bounds between samples, so switching between them is a jump.
  // (Exact samples and holds are the truth in both: no jump to or from them.)
  const auto derived = [](PresentMode m) {
    return m == PresentMode::kInterpolate || m == PresentMode::kExtrapolate ||
           m == PresentMode::kStalled;
  };
  if (derived(mode_) && derived(mode) && recipe != recipe_) return false;
  if (mode == mode_ && before_tick == before_tick_ && after_tick == after_tick_) return true;
  const bool was_extrapolated = mode_ == PresentMode::kExtrapolate || mode_ == PresentMode::kStalled;
  const bool is_extrapolated = mode == PresentMode::kExtrapolate || mode == PresentMode::kStalled;
  // Extrapolation reaching its bound freezes where it is.
  if (was_extrapolated) {
    return is_extrapolated && before_tick == before_tick_ && after_tick == after_tick_;
  }
  // From the truth onwards: interpolation or extrapolation starting at or after the last
  // frame's newer sample begins exactly where that sample is.
  return before_tick >= after_tick_;
}

bool PoseTrack::evaluate_recipe(const Skeleton& skeleton, const SampleRef& a, const SampleRef& b,
                                int64_t render_us, const RecipeSource& recipes,
                                std::span<Transform> out) {
  if (a.sample->quantized.recipe.count == 0 || b.sample->quantized.recipe.count == 0) {
    miss_ = RecipeMiss::kNoRecipe;
    return false;
  }
  if (!a.own_record || !b.own_record || !a.sample->recipe_verified || !b.sample->recipe_verified) {
    miss_ = RecipeMiss::kUnverified;
    return false;
  }
  protocol::PoseRecipe at;
  if (recipe_at_time(a.sample->quantized.recipe, a.time_us, b.sample->quantized.recipe, b.time_us,
                     render_us, recipes.clip_durations_us, at) != RecipeTiming::kOk) {
    miss_ = RecipeMiss::kNotDerivable;
    return false;
  }
  miss_ = RecipeMiss::kNone;
  // The server evaluator's SampleJob + BlendJob on the same clips (recipe_evaluator.h): at a
  // server tick this is the server's pose bit for bit.
  return evaluator_.evaluate(skeleton, recipes.clips, recipes.assets_validated, at, out);
}

bool PoseTrack::present(const Skeleton& skeleton, const SampleWindow& window, int64_t render_us,
                        const PresentSettings& settings, const RecipeSource& recipes) {
  const std::size_t nodes = target_.size();
  auto fits = [&](const SampleRef& ref) { return !ref || ref.sample->locals.size() == nodes; };
  if (!fits(window.before) || !fits(window.after) || !fits(window.previous)) return false;

  PresentMode mode = PresentMode::kNone;
  uint32_t before_tick = 0;
  uint32_t after_tick = 0;
  const PoseSample* exact = nullptr;  // set when the target is one sample unchanged
  extrapolated_us_ = 0;
  const bool try_recipes = settings.evaluate_recipes && !recipes.clips.empty();
  bool recipe = false;
  miss_ = RecipeMiss::kNone;
  SampleRef recipe_a, recipe_b;  // the pair a recipe target came from
  int64_t recipe_limit_us = render_us;  // how far that pair is followed (the extrapolation bound)

  if (window.before && window.after) {
    before_tick = window.before.tick;
    after_tick = window.after.tick;
    if (render_us == window.before.time_us) {
      mode = PresentMode::kExact;
      after_tick = before_tick;
      exact = window.before.sample;
    } else {
      mode = PresentMode::kInterpolate;
      recipe = try_recipes && evaluate_recipe(skeleton, window.before, window.after, render_us,
                                              recipes, target_);
      recipe_a = window.before;
      recipe_b = window.after;
      if (!recipe) {
        const double span = static_cast<double>(window.after.time_us - window.before.time_us);
        const float t = static_cast<float>(static_cast<double>(render_us - window.before.time_us) / span);
        interpolate_locals(window.before.sample->locals, window.after.sample->locals, t,
                           settings.rotation, target_);
      }
    }
  } else if (window.before) {
    before_tick = after_tick = window.before.tick;
    const int64_t past = render_us - window.before.time_us;
    if (past == 0) {
      mode = PresentMode::kExact;
      exact = window.before.sample;
    } else if (!window.previous) {
      mode = PresentMode::kStalled;  // one sample only: nothing to extrapolate with
      exact = window.before.sample;
    } else {
      const int64_t used = std::min(past, settings.max_extrapolation_us);
      mode = used < past ? PresentMode::kStalled : PresentMode::kExtrapolate;
      extrapolated_us_ = used;
      after_tick = window.previous.tick;  // the basis includes the velocity's origin
      // Bounded like pose extrapolation: a command the client has not seen yet (a speed
      // change, another clip) makes any continuation wrong, recipes included.
      recipe = try_recipes && evaluate_recipe(skeleton, window.previous, window.before,
                                              window.before.time_us + used, recipes, target_);
      recipe_a = window.previous;
      recipe_b = window.before;
      recipe_limit_us = window.before.time_us + used;
      if (!recipe) {
        const double step = static_cast<double>(window.before.time_us - window.previous.time_us);
        extrapolate_locals(window.previous.sample->locals, window.before.sample->locals,
                           static_cast<float>(static_cast<double>(used) / step), target_);
      }
    }
  } else if (window.after) {
    mode = PresentMode::kHold;
    before_tick = after_tick = window.after.tick;
    exact = window.after.sample;
  } else {
    mode_ = PresentMode::kNone;
    return false;
  }
  if (exact != nullptr) std::copy(exact->locals.begin(), exact->locals.end(), target_.begin());

  recipe_miss_ = try_recipes && !recipe ? miss_ : RecipeMiss::kNone;
  if (!continues_from_last(mode, before_tick, after_tick, recipe)) {
    // Fade from what was on screen: shown_ still holds the last frame's pose. The jump is what
    // separates it from the new source at the last frame's render time: with a recipe, the new
    // source is evaluated there (the difference to this frame's target is the server's own
    // motion over one frame, hundreds of codec bounds for a run cycle: not to be faded). Pose
    // sources keep the simpler shown - target.
    if (recipe && mode_ != PresentMode::kNone &&
        evaluate_recipe(skeleton, recipe_a, recipe_b, std::min(last_render_us_, recipe_limit_us),
                        recipes, at_last_)) {
      difference_locals(shown_, at_last_, delta_);
    } else {
      difference_locals(shown_, target_, delta_);
    }
    correcting_ = true;
    correction_start_us_ = render_us;
    ++corrections_;
  }
  mode_ = mode;
  last_render_us_ = render_us;
  recipe_ = recipe;
  if (recipe) ++recipe_frames_;
  before_tick_ = before_tick;
  after_tick_ = after_tick;

  float w = 0.0f;
  if (correcting_) {
    const int64_t elapsed = render_us - correction_start_us_;
    if (settings.convergence_us <= 0 || elapsed >= settings.convergence_us) {
      correcting_ = false;
    } else {
      w = 1.0f - static_cast<float>(static_cast<double>(std::max<int64_t>(elapsed, 0)) /
                                    static_cast<double>(settings.convergence_us));
    }
  }
  if (correcting_) {
    apply_correction(target_, delta_, w, shown_);
  } else {
    // With an exact sample, shown_ is now its dequantised locals bit for bit, so the jobs
    // below give the server's quantised palette (protocol::quantized_palette runs the same
    // jobs on the same locals). Decoded poses carry no palette (pose_pool.h): it is computed
    // here, only when a frame shows one.
    std::copy(target_.begin(), target_.end(), shown_.begin());
  }
  const LocalToModelJob to_model{&skeleton, shown_, models_, skeleton_validated_};
  if (!to_model.Run()) return false;
  const PaletteJob to_palette{&skeleton, models_, palette_, skeleton_validated_};
  return to_palette.Run();
}

}  // namespace posecast::client
