#include "posecast/protocol/clip_dictionary.h"

#include <algorithm>
#include <cmath>

namespace posecast::protocol {

ClipDictionary::ClipDictionary(const Skeleton& skeleton, std::span<const Clip> clips,
                               const PoseFormat& format, bool assets_validated)
    : skeleton_(skeleton),
      clips_(clips),
      quantizer_(format),
      blended_(skeleton.node_count()),
      assets_validated_(assets_validated) {
  // At least one track's cursors: a rig whose clips animate nothing still evaluates (to rest).
  evaluator_.reset(skeleton.node_count(), std::max<std::size_t>(sim::max_clip_tracks(clips), 1));
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

bool ClipDictionary::evaluate(const PoseRecipe& recipe, std::span<Transform> out) {
  if (!valid(recipe) || out.size() != skeleton_.node_count()) return false;
  return evaluator_.evaluate(skeleton_, clips_, assets_validated_, recipe, out);
}

bool ClipDictionary::predict(const PoseRecipe& recipe, QuantizedPose& out) {
  return evaluate(recipe, blended_) && quantizer_.quantize(blended_, nullptr, out);
}

}  // namespace posecast::protocol
