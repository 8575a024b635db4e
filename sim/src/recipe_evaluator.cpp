#include "posecast/sim/recipe_evaluator.h"

#include <cmath>

#include "posecast/blending.h"
#include "recipe_motions.h"
#include "posecast/sampling.h"

namespace posecast::sim {


void RecipeEvaluator::reset(std::size_t node_count, std::size_t max_tracks, bool own_blend_scratch) {
  nodes_ = node_count;
  max_tracks_ = max_tracks;
  cursors_.assign(kCursorRows * max_tracks, 0u);
  if (own_blend_scratch) {
    samples_.assign(kRecipeScratchPoses * node_count, Transform{});
  } else {
    samples_ = {};
  }
}

std::size_t RecipeEvaluator::cursor_row(const PoseRecipe& recipe, uint8_t i) {
  if (!recipe.frozen()) return i;  // < 2 x kMaxRecipeMotionInputs = kCursorRows
  // The moving target keeps rows of its own; the frozen inputs (fixed times) share the rest:
  // two of them on one row cost a key search when they alternate, never other bits.
  if (i >= recipe.source_count) return static_cast<std::size_t>(i - recipe.source_count);
  return kMaxRecipeMotionInputs + i % kMaxRecipeMotionInputs;
}

bool RecipeEvaluator::evaluate_motion(const Skeleton& skeleton, std::span<const Clip> clips,
                                      bool assets_validated, const PoseRecipe& recipe,
                                      uint8_t first, uint8_t end, std::span<Transform> scratch,
                                      std::span<Transform> out) {
  uint8_t contributing = 0;
  for (uint8_t i = first; i < end; ++i) {
    if (recipe.inputs[i].weight > 0.0f) ++contributing;
  }
  const auto sample = [&](uint8_t i, std::span<Transform> into) {
    const PoseRecipe::Input& in = recipe.inputs[i];
    const Clip& clip = clips[in.clip];
    SampleJob job{&skeleton, &clip, in.time_us,
                  std::span<uint32_t>(cursors_).subspan(cursor_row(recipe, i) * max_tracks_, clip.tracks.size()),
                  into};
    job.assets_validated = assets_validated;
    return job.Run();
  };
  // One contributing clip: BlendJob would copy its sample unchanged (blending.h), and the
  // server's evaluator samples a single-clip motion straight into its pose: sample into `out`.
  if (contributing == 1) {
    for (uint8_t i = first; i < end; ++i) {
      if (recipe.inputs[i].weight > 0.0f) return sample(i, out);
    }
  }
  BlendInput inputs[kMaxRecipeMotionInputs];
  uint8_t used = 0;
  for (uint8_t i = first; i < end && used < kMaxRecipeMotionInputs; ++i) {
    std::span<Transform> pose = scratch.subspan(i * nodes_, nodes_);
    // Weight-0 inputs contribute nothing (the server skips sampling them too).
    if (recipe.inputs[i].weight > 0.0f && !sample(i, pose)) return false;
    inputs[used++] = BlendInput{pose, recipe.inputs[i].weight};
  }
  BlendJob blend{std::span<const BlendInput>(inputs, used), skeleton.rest, out};
  return blend.Run();
}

bool RecipeEvaluator::evaluate(const Skeleton& skeleton, std::span<const Clip> clips,
                               bool assets_validated, const PoseRecipe& recipe,
                               std::span<Transform> out, std::span<Transform> blend_scratch) {
  if (!recipe_shape_valid(recipe) || nodes_ == 0 || max_tracks_ == 0 ||
      out.size() != nodes_ || skeleton.node_count() != nodes_) {
    return false;
  }
  for (uint8_t i = 0; i < recipe.count; ++i) {
    const PoseRecipe::Input& in = recipe.inputs[i];
    if (in.clip >= clips.size() || clips[in.clip].tracks.size() > max_tracks_ ||
        !std::isfinite(in.weight) || in.weight < 0.0f) {
      return false;
    }
  }
  // Slots [0, kMaxRecipeInputs) hold input i's sample; the last holds a crossfade's target.
  const std::span<Transform> scratch =
      blend_scratch.empty() ? std::span<Transform>(samples_) : blend_scratch;
  if (scratch.size() < kRecipeScratchPoses * nodes_) return false;
  const std::span<Transform> target = scratch.subspan(kMaxRecipeInputs * nodes_, nodes_);
  return evaluate_recipe_motions(
      recipe,
      [&](uint8_t first, uint8_t end, std::span<Transform> into) {
        return evaluate_motion(skeleton, clips, assets_validated, recipe, first, end, scratch, into);
      },
      target, out);
}

}  // namespace posecast::sim
