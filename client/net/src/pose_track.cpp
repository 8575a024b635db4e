#include "posecast/client/pose_track.h"

#include <algorithm>
#include <bit>

#include "posecast/sim/recipe_at_time.h"
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
    case PresentMode::kPredicted: return "predicted";
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
  blend_.assign(sim::kRecipeScratchPoses * node_count, Transform{});
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
  if (sim::recipe_at_time(pair.recipe_a, a.time_us, pair.recipe_b, b.time_us, render_us,
                          recipes.clip_durations_us, at) != sim::RecipeTiming::kOk) {
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
      // The animator's recipe evaluator on the same clips (sim/recipe_evaluator.h): at
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

inline PoseTrack::PlanOutcome PoseTrack::plan_frame(const Skeleton& skeleton,
                                             const SampleWindow& window, int64_t render_us,
                                             const PresentSettings& settings,
                                             const RecipeSource& recipes, FramePlan& plan) {
  plan.try_recipes = settings.evaluate_recipes && !recipes.clips.empty();
  plan.pose_source.skeleton = plan.recipe_source.skeleton = &skeleton;
  plan.recipe_source.kind = Source::Kind::kRecipe;
  plan.recipe_source.clips = recipes.clips.data();
  // The frame's recipe goes into the slot the last frame's source does not use.
  plan.recipe_source.recipe_slot =
      last_source_.kind == Source::Kind::kRecipe && last_source_.recipe_slot == 0 ? 1 : 0;
  plan.recipe_limit_us = render_us;
  miss_ = RecipeMiss::kNone;
  PlanOutcome outcome = PlanOutcome::kEmpty;
  if (window.before && window.after) {
    outcome = plan_between(window, render_us, settings, recipes, plan);
  } else if (window.before) {
    outcome = plan_past_newest(window, render_us, settings, recipes, plan);
  } else if (window.after) {
    if (!sample_fits(window.after)) return PlanOutcome::kMismatch;
    plan.mode = PresentMode::kHold;
    plan_exact(window.after, plan);
    outcome = PlanOutcome::kPlanned;
  }
  if (plan.recipe_candidate) {
    plan.recipe_source.tick_a = plan.recipe_a.tick;
    plan.recipe_source.tick_b = plan.recipe_b.tick;
  }
  return outcome;
}

inline void PoseTrack::plan_exact(const SampleRef& ref, FramePlan& plan) {
  plan.before_tick = plan.after_tick = ref.tick;
  plan.pose_source.kind = Source::Kind::kSample;
  plan.pose_source.a = ref.sample;
  plan.pose_source.tick_a = plan.pose_source.tick_b = ref.tick;
}

inline void PoseTrack::plan_derived(Source::Kind kind, const SampleRef& older,
                                    const SampleRef& newer, float param, int64_t recipe_us,
                                    const RecipeSource& recipes, FramePlan& plan) {
  plan.recipe_a = older;
  plan.recipe_b = newer;
  plan.recipe_candidate =
      plan.try_recipes && recipe_between(older, newer, recipe_us, recipes, frame_recipe(plan));
  Source& source = plan.pose_source;
  source.kind = kind;
  source.a = older.sample;
  source.b = newer.sample;
  source.tick_a = older.tick;
  source.tick_b = newer.tick;
  source.param = param;
}

// r between two samples: the earlier one exactly, or interpolation (or a recipe) between them.
inline PoseTrack::PlanOutcome PoseTrack::plan_between(const SampleWindow& window, int64_t render_us,
                                               const PresentSettings& settings,
                                               const RecipeSource& recipes, FramePlan& plan) {
  if (render_us == window.before.time_us) {
    if (!sample_fits(window.before)) return PlanOutcome::kMismatch;
    plan.mode = PresentMode::kExact;
    plan_exact(window.before, plan);
    return PlanOutcome::kPlanned;
  }
  if (!pair_info(window.before, window.after).fits) return PlanOutcome::kMismatch;
  plan.mode = PresentMode::kInterpolate;
  plan.before_tick = window.before.tick;
  plan.after_tick = window.after.tick;
  const double span = static_cast<double>(window.after.time_us - window.before.time_us);
  plan_derived(Source::Kind::kInterpolate, window.before, window.after,
               static_cast<float>(static_cast<double>(render_us - window.before.time_us) / span),
               render_us, recipes, plan);
  plan.pose_source.rotation = settings.rotation;
  return PlanOutcome::kPlanned;
}

// r at or past the newest sample: that sample exactly, or a bounded extrapolation from the
// newest two (or a recipe continued from them), frozen at the bound.
inline PoseTrack::PlanOutcome PoseTrack::plan_past_newest(const SampleWindow& window,
                                                          int64_t render_us,
                                                          const PresentSettings& settings,
                                                          const RecipeSource& recipes,
                                                          FramePlan& plan) {
  const int64_t past = render_us - window.before.time_us;
  if (past == 0 || !window.previous) {
    if (!sample_fits(window.before)) return PlanOutcome::kMismatch;
    // One sample only (past > 0): nothing to extrapolate with.
    plan.mode = past == 0 ? PresentMode::kExact : PresentMode::kStalled;
    plan_exact(window.before, plan);
    return PlanOutcome::kPlanned;
  }
  if (!pair_info(window.previous, window.before).fits) return PlanOutcome::kMismatch;
  const int64_t used = std::min(past, settings.max_extrapolation_us);
  plan.mode = used < past ? PresentMode::kStalled : PresentMode::kExtrapolate;
  extrapolated_us_ = used;
  plan.before_tick = window.before.tick;
  plan.after_tick = window.previous.tick;  // the basis includes the velocity's origin
  // Bounded like pose extrapolation: a command the client has not seen yet (a speed change,
  // another clip) makes any continuation wrong, recipes included.
  plan.recipe_limit_us = window.before.time_us + used;
  const double step = static_cast<double>(window.before.time_us - window.previous.time_us);
  plan_derived(Source::Kind::kExtrapolate, window.previous, window.before,
               static_cast<float>(static_cast<double>(used) / step), plan.recipe_limit_us,
               recipes, plan);
  return PlanOutcome::kPlanned;
}

// The target goes straight into shown_ unless a fade needs shown_ (the last frame's pose) or
// the target apart from it. A recipe the evaluator refuses (nothing written) falls back to the
// pose source, as if it had not qualified.
inline PoseTrack::TargetOutcome PoseTrack::compute_target(FramePlan& plan, const Skeleton& skeleton,
                                                   const RecipeSource& recipes,
                                                   PresentScratch& work) {
  const std::size_t nodes = shown_.size();
  plan.recipe = plan.recipe_candidate;
  for (;;) {
    const Source& source = plan.recipe ? plan.recipe_source : plan.pose_source;
    // A recipe the evaluator refused counts as no miss (miss_ stays kNone).
    recipe_miss_ = plan.try_recipes && !plan.recipe ? miss_ : RecipeMiss::kNone;
    plan.continues = continues_from_last(plan.mode, plan.before_tick, plan.after_tick, plan.recipe);
    if (plan.continues && !correcting_ && source.same_as(last_source_, recipe_slots_)) {
      return TargetOutcome::kReused;
    }
    plan.fading = correcting_ || !plan.continues;
    const std::span<Transform> into = plan.fading ? std::span<Transform>(work.target_).first(nodes)
                                                  : std::span<Transform>(shown_);
    if (compute(source, skeleton, recipes, work, into)) return TargetOutcome::kComputed;
    if (!plan.recipe) return TargetOutcome::kFailed;  // an undecodable sample
    plan.recipe = false;
  }
}

// Starts fading from what was on screen: shown_ still holds the last frame's pose. The jump is
// what separates it from the new source at the last frame's render time: with a recipe, the new
// source is evaluated there (the difference to this frame's target is the server's own motion
// over one frame, hundreds of codec bounds for a run cycle: not to be faded). Pose sources keep
// the simpler shown - target.
inline void PoseTrack::start_correction(const FramePlan& plan, const Skeleton& skeleton,
                                 const RecipeSource& recipes, PresentScratch& work,
                                 std::span<const Transform> target, int64_t render_us) {
  const std::size_t nodes = shown_.size();
  Source at_last = plan.recipe_source;
  at_last.recipe_slot = 2;
  const std::span<Transform> at_last_pose = std::span<Transform>(work.at_last_).first(nodes);
  if (plan.recipe && mode_ != PresentMode::kNone &&
      recipe_between(plan.recipe_a, plan.recipe_b, std::min(last_render_us_, plan.recipe_limit_us),
                     recipes, recipe_slots_[2]) &&
      compute(at_last, skeleton, recipes, work, at_last_pose)) {
    difference_locals(shown_, at_last_pose, delta_);
  } else {
    difference_locals(shown_, target, delta_);
  }
  correcting_ = true;
  correction_start_us_ = render_us;
  ++corrections_;
}

// shown_ = the target plus what is left of the correction at render_us (the target itself once
// the fade has run its course).
inline void PoseTrack::fade_into_shown(std::span<const Transform> target, bool fading,
                                const PresentSettings& settings, int64_t render_us) {
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
}

// With an exact sample, shown_ is its dequantised locals bit for bit, so the jobs give the
// server's quantised palette (protocol::quantized_palette runs the same jobs on the same
// locals). Decoded poses carry no palette (pose_pool.h): it is computed here, only when a
// frame shows one.
inline bool PoseTrack::write_palette(const Skeleton& skeleton, PresentScratch& work) {
  const std::size_t nodes = shown_.size();
  const std::span<glm::mat4> models = std::span<glm::mat4>(work.models_).first(nodes);
  const LocalToModelJob to_model{&skeleton, shown_, models, skeleton_validated_};
  const PaletteJob to_palette{&skeleton, models, palette_, skeleton_validated_};
  if (!to_model.Run() || !to_palette.Run()) return false;
  mesh_model_ = skeleton.mesh_node >= 0 ? models[static_cast<std::size_t>(skeleton.mesh_node)]
                                        : glm::mat4(1.0f);
  return true;
}

bool PoseTrack::present(const Skeleton& skeleton, const SampleWindow& window, int64_t render_us,
                        const PresentSettings& settings, const RecipeSource& recipes,
                        PresentScratch* scratch, bool defer_palette) {
  const std::size_t nodes = shown_.size();
  palette_pending_ = false;
  palette_refused_ = false;
  PresentScratch& work = scratch != nullptr ? *scratch : own_scratch_;
  if (!work.fits(nodes)) return false;
  extrapolated_us_ = 0;

  FramePlan plan;
  switch (plan_frame(skeleton, window, render_us, settings, recipes, plan)) {
    case PlanOutcome::kPlanned: break;
    case PlanOutcome::kMismatch: return false;  // nothing changed
    case PlanOutcome::kEmpty:
      mode_ = PresentMode::kNone;
      last_source_ = Source{};
      return false;
  }
  switch (compute_target(plan, skeleton, recipes, work)) {
    case TargetOutcome::kComputed: break;
    case TargetOutcome::kReused:
      // The same pose as the last frame, which was shown unfaded: shown_ and palette_ hold it.
      note_frame(plan.mode, render_us, plan.recipe, plan.before_tick, plan.after_tick);
      ++reused_frames_;
      return true;
    case TargetOutcome::kFailed:
      mode_ = PresentMode::kNone;
      last_source_ = Source{};
      return false;
  }
  const std::span<Transform> target = plan.fading ? std::span<Transform>(work.target_).first(nodes)
                                                  : std::span<Transform>(shown_);
  if (!plan.continues) start_correction(plan, skeleton, recipes, work, target, render_us);
  note_frame(plan.mode, render_us, plan.recipe, plan.before_tick, plan.after_tick);
  fade_into_shown(target, plan.fading, settings, render_us);
  // A faded frame's palette is not its source's: the next frame cannot reuse it.
  last_source_ = correcting_ ? Source{} : (plan.recipe ? plan.recipe_source : plan.pose_source);
  if (defer_palette) {
    palette_pending_ = true;
    return true;
  }
  if (!write_palette(skeleton, work)) {
    last_source_ = Source{};
    return false;
  }
  return true;
}

void PoseTrack::finish_palette(bool written, const glm::mat4& mesh_model) {
  palette_pending_ = false;
  palette_refused_ = !written;
  if (written) {
    mesh_model_ = mesh_model;
  } else {
    last_source_ = Source{};
  }
}

}  // namespace posecast::client
