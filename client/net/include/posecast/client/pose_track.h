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
// recipes (PoseSample::recipe_verified, sim/recipe_at_time.h) evaluate the server's clips at the
// render time instead (recipe() true): the server's own pose at r, not a blend of two poses.
// Other pairs (no recipe, the clip set changed, a recipe that does not reproduce its pose, a
// pose carried from a baseline) interpolate as above.
// Whenever the pose source changes other than by r moving forward over exact samples (the end
// of an extrapolation, a late sample inserted before r), the difference between what was shown
// and the new target is captured and faded out linearly over convergence_us of render time:
// the pose converges to the truth without a pop.
//
// Buffers are sized once in reset() (and PresentScratch::reserve()); present() never
// allocates. A frame whose source is exactly the last frame's (the same samples or the same
// recipe at the render time, no fade running) reuses the last palette without recomputing it.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/client/pose_blend.h"
#include "posecast/client/pose_pool.h"
#include "posecast/clip.h"
#include "posecast/sim/recipe_evaluator.h"
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

// Buffers one present() call uses and leaves nothing in: the target pose, the last frame's pose
// under a new recipe source, world matrices, the inputs of a recipe blend. One scratch serves
// any number of PoseTracks presented one after another (NetClient keeps one for all its
// entities), so a frame touches these once, hot in the L1 cache, instead of once per entity.
// A PoseTrack reset() without `external_scratch` holds its own. Not for concurrent use.
class PresentScratch {
 public:
  // Grows the buffers to `node_count` nodes (allocates when they are smaller).
  void reserve(std::size_t node_count);
  bool fits(std::size_t node_count) const { return models_.size() >= node_count; }

 private:
  friend class PoseTrack;
  std::vector<Transform> target_;   // the pose the samples say
  std::vector<Transform> at_last_;  // a new recipe source at the last frame's render time
  std::vector<Transform> blend_;    // sim::kRecipeScratchPoses x nodes: recipe inputs, fade target
  std::vector<glm::mat4> models_;   // LocalToModel's output, the palette's input
};

// kPredicted: an owned entity shown from the client's prediction (predictor.h), not a PoseTrack.
enum class PresentMode : uint8_t { kNone, kHold, kExact, kInterpolate, kExtrapolate, kStalled, kPredicted };
const char* to_string(PresentMode mode);

// Why a derived frame (interpolated or extrapolated) with recipes enabled was not shown from a
// recipe (PoseTrack::recipe_miss), for statistics and tests.
enum class RecipeMiss : uint8_t {
  kNone,          // shown from a recipe, or nothing to derive (an exact sample, a hold)
  kNoRecipe,      // a neighbour carries none (layers, masks, a frozen pose with no origin)
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
  // `external_scratch`: every present() is given a PresentScratch (NetClient's), so this track
  // holds none of its own; present() without one then fails.
  void reset(std::size_t node_count, std::size_t joint_count, bool skeleton_validated = false,
             std::size_t max_clip_tracks = 0, bool external_scratch = false);

  // Computes the pose at render time `render_us` (server microseconds) into locals() and
  // palette(). Returns false (mode kNone, nothing written) when the window holds no sample or
  // a job rejects the skeleton, and false with nothing changed when a sample the frame uses
  // has another node count (samples the frame does not use are not looked at). `skeleton`
  // must be the one the samples were decoded for.
  // `recipes`: see RecipeSource (default: none, poses are interpolated). `scratch`: the shared
  // per-call buffers (null: this track's own, see reset()); false when it is smaller than the
  // skeleton.
  // `defer_palette`: a frame that needs a new palette leaves it to the caller instead of
  // running LocalToModelJob and PaletteJob: palette_pending() is then true, locals() holds the
  // pose, and the caller writes the palette into pending_palette() (NetClient batches entities
  // that share a skeleton with PaletteBatchJob: the same bits) and calls finish_palette().
  bool present(const Skeleton& skeleton, const SampleWindow& window, int64_t render_us,
               const PresentSettings& settings, const RecipeSource& recipes = {},
               PresentScratch* scratch = nullptr, bool defer_palette = false);
  bool palette_pending() const { return palette_pending_; }
  // The palette to write while palette_pending() (joint_count matrices).
  std::span<glm::mat4> pending_palette() { return palette_; }
  // Ends a deferred palette: `written` false (the palette jobs refused the skeleton) makes the
  // frame fail as present() would have, and the next frame recomputes. `mesh_model`: the mesh
  // node's model-space matrix the palette was computed with (identity without a mesh node).
  void finish_palette(bool written, const glm::mat4& mesh_model = glm::mat4(1.0f));
  // The last finish_palette() was told the palette was not written (reset by present()).
  bool palette_refused() const { return palette_refused_; }
  bool skeleton_validated() const { return skeleton_validated_; }

  PresentMode mode() const { return mode_; }
  bool correcting() const { return correcting_; }
  // True when the last present() evaluated a render-time recipe (kInterpolate, kExtrapolate
  // or kStalled from recipes).
  bool recipe() const { return recipe_; }
  uint64_t recipe_frames() const { return recipe_frames_; }
  RecipeMiss recipe_miss() const { return recipe_miss_; }
  std::span<const Transform> locals() const { return shown_; }
  std::span<const glm::mat4> palette() const { return palette_; }
  // The mesh node's model-space matrix of the pose palette() was computed from
  // (LocalToModelJob's bits; identity without a mesh node): where the skinned mesh sits.
  const glm::mat4& mesh_model() const { return mesh_model_; }
  // How far past the newest sample the last present() extrapolated (0 unless extrapolating).
  int64_t extrapolated_us() const { return extrapolated_us_; }
  uint64_t corrections() const { return corrections_; }
  // Frames whose source equalled the last frame's, so the last palette was kept (counted
  // within the frames present() returned true for).
  uint64_t reused_frames() const { return reused_frames_; }

 private:
  // Where a frame's target pose comes from. Two frames with equal sources (and the same
  // skeleton and clips) have bit-identical targets: the jobs are pure functions of these.
  struct Source {
    enum class Kind : uint8_t { kNone, kSample, kRecipe, kInterpolate, kExtrapolate };
    Kind kind = Kind::kNone;
    const PoseSample* a = nullptr;  // kSample: the sample; kInterpolate/kExtrapolate: older
    const PoseSample* b = nullptr;  // kInterpolate/kExtrapolate: newer
    uint32_t tick_a = 0;
    uint32_t tick_b = 0;
    float param = 0.0f;  // interpolation t or extrapolation s
    RotationBlend rotation = RotationBlend::kSlerp;
    // kRecipe: the recipe at the frame's time is PoseTrack::recipe_slots_[recipe_slot]. An
    // index, not the recipe (368 bytes, built twice and copied once a frame: about 1 % of a
    // client frame's instructions), nor a pointer (a PoseTrack may move).
    uint8_t recipe_slot = 0;
    const Clip* clips = nullptr;  // kRecipe: the clips it names
    const Skeleton* skeleton = nullptr;
    // `slots`: the owning PoseTrack's recipe_slots_.
    bool same_as(const Source& other, const protocol::PoseRecipe* slots) const;
  };

  // A frame's plan, chosen from the window before any pose is computed (plan_frame()).
  // present()'s steps below are defined inline in pose_track.cpp, their only user, so the
  // compiler folds them back into present(): out of line they cost about 2 % more
  // instructions per frame (scripts/icount.sh on bench_client's BM_PresentEntity).
  struct FramePlan {
    PresentMode mode = PresentMode::kNone;
    uint32_t before_tick = 0;  // the basis: ticks of the samples the frame derives from
    uint32_t after_tick = 0;
    Source pose_source;    // the samples' pose
    Source recipe_source;  // the recipe at the frame's time, where recipe_candidate
    bool try_recipes = false;       // settings and RecipeSource allow recipes
    bool recipe_candidate = false;  // the pair qualified: recipe_source holds its recipe
    SampleRef recipe_a, recipe_b;   // the pair a recipe target comes from
    int64_t recipe_limit_us = 0;    // how far that pair is followed (the extrapolation bound)
    // Set by compute_target():
    bool recipe = false;     // the target came from the recipe
    bool continues = false;  // continuous with the last frame (no correction to start)
    bool fading = false;     // the target went to the scratch, for a fade into shown_
  };
  enum class PlanOutcome : uint8_t {
    kPlanned,
    kMismatch,  // a sample the frame uses has another node count: nothing changes
    kEmpty,     // the window holds no sample
  };
  inline PlanOutcome plan_frame(const Skeleton& skeleton, const SampleWindow& window,
                                int64_t render_us, const PresentSettings& settings,
                                const RecipeSource& recipes, FramePlan& plan);
  inline PlanOutcome plan_between(const SampleWindow& window, int64_t render_us,
                                  const PresentSettings& settings, const RecipeSource& recipes,
                                  FramePlan& plan);
  inline PlanOutcome plan_past_newest(const SampleWindow& window, int64_t render_us,
                                      const PresentSettings& settings,
                                      const RecipeSource& recipes, FramePlan& plan);
  // A pose derived from the pair (older, newer) at `param` (interpolation t or extrapolation
  // s), and the pair's recipe at `recipe_us` where it qualifies.
  inline void plan_derived(Source::Kind kind, const SampleRef& older, const SampleRef& newer,
                           float param, int64_t recipe_us, const RecipeSource& recipes,
                           FramePlan& plan);
  // `ref` shown as it is: the basis is its tick alone.
  inline void plan_exact(const SampleRef& ref, FramePlan& plan);
  bool sample_fits(const SampleRef& ref) const {
    return ref.sample->locals.size() == shown_.size();
  }
  protocol::PoseRecipe& frame_recipe(const FramePlan& plan) {
    return recipe_slots_[plan.recipe_source.recipe_slot];
  }

  enum class TargetOutcome : uint8_t {
    kComputed,  // the target is in shown_ (or the scratch when plan.fading)
    kReused,    // the last frame's source: shown_ and palette_ already hold it
    kFailed,    // the pose source could not be computed
  };
  inline TargetOutcome compute_target(FramePlan& plan, const Skeleton& skeleton,
                                      const RecipeSource& recipes, PresentScratch& work);
  // Captures the jump from the last frame's pose to the new source into delta_.
  inline void start_correction(const FramePlan& plan, const Skeleton& skeleton,
                               const RecipeSource& recipes, PresentScratch& work,
                               std::span<const Transform> target, int64_t render_us);
  inline void fade_into_shown(std::span<const Transform> target, bool fading,
                              const PresentSettings& settings, int64_t render_us);
  // LocalToModelJob and PaletteJob on shown_ into palette_ and mesh_model_; false when they
  // refuse the skeleton.
  inline bool write_palette(const Skeleton& skeleton, PresentScratch& work);

  bool continues_from_last(PresentMode mode, uint32_t before_tick, uint32_t after_tick,
                           bool recipe) const;
  // Records what the frame at render_us showed (its mode, basis ticks and whether a recipe),
  // which the next present() compares against.
  void note_frame(PresentMode mode, int64_t render_us, bool recipe, uint32_t before_tick,
                  uint32_t after_tick);
  // What a frame needs from a pair of samples, copied out of them once per pair: the samples
  // sit in the snapshot buffer's pool, spread over megabytes, and three frames in a row use
  // the same pair (60 Hz frames, 20 Hz snapshots). Keyed by sample address and tick: the
  // buffer's sample for an (entity, tick) is written once and never changes while it is held,
  // and pool growth, which moves samples, only makes the key miss.
  struct PairInfo {
    const PoseSample* a = nullptr;
    const PoseSample* b = nullptr;
    uint32_t tick_a = 0;
    uint32_t tick_b = 0;
    bool fits = false;      // both have node_count locals
    bool has_recipes = false;  // both carry a recipe (count > 0)
    bool verified = false;  // both recipe_verified (recipes usable)
    protocol::PoseRecipe recipe_a;
    protocol::PoseRecipe recipe_b;
  };
  const PairInfo& pair_info(const SampleRef& a, const SampleRef& b);
  // The recipe at render_us from samples a (older) and b into `at`; false when the pair does
  // not qualify (not both own verified records, or recipe_at_time refuses them); sets miss_.
  bool recipe_between(const SampleRef& a, const SampleRef& b, int64_t render_us,
                      const RecipeSource& recipes, protocol::PoseRecipe& at);
  // Writes the source's pose into `out` (node_count), computing a deferred sample's codes
  // first (PoseSample::decoded). Fails, writing nothing, for a recipe the jobs refuse
  // (SampleJob and BlendJob write nothing then) or a deferred sample whose prediction fails.
  bool compute(const Source& source, const Skeleton& skeleton, const RecipeSource& recipes,
               PresentScratch& scratch, std::span<Transform> out);

  std::vector<Transform> shown_;   // the target plus the fading correction: last frame's pose
  std::vector<Transform> delta_;   // the correction captured at correction_start_us_
  sim::RecipeEvaluator evaluator_;  // this entity's clip sampling (cursors kept between frames)
  std::vector<glm::mat4> palette_;
  bool palette_pending_ = false;    // present(defer_palette) left palette_ to the caller
  bool palette_refused_ = false;    // finish_palette(false) since the last present()
  PresentScratch own_scratch_;     // empty with external_scratch
  Source last_source_;             // the source of the palette in palette_ (kNone: none valid)
  // Recipes of Sources: a frame's target goes into the slot (0 or 1) last_source_ does not
  // use, so the two can be compared without a copy; slot 2 is the target at the last frame's
  // time (a correction's start).
  protocol::PoseRecipe recipe_slots_[3];
  PairInfo pair_;                  // the last pair of samples looked at

  PresentMode mode_ = PresentMode::kNone;
  bool skeleton_validated_ = false;
  uint32_t before_tick_ = 0;  // basis of the last frame
  uint32_t after_tick_ = 0;
  bool correcting_ = false;
  bool recipe_ = false;  // the last frame's target came from a recipe
  uint64_t recipe_frames_ = 0;
  RecipeMiss recipe_miss_ = RecipeMiss::kNone;  // of the last present()
  RecipeMiss miss_ = RecipeMiss::kNone;         // of the last recipe_between()
  int64_t last_render_us_ = 0;  // render time of the last present()
  int64_t correction_start_us_ = 0;
  int64_t extrapolated_us_ = 0;
  uint64_t corrections_ = 0;
  uint64_t reused_frames_ = 0;
  // The mesh node's model matrix of palette_'s pose. Last: read once a frame, after the rest.
  glm::mat4 mesh_model_{1.0f};
};

}  // namespace posecast::client
