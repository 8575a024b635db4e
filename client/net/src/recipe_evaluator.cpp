#include "posecast/client/recipe_evaluator.h"

#include <cmath>

#include "posecast/blending.h"
#include "posecast/sampling.h"

namespace posecast::client {

using protocol::kMaxRecipeInputs;

void RecipeEvaluator::reset(std::size_t node_count, std::size_t max_tracks, bool own_blend_scratch) {
  nodes_ = node_count;
  max_tracks_ = max_tracks;
  cursors_.assign(kMaxRecipeInputs * max_tracks, 0u);
  if (own_blend_scratch) {
    samples_.assign(kMaxRecipeInputs * node_count, Transform{});
  } else {
    samples_ = {};
  }
}

bool RecipeEvaluator::evaluate(const Skeleton& skeleton, std::span<const Clip> clips,
                               bool assets_validated, const protocol::PoseRecipe& recipe,
                               std::span<Transform> out, std::span<Transform> blend_scratch) {
  if (recipe.count == 0 || recipe.count > kMaxRecipeInputs || nodes_ == 0 || max_tracks_ == 0 ||
      out.size() != nodes_ || skeleton.node_count() != nodes_) {
    return false;
  }
  uint8_t contributing = 0;
  for (uint8_t i = 0; i < recipe.count; ++i) {
    const protocol::PoseRecipe::Input& in = recipe.inputs[i];
    if (in.clip >= clips.size() || clips[in.clip].tracks.size() > max_tracks_ ||
        !std::isfinite(in.weight) || in.weight < 0.0f) {
      return false;
    }
    if (in.weight > 0.0f) ++contributing;
  }
  const auto sample = [&](uint8_t i, std::span<Transform> into) {
    const protocol::PoseRecipe::Input& in = recipe.inputs[i];
    const Clip& clip = clips[in.clip];
    SampleJob job{&skeleton, &clip, in.time_us,
                  std::span<uint32_t>(cursors_).subspan(i * max_tracks_, clip.tracks.size()), into};
    job.assets_validated = assets_validated;
    return job.Run();
  };
  // One contributing clip: BlendJob would copy its sample unchanged (blending.h), and the
  // server's evaluator samples a single-clip motion straight into its pose: sample into `out`.
  if (contributing == 1) {
    for (uint8_t i = 0; i < recipe.count; ++i) {
      if (recipe.inputs[i].weight > 0.0f) return sample(i, out);
    }
  }
  const std::span<Transform> scratch =
      blend_scratch.empty() ? std::span<Transform>(samples_) : blend_scratch;
  if (scratch.size() < recipe.count * nodes_) return false;
  BlendInput inputs[kMaxRecipeInputs];
  for (uint8_t i = 0; i < recipe.count; ++i) {
    std::span<Transform> pose = scratch.subspan(i * nodes_, nodes_);
    // Weight-0 inputs contribute nothing (the server skips sampling them too).
    if (recipe.inputs[i].weight > 0.0f && !sample(i, pose)) return false;
    inputs[i] = BlendInput{pose, recipe.inputs[i].weight};
  }
  BlendJob blend{std::span<const BlendInput>(inputs, recipe.count), skeleton.rest, out};
  return blend.Run();
}

}  // namespace posecast::client
