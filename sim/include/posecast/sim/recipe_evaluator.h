#pragma once
// RecipeEvaluator: the one evaluation of clip recipes (PoseRecipe) into a local pose, with the
// animator's jobs (sim/src/evaluator.cpp): each input clip sampled with SampleJob, a single
// contributing clip taken as sampled, several blended with BlendJob in the recipe's order; a
// crossfade recipe's target motion mixed over its source (OverrideBlendJob at the recipe's
// alpha, as the animator's crossfading layer), a frozen source evaluated as the interrupted
// crossfade it froze (fixed times and alpha). At a server tick the result is the server's pose
// bit for bit. The codec's clip-dictionary prediction (protocol::ClipDictionary) and the
// client's render-time recipes (client::PoseTrack) both run it.
//
// The sampling cursors are kept between evaluations (per entity, render times move forward a
// frame at a time, so the sampler's key lookup stays on its O(1) path); SampleJob's result
// never depends on the cursor (sampling.h), so a shared evaluator gives the same bits. Buffers
// are sized in reset(); evaluate() never allocates.

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/clip.h"
#include "posecast/sim/pose_recipe.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::sim {

// The most tracks of any of `clips` (RecipeEvaluator::reset's max_tracks for a rig).
inline std::size_t max_clip_tracks(std::span<const Clip> clips) {
  std::size_t most = 0;
  for (const Clip& c : clips) most = c.tracks.size() > most ? c.tracks.size() : most;
  return most;
}

// Poses of blend scratch one evaluation needs: one per recipe input and a crossfade's target.
inline constexpr std::size_t kRecipeScratchPoses = kMaxRecipeInputs + 1;

class RecipeEvaluator {
 public:
  // Sizes the buffers for a rig: `node_count` skeleton nodes, clips of at most `max_tracks`
  // tracks. max_tracks 0 (or node_count 0) leaves the evaluator unable to evaluate.
  // `own_blend_scratch` false: every evaluate() of a blend is given its scratch (a caller that
  // shares one between entities), so none is held here.
  void reset(std::size_t node_count, std::size_t max_tracks, bool own_blend_scratch = true);

  // Evaluates `recipe` into `out` (node_count entries). `clips` are the rig's clips (the ones
  // the recipe's indices name), `assets_validated` as for SampleJob (true only for assets
  // checked once with Skeleton::validate / Clip::validate that cannot change: the
  // AssetLibrary's). Returns false (out unspecified) for a recipe of an invalid shape
  // (recipe_shape_valid), a clip index out of range, a clip with more tracks than
  // reset() allowed, a negative or non-finite weight, a size mismatch, or a failing job; nothing
  // is written to `out` then. `blend_scratch`: at least kRecipeScratchPoses x node_count entries for
  // the sampled inputs of a blend and a crossfade's target (empty: the evaluator's own, see
  // reset()); too small a scratch fails.
  bool evaluate(const Skeleton& skeleton, std::span<const Clip> clips, bool assets_validated,
                const PoseRecipe& recipe, std::span<Transform> out,
                std::span<Transform> blend_scratch = {});

 private:
  std::size_t nodes_ = 0;
  std::size_t max_tracks_ = 0;
  // Sampling key hints, kCursorRows x max_tracks_: one row per input of a plain or motion
  // crossfade recipe (input i: row i); a fade from a frozen pose has up to 12 inputs, its
  // target keeps rows 0-3 and its fixed frozen inputs share rows 4-7 (cursor_row). Rows, not
  // one per possible input: the block is per entity, and most of it is never touched.
  static constexpr std::size_t kCursorRows = 2 * kMaxRecipeMotionInputs;
  static std::size_t cursor_row(const PoseRecipe& recipe, uint8_t i);
  std::vector<uint32_t> cursors_;
  std::vector<Transform> samples_;  // own scratch: kRecipeScratchPoses x nodes_, or empty

  // Inputs [first, end) of `recipe` as one motion into `out` (inputs already checked); input
  // i's sample goes to slot i of `scratch`.
  bool evaluate_motion(const Skeleton& skeleton, std::span<const Clip> clips, bool assets_validated,
                       const PoseRecipe& recipe, uint8_t first, uint8_t end,
                       std::span<Transform> scratch, std::span<Transform> out);
};

}  // namespace posecast::sim
