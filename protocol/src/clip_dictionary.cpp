#include "posecast/protocol/clip_dictionary.h"

#include <algorithm>
#include <cmath>

#include "posecast/blending.h"
#include "posecast/protocol/recipe_motions.h"
#include "posecast/sampling.h"

namespace posecast::protocol {

ClipDictionary::ClipDictionary(const Skeleton& skeleton, std::span<const Clip> clips,
                               const PoseFormat& format, bool assets_validated)
    : skeleton_(skeleton),
      clips_(clips),
      quantizer_(format),
      samples_(kMaxRecipeInputs, std::vector<Transform>(skeleton.node_count())),
      blended_(skeleton.node_count()),
      target_(skeleton.node_count()),
      assets_validated_(assets_validated) {
  std::size_t tracks = 0;
  for (const Clip& c : clips) tracks = std::max(tracks, c.tracks.size());
  cursor_.assign(tracks, 0u);
}

bool ClipDictionary::valid(const PoseRecipe& recipe) const {
  if (!recipe_shape_valid(recipe)) return false;
  for (uint8_t i = 0; i < recipe.count; ++i) {
    const PoseRecipe::Input& in = recipe.inputs[i];
    if (in.clip >= clips_.size() || in.time_us < 0 || in.time_us > kMaxRecipeTimeUs ||
        !std::isfinite(in.weight) || in.weight < 0.0f) {
      return false;
    }
  }
  return true;
}

bool ClipDictionary::evaluate_motion(const PoseRecipe& recipe, uint8_t first, uint8_t end,
                                     std::span<Transform> out) {
  BlendInput inputs[kMaxRecipeMotionInputs];
  uint8_t used = 0;
  for (uint8_t i = first; i < end; ++i) {
    const PoseRecipe::Input& in = recipe.inputs[i];
    const Clip& clip = clips_[in.clip];
    // The sampler's result does not depend on the cursor's history (sampling.h), so a fresh
    // cursor gives the server's bits.
    std::fill(cursor_.begin(), cursor_.end(), 0u);
    SampleJob job{&skeleton_, &clip, in.time_us,
                  std::span<uint32_t>(cursor_).first(clip.tracks.size()), samples_[i]};
    job.assets_validated = assets_validated_;
    if (!job.Run()) return false;
    inputs[used++] = BlendInput{samples_[i], in.weight};
  }
  // BlendJob copies a single contributing input bit for bit, which is what the animator's
  // straight sampling of a single-clip motion gives (blending.h).
  BlendJob blend{std::span<const BlendInput>(inputs, used), skeleton_.rest, out};
  return blend.Run();
}

bool ClipDictionary::evaluate(const PoseRecipe& recipe, std::span<Transform> out) {
  if (!valid(recipe) || out.size() != skeleton_.node_count()) return false;
  return evaluate_recipe_motions(
      recipe,
      [&](uint8_t first, uint8_t end, std::span<Transform> into) {
        return evaluate_motion(recipe, first, end, into);
      },
      target_, out);
}

bool ClipDictionary::predict(const PoseRecipe& recipe, QuantizedPose& out) {
  return evaluate(recipe, blended_) && quantizer_.quantize(blended_, nullptr, out);
}

}  // namespace posecast::protocol
