#pragma once
// Clip-dictionary prediction (docs/codec.md): both sides hold the same clips and evaluate them
// bit-exactly, so a pose that is a blend of shared clips is predicted from a short recipe (which
// clips, at which times, with which weights) and only a residual, zero when the prediction is
// exact, is sent. The decoded result is still an ordinary quantised pose.

#include <span>
#include <vector>

#include "posecast/clip.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sim/recipe_evaluator.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::protocol {

// Predicts poses from recipes: evaluates them with the animator's recipe evaluator
// (sim::RecipeEvaluator, the one the client runs at render time) and quantises the result.
// Holds scratch buffers (allocated in the constructor); predict() never allocates. One per thread; the skeleton, clips and format must
// outlive it and be the ones the format was built from.
class ClipDictionary {
 public:
  // `assets_validated`: true only when the caller has checked the skeleton and every clip once
  // (Skeleton::validate, Clip::validate) and they cannot change; the clip sampling then skips
  // its per-track bound checks (SampleJob::assets_validated). False checks them on every
  // predict().
  ClipDictionary(const Skeleton& skeleton, std::span<const Clip> clips, const PoseFormat& format,
                 bool assets_validated = false);

  std::size_t clip_count() const { return clips_.size(); }
  const Clip& clip(std::size_t i) const { return clips_[i]; }

  // True when the recipe's shape is valid (recipe_shape_valid: counts, fade state, wraps) and
  // every input names a clip of this dictionary, has a time within [0, kMaxRecipeTimeUs] and a
  // finite weight >= 0.
  bool valid(const PoseRecipe& recipe) const;

  // The quantised pose the recipe evaluates to: PoseQuantizer::quantize without a reference
  // (no axis hysteresis), so the result is a function of the recipe alone (a receiver may then
  // compute it whenever it needs the codes, docs/codec.md). Writes
  // out.values and out.off_layout, not out.recipe. Returns false (out unspecified) for an
  // invalid recipe or when a job fails.
  bool predict(const PoseRecipe& recipe, QuantizedPose& out);

  // After a successful predict(): the dequantised local rotations of its `out`, node_count
  // entries (PoseQuantizer::coded_rotations; for dequantize_pose_reusing). Unspecified
  // otherwise, and overwritten by the next predict().
  std::span<const glm::quat> predicted_rotations() const { return quantizer_.coded_rotations(); }

  // The recipe's local pose (before quantisation), for tests and tools.
  bool evaluate(const PoseRecipe& recipe, std::span<Transform> out);

 private:
  const Skeleton& skeleton_;
  std::span<const Clip> clips_;
  PoseQuantizer quantizer_;
  sim::RecipeEvaluator evaluator_;
  std::vector<Transform> blended_;
  bool assets_validated_ = false;
};

}  // namespace posecast::protocol
