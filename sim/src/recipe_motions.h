#pragma once
// The order in which a recipe's motions are evaluated and mixed: the animator's layer 0
// (sim/src/evaluator.cpp evaluate_layer; a frozen source is the interrupted fade it froze,
// sim/src/world_commands.cpp): the same jobs in the same order give the server's pose bit for
// bit. RecipeEvaluator's (recipe_evaluator.h) order of work.

#include <cstdint>
#include <span>

#include "posecast/blending.h"
#include "posecast/sim/pose_recipe.h"
#include "posecast/transform.h"

namespace posecast::sim {

// Evaluates `recipe` (shape already checked: recipe_shape_valid) into `out`:
//  - plain: motion(0, count, out);
//  - crossfade: the source motion into `out`, then, when alpha > 0, the target motion into
//    `target` mixed over it (OverrideBlendJob at recipe_fade_alpha);
//  - frozen source: the chain that froze it rebuilt the same way (its base motion, then each
//    frozen mix's motion mixed over at recipe_frozen_mix_alpha) stands for the source.
// `motion(first, end, into)` evaluates inputs [first, end) as one plain blend into `into` and
// returns false on failure; `target` is node_count entries apart from `out`. Returns false
// when a motion or a mix fails (`out` is then unspecified).
template <class EvaluateMotion>
bool evaluate_recipe_motions(const PoseRecipe& recipe, EvaluateMotion&& motion,
                             std::span<Transform> target, std::span<Transform> out) {
  if (!recipe.crossfade()) return motion(uint8_t{0}, recipe.count, out);
  // Motion [first, end) mixed over `out` at `alpha` (nothing to do at alpha 0).
  const auto mix_over = [&](uint8_t first, uint8_t end, float alpha) {
    if (!(alpha > 0.0f)) return true;
    if (!motion(first, end, target)) return false;
    OverrideBlendJob mix;
    mix.pose = out;
    mix.layer = target;
    mix.weight = alpha;
    return mix.Run();
  };
  if (recipe.frozen()) {
    if (!motion(uint8_t{0}, recipe.frozen_source_count, out)) return false;
    for (uint8_t k = 0; k < recipe.frozen_mix_count; ++k) {
      if (!mix_over(recipe.frozen_mix_begin(k), recipe.frozen_mixes[k].end,
                    recipe_frozen_mix_alpha(recipe, k))) {
        return false;
      }
    }
  } else if (!motion(uint8_t{0}, recipe.source_count, out)) {
    return false;
  }
  return mix_over(recipe.source_count, recipe.count, recipe_fade_alpha(recipe));
}

}  // namespace posecast::sim
