#pragma once
// PoseTrack: what one entity shows at a render time, and the state that keeps it continuous.
//
//   render time r between two usable samples   -> per-joint interpolation (kInterpolate)
//   r exactly on a sample                      -> that sample; its palette is bit-identical
//                                                 to the server's quantised palette (kExact)
//   r before the first sample                  -> the first sample (kHold)
//   r past the newest sample                   -> constant-velocity extrapolation from the two
//                                                 newest samples for at most
//                                                 max_extrapolation_us (kExtrapolate), then
//                                                 frozen there (kStalled)
// With a RecipeSource and PresentSettings::evaluate_recipes, interpolation and extrapolation
// between two samples that are records of their own ticks carrying compatible, verified
// recipes (PoseSample::recipe_verified, recipe_at_time.h) evaluate the server's clips at the
// render time instead (recipe() true): the server's own pose at r, not a blend of two poses.
// Other pairs (no recipe, the clip set changed, a recipe that does not reproduce its pose, a
// pose carried from a baseline) interpolate as above.
// Whenever the pose source changes other than by r moving forward over exact samples (the end
// of an extrapolation, a late sample inserted before r), the difference between what was shown
// and the new target is captured and faded out linearly over convergence_us of render time:
// the pose converges to the truth without a pop.
//
// Buffers are sized once in reset(); present() never allocates.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/client/pose_blend.h"
#include "posecast/client/pose_pool.h"
#include "posecast/client/recipe_evaluator.h"
#include "posecast/clip.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::client {

struct PresentSettings {
  RotationBlend rotation = RotationBlend::kSlerp;
  int64_t max_extrapolation_us = 100'000;  // bound on extrapolation past the newest sample
  int64_t convergence_us = 100'000;        // fade-out time of a correction
  // Evaluate the server's clip recipes at the render time where both samples carry
  // compatible ones (needs a RecipeSource in present()); false: always interpolate poses.
  bool evaluate_recipes = true;
};

// The rig's clips for render-time recipes, and their durations (the PoseFormat's, which the
// server built from the same clips). Empty clips: no recipes. `assets_validated` as for
// SampleJob (true only for an AssetLibrary's models, validated once when added).
struct RecipeSource {
  std::span<const Clip> clips;
  std::span<const int64_t> clip_durations_us;
  bool assets_validated = false;
};

enum class PresentMode : uint8_t { kNone, kHold, kExact, kInterpolate, kExtrapolate, kStalled };
const char* to_string(PresentMode mode);

// Why a derived frame (interpolated or extrapolated) with recipes enabled was not shown from a
// recipe (PoseTrack::recipe_miss), for statistics and tests.
enum class RecipeMiss : uint8_t {
  kNone,          // shown from a recipe, or nothing to derive (an exact sample, a hold)
  kNoRecipe,      // a neighbour carries none (layers, masks, a fade from a frozen pose)
  kUnverified,    // a neighbour is a carried pose or its recipe did not reproduce its pose
  kNotDerivable,  // recipe_at_time refused the pair (RecipeTiming other than kOk / kMissing)
};
const char* to_string(RecipeMiss miss);

// One usable sample of an entity: a decoded record, or a pose carried in a complete view.
struct SampleRef {
  const PoseSample* sample = nullptr;
  uint32_t tick = 0;
  int64_t time_us = 0;  // server time of the tick
  // A record of this tick (its recipe describes this tick); false for a pose carried from a
  // baseline view, whose recipe is the baseline's.
  bool own_record = false;
  explicit operator bool() const { return sample != nullptr; }
};

// The samples around a render time r (from SnapshotBuffer::window()).
struct SampleWindow {
  SampleRef before;    // newest usable sample with time <= r
  SampleRef after;     // oldest usable sample with time > r
  SampleRef previous;  // newest usable sample older than `before` (extrapolation velocity)
};

class PoseTrack {
 public:
  // Sizes the buffers; forgets any history. `skeleton_validated`: true only when every skeleton
  // later passed to present() was checked once with Skeleton::validate() and cannot change
  // (the AssetLibrary's models); the LocalToModel and Palette jobs then skip their per-node
  // and per-joint checks (assets_validated). False checks them on every present().
  // `max_clip_tracks`: the most tracks of any clip of the rig (sizes the render-time recipe
  // evaluator; 0 disables recipes for this track).
  void reset(std::size_t node_count, std::size_t joint_count, bool skeleton_validated = false,
             std::size_t max_clip_tracks = 0);

  // Computes the pose at render time `render_us` (server microseconds) into locals() and
  // palette(). Returns false (mode kNone, nothing written) when the window holds no sample or
  // a job rejects the skeleton. `skeleton` must be the one the samples were decoded for.
  // `recipes`: see RecipeSource (default: none, poses are interpolated).
  bool present(const Skeleton& skeleton, const SampleWindow& window, int64_t render_us,
               const PresentSettings& settings, const RecipeSource& recipes = {});

  PresentMode mode() const { return mode_; }
  bool correcting() const { return correcting_; }
  // True when the last present() evaluated a render-time recipe (kInterpolate, kExtrapolate
  // or kStalled from recipes).
  bool recipe() const { return recipe_; }
  uint64_t recipe_frames() const { return recipe_frames_; }
  RecipeMiss recipe_miss() const { return recipe_miss_; }
  std::span<const Transform> locals() const { return shown_; }
  std::span<const glm::mat4> palette() const { return palette_; }
  // How far past the newest sample the last present() extrapolated (0 unless extrapolating).
  int64_t extrapolated_us() const { return extrapolated_us_; }
  uint64_t corrections() const { return corrections_; }

 private:
  bool continues_from_last(PresentMode mode, uint32_t before_tick, uint32_t after_tick,
                           bool recipe) const;
  // The recipe at render_us from samples a (older) and b, evaluated into `out` (node_count);
  // false when the pair does not qualify (then nothing is written).
  bool evaluate_recipe(const Skeleton& skeleton, const SampleRef& a, const SampleRef& b,
                       int64_t render_us, const RecipeSource& recipes, std::span<Transform> out);

  std::vector<Transform> target_;  // the pose the samples say
  std::vector<Transform> shown_;   // target_ plus the fading correction
  std::vector<Transform> delta_;   // the correction captured at correction_start_us_
  std::vector<Transform> at_last_; // a new recipe source at the last frame's render time
  RecipeEvaluator evaluator_;      // this entity's clip sampling (cursors kept between frames)
  std::vector<glm::mat4> models_;
  std::vector<glm::mat4> palette_;

  PresentMode mode_ = PresentMode::kNone;
  bool skeleton_validated_ = false;
  uint32_t before_tick_ = 0;  // basis of the last frame
  uint32_t after_tick_ = 0;
  bool correcting_ = false;
  bool recipe_ = false;  // the last frame's target came from a recipe
  uint64_t recipe_frames_ = 0;
  RecipeMiss recipe_miss_ = RecipeMiss::kNone;  // of the last present()
  RecipeMiss miss_ = RecipeMiss::kNone;         // of the last evaluate_recipe()
  int64_t last_render_us_ = 0;  // render time of the last present()
  int64_t correction_start_us_ = 0;
  int64_t extrapolated_us_ = 0;
  uint64_t corrections_ = 0;
};

}  // namespace posecast::client
