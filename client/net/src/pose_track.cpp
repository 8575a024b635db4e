#include "posecast/client/pose_track.h"

#include <algorithm>
#include <bit>

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

void PresentScratch::reserve(std::size_t node_count) {
  if (fits(node_count)) return;
  target_.assign(node_count, Transform{});
  at_last_.assign(node_count, Transform{});
  blend_.assign(kRecipeScratchPoses * node_count, Transform{});
  models_.assign(node_count, glm::mat4(1.0f));
}

void PoseTrack::reset(std::size_t node_count, std::size_t joint_count, bool skeleton_validated,
                      std::size_t max_clip_tracks, bool external_scratch) {
  skeleton_validated_ = skeleton_validated;
  evaluator_.reset(node_count, max_clip_tracks, /*own_blend_scratch=*/false);
  shown_.assign(node_count, Transform{});
  delta_.assign(node_count, Transform{});
  palette_.assign(joint_count, glm::mat4(1.0f));
  own_scratch_ = PresentScratch{};
  if (!external_scratch) own_scratch_.reserve(node_count);
  last_source_ = Source{};
  pair_ = PairInfo{};
  mode_ = PresentMode::kNone;
  before_tick_ = after_tick_ = 0;
  correcting_ = false;
  recipe_ = false;
  recipe_miss_ = miss_ = RecipeMiss::kNone;
  correction_start_us_ = 0;
  extrapolated_us_ = 0;
}

bool PoseTrack::Source::same_as(const Source& o, const protocol::PoseRecipe* slots) const {
  if (kind != o.kind || skeleton != o.skeleton || a != o.a || b != o.b || tick_a != o.tick_a ||
      tick_b != o.tick_b) {
    return false;
  }
  switch (kind) {
    case Kind::kNone: return false;
    case Kind::kSample: return true;
    case Kind::kInterpolate:
    case Kind::kExtrapolate:
      // Bits, not values: the blend of two frames with equal parameters is the same.
      return std::bit_cast<uint32_t>(param) == std::bit_cast<uint32_t>(o.param) &&
             (kind == Kind::kExtrapolate || rotation == o.rotation);
    case Kind::kRecipe:
      return clips == o.clips &&
             protocol::recipe_same_evaluation(slots[recipe_slot], slots[o.recipe_slot]);
  }
  return false;
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

void PoseTrack::note_frame(PresentMode mode, int64_t render_us, bool recipe, uint32_t before_tick,
                           uint32_t after_tick) {
  mode_ = mode;
  last_render_us_ = render_us;
  recipe_ = recipe;
  if (recipe) ++recipe_frames_;
  before_tick_ = before_tick;
  after_tick_ = after_tick;
}

const PoseTrack::PairInfo& PoseTrack::pair_info(const SampleRef& a, const SampleRef& b) {
  if (pair_.a != a.sample || pair_.b != b.sample || pair_.tick_a != a.tick || pair_.tick_b != b.tick) {
    const std::size_t nodes = shown_.size();
    pair_.a = a.sample;
    pair_.b = b.sample;
    pair_.tick_a = a.tick;
    pair_.tick_b = b.tick;
    pair_.fits = a.sample->locals.size() == nodes && b.sample->locals.size() == nodes;
    pair_.has_recipes =
        a.sample->quantized.recipe.count != 0 && b.sample->quantized.recipe.count != 0;
    pair_.verified = a.sample->recipe_verified && b.sample->recipe_verified;
    if (pair_.verified) {
      pair_.recipe_a = a.sample->quantized.recipe;
      pair_.recipe_b = b.sample->quantized.recipe;
    }
  }
  return pair_;
}

bool PoseTrack::recipe_between(const SampleRef& a, const SampleRef& b, int64_t render_us,
                               const RecipeSource& recipes, protocol::PoseRecipe& at) {
  if (!a.own_record || !b.own_record) {
    const bool has_recipes =
        a.sample->quantized.recipe.count != 0 && b.sample->quantized.recipe.count != 0;
    miss_ = has_recipes ? RecipeMiss::kUnverified : RecipeMiss::kNoRecipe;
    return false;
  }
  const PairInfo& pair = pair_info(a, b);
  if (!pair.has_recipes) {
    miss_ = RecipeMiss::kNoRecipe;
    return false;
  }
  if (!pair.verified) {
    miss_ = RecipeMiss::kUnverified;
    return false;
  }
  if (recipe_at_time(pair.recipe_a, a.time_us, pair.recipe_b, b.time_us, render_us,
                     recipes.clip_durations_us, at) != RecipeTiming::kOk) {
    miss_ = RecipeMiss::kNotDerivable;
    return false;
  }
  miss_ = RecipeMiss::kNone;
  return true;
}

bool PoseTrack::compute(const Source& source, const Skeleton& skeleton,
                        const RecipeSource& recipes, PresentScratch& scratch,
                        std::span<Transform> out) {
  switch (source.kind) {
    case Source::Kind::kSample:
      if (!source.a->decoded()) return false;
      std::copy(source.a->locals.begin(), source.a->locals.end(), out.begin());
      return true;
    case Source::Kind::kRecipe:
      // The server evaluator's SampleJob + BlendJob on the same clips (recipe_evaluator.h): at
      // a server tick this is the server's pose bit for bit.
      return evaluator_.evaluate(skeleton, recipes.clips, recipes.assets_validated,
                                 recipe_slots_[source.recipe_slot], out, scratch.blend_);
    case Source::Kind::kInterpolate:
      if (!source.a->decoded() || !source.b->decoded()) return false;
      interpolate_locals(source.a->locals, source.b->locals, source.param, source.rotation, out);
      return true;
    case Source::Kind::kExtrapolate:
      if (!source.a->decoded() || !source.b->decoded()) return false;
      extrapolate_locals(source.a->locals, source.b->locals, source.param, out);
      return true;
    case Source::Kind::kNone: break;
  }
  return false;
}

bool PoseTrack::present(const Skeleton& skeleton, const SampleWindow& window, int64_t render_us,
                        const PresentSettings& settings, const RecipeSource& recipes,
                        PresentScratch* scratch, bool defer_palette) {
  const std::size_t nodes = shown_.size();
  palette_pending_ = false;
  palette_refused_ = false;
  PresentScratch& work = scratch != nullptr ? *scratch : own_scratch_;
  if (!work.fits(nodes)) return false;
  // Only the samples the frame uses are checked; a pair's check is cached with it (pair_info).
  auto fits = [&](const SampleRef& ref) { return ref.sample->locals.size() == nodes; };

  PresentMode mode = PresentMode::kNone;
  uint32_t before_tick = 0;
  uint32_t after_tick = 0;
  extrapolated_us_ = 0;
  const bool try_recipes = settings.evaluate_recipes && !recipes.clips.empty();
  // The pose source: a recipe where the pair qualifies (`recipe_source`), else `pose_source`.
  Source pose_source;
  Source recipe_source;
  pose_source.skeleton = recipe_source.skeleton = &skeleton;
  recipe_source.kind = Source::Kind::kRecipe;
  recipe_source.clips = recipes.clips.data();
  recipe_source.recipe_slot =
      last_source_.kind == Source::Kind::kRecipe && last_source_.recipe_slot == 0 ? 1 : 0;
  protocol::PoseRecipe& frame_recipe = recipe_slots_[recipe_source.recipe_slot];
  bool recipe_candidate = false;
  miss_ = RecipeMiss::kNone;
  SampleRef recipe_a, recipe_b;  // the pair a recipe target comes from
  int64_t recipe_limit_us = render_us;  // how far that pair is followed (the extrapolation bound)

  const auto exact_source = [&](const SampleRef& ref) {
    pose_source.kind = Source::Kind::kSample;
    pose_source.a = ref.sample;
    pose_source.tick_a = pose_source.tick_b = ref.tick;
  };
  if (window.before && window.after) {
    before_tick = window.before.tick;
    after_tick = window.after.tick;
    if (render_us == window.before.time_us) {
      if (!fits(window.before)) return false;
      mode = PresentMode::kExact;
      after_tick = before_tick;
      exact_source(window.before);
    } else {
      if (!pair_info(window.before, window.after).fits) return false;
      mode = PresentMode::kInterpolate;
      recipe_a = window.before;
      recipe_b = window.after;
      recipe_candidate =
          try_recipes && recipe_between(recipe_a, recipe_b, render_us, recipes, frame_recipe);
      const double span = static_cast<double>(window.after.time_us - window.before.time_us);
      pose_source.kind = Source::Kind::kInterpolate;
      pose_source.a = window.before.sample;
      pose_source.b = window.after.sample;
      pose_source.tick_a = before_tick;
      pose_source.tick_b = after_tick;
      pose_source.param = static_cast<float>(static_cast<double>(render_us - window.before.time_us) / span);
      pose_source.rotation = settings.rotation;
    }
  } else if (window.before) {
    before_tick = after_tick = window.before.tick;
    const int64_t past = render_us - window.before.time_us;
    if (past == 0 || !window.previous) {
      if (!fits(window.before)) return false;
    } else if (!pair_info(window.previous, window.before).fits) {
      return false;
    }
    if (past == 0) {
      mode = PresentMode::kExact;
      exact_source(window.before);
    } else if (!window.previous) {
      mode = PresentMode::kStalled;  // one sample only: nothing to extrapolate with
      exact_source(window.before);
    } else {
      const int64_t used = std::min(past, settings.max_extrapolation_us);
      mode = used < past ? PresentMode::kStalled : PresentMode::kExtrapolate;
      extrapolated_us_ = used;
      after_tick = window.previous.tick;  // the basis includes the velocity's origin
      // Bounded like pose extrapolation: a command the client has not seen yet (a speed
      // change, another clip) makes any continuation wrong, recipes included.
      recipe_a = window.previous;
      recipe_b = window.before;
      recipe_limit_us = window.before.time_us + used;
      recipe_candidate = try_recipes && recipe_between(recipe_a, recipe_b, recipe_limit_us,
                                                       recipes, frame_recipe);
      const double step = static_cast<double>(window.before.time_us - window.previous.time_us);
      pose_source.kind = Source::Kind::kExtrapolate;
      pose_source.a = window.previous.sample;
      pose_source.b = window.before.sample;
      pose_source.tick_a = window.previous.tick;
      pose_source.tick_b = window.before.tick;
      pose_source.param = static_cast<float>(static_cast<double>(used) / step);
    }
  } else if (window.after) {
    if (!fits(window.after)) return false;
    mode = PresentMode::kHold;
    before_tick = after_tick = window.after.tick;
    exact_source(window.after);
  } else {
    mode_ = PresentMode::kNone;
    last_source_ = Source{};
    return false;
  }
  if (recipe_candidate) {
    recipe_source.tick_a = recipe_a.tick;
    recipe_source.tick_b = recipe_b.tick;
  }

  // The target goes straight into shown_ unless a fade needs shown_ (the last frame's pose)
  // or the target apart from it. A recipe the evaluator refuses (nothing written) falls back
  // to the pose source, as if it had not qualified.
  bool recipe = recipe_candidate;
  bool continues = false;
  bool fading = false;
  for (;;) {
    const Source& source = recipe ? recipe_source : pose_source;
    // A recipe the evaluator refused counts as no miss (miss_ stays kNone), as before.
    recipe_miss_ = try_recipes && !recipe ? miss_ : RecipeMiss::kNone;
    continues = continues_from_last(mode, before_tick, after_tick, recipe);
    if (continues && !correcting_ && source.same_as(last_source_, recipe_slots_)) {
      // The same pose as the last frame, which was shown unfaded: shown_ and palette_ hold it.
      note_frame(mode, render_us, recipe, before_tick, after_tick);
      ++reused_frames_;
      return true;
    }
    fading = correcting_ || !continues;
    const std::span<Transform> into =
        fading ? std::span<Transform>(work.target_).first(nodes) : std::span<Transform>(shown_);
    if (compute(source, skeleton, recipes, work, into)) break;
    if (!recipe) {  // an undecodable sample (a deferred prediction the jobs refused)
      mode_ = PresentMode::kNone;
      last_source_ = Source{};
      return false;
    }
    recipe = false;
  }
  const std::span<Transform> target = fading ? std::span<Transform>(work.target_).first(nodes)
                                             : std::span<Transform>(shown_);

  if (!continues) {
    // Fade from what was on screen: shown_ still holds the last frame's pose. The jump is what
    // separates it from the new source at the last frame's render time: with a recipe, the new
    // source is evaluated there (the difference to this frame's target is the server's own
    // motion over one frame, hundreds of codec bounds for a run cycle: not to be faded). Pose
    // sources keep the simpler shown - target.
    Source at_last = recipe_source;
    at_last.recipe_slot = 2;
    const std::span<Transform> at_last_pose = std::span<Transform>(work.at_last_).first(nodes);
    if (recipe && mode_ != PresentMode::kNone &&
        recipe_between(recipe_a, recipe_b, std::min(last_render_us_, recipe_limit_us), recipes,
                       recipe_slots_[2]) &&
        compute(at_last, skeleton, recipes, work, at_last_pose)) {
      difference_locals(shown_, at_last_pose, delta_);
    } else {
      difference_locals(shown_, target, delta_);
    }
    correcting_ = true;
    correction_start_us_ = render_us;
    ++corrections_;
  }
  note_frame(mode, render_us, recipe, before_tick, after_tick);

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
    apply_correction(target, delta_, w, shown_);
  } else if (fading) {
    // The fade ended (or was not needed after all): show the target as it is.
    std::copy(target.begin(), target.end(), shown_.begin());
  }
  // With an exact sample, shown_ is now its dequantised locals bit for bit, so the jobs below
  // give the server's quantised palette (protocol::quantized_palette runs the same jobs on the
  // same locals). Decoded poses carry no palette (pose_pool.h): it is computed here, only when
  // a frame shows one.
  // A faded frame's palette is not its source's: the next frame cannot reuse it.
  last_source_ = correcting_ ? Source{} : (recipe ? recipe_source : pose_source);
  if (defer_palette) {
    palette_pending_ = true;
    return true;
  }
  const std::span<glm::mat4> models = std::span<glm::mat4>(work.models_).first(nodes);
  const LocalToModelJob to_model{&skeleton, shown_, models, skeleton_validated_};
  const PaletteJob to_palette{&skeleton, models, palette_, skeleton_validated_};
  if (!to_model.Run() || !to_palette.Run()) {
    last_source_ = Source{};
    return false;
  }
  return true;
}

void PoseTrack::finish_palette(bool written) {
  palette_pending_ = false;
  palette_refused_ = !written;
  if (!written) last_source_ = Source{};
}

}  // namespace posecast::client
