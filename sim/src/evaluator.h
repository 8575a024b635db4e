#pragma once
// Internal: evaluation of one entity (sample -> blend -> layers -> local-to-model -> palette)
// and the advance of its playback by one tick. Pure functions of the entity's state and the
// shared tables, writing only the entity and the caller's scratch: safe to run for different
// entities on different threads, with identical bits.

#include <array>
#include <span>
#include <vector>

#include "posecast/palette_batch.h"
#include "posecast/sim/animation_event.h"
#include "posecast/sim/tick_check.h"
#include "locomotion.h"
#include "root_motion_step.h"
#include "world_tables.h"

namespace posecast::sim {

// Buffers one worker reuses for every entity it evaluates. On cache lines of its own: the
// World keeps one per worker side by side (a vector), and each worker writes its records
// (`*_sampled`, the counters) for every entity while the next worker reads its buffers' headers
// at the start of its own; unaligned (488 bytes) the two shared a line. Fox/1000 two threads,
// 9 alternating runs: medians 319 against 329 ns per entity, inside the noise of those runs.
//
// The buffers themselves are slices of two arenas that start and end on cache lines, each
// slice on a line of its own: no line holds two workers' buffers, whatever the heap held
// before. (As separate std::vectors, each its own malloc chunk, a heap recycled from an earlier
// World placed one worker's buffers between the other's, sharing lines at their ends: a second
// 2-thread World of 10,000 Fox in one process took 224 ns per entity-tick against 196 for the
// process's first, medians of 8; with the arenas 197 and 184.)
struct alignas(64) EvalScratch {
  EvalScratch() = default;
  // Moving keeps the arenas' storage, so the slices stay valid; a copy would alias them.
  EvalScratch(EvalScratch&&) noexcept = default;
  EvalScratch& operator=(EvalScratch&&) noexcept = default;
  EvalScratch(const EvalScratch&) = delete;
  EvalScratch& operator=(const EvalScratch&) = delete;

  // Pose buffers: slices of `pose_arena`, each at least the `nodes` of the last ensure().
  std::array<std::span<Transform>, kMaxBlendClips> slot_poses;
  std::span<Transform> motion;  // a crossfade's target
  std::span<Transform> layer;   // one layer's pose before it is applied
  // The final local poses of a batch of entities (evaluate_batch), one per lane.
  std::array<std::span<Transform>, kPaletteBatchSize> poses;
  std::span<float> batch_models;  // PaletteBatchJob's scratch: `model_arena`
  uint64_t poses_evaluated = 0;     // by this worker in this tick (World::tick sums them)
  // Marker crossings this worker's advances found this tick (World::tick merges them by entity).
  std::vector<AnimationEvent> events;
  uint64_t palettes_streamed = 0;   // likewise (WorldStats::palettes_streamed)
  uint64_t failures = 0;            // likewise (WorldStats::evaluation_failures)
  std::size_t entities_claimed = 0;  // in this tick's pass, own share and others' (WorkerShare)
  TickCheck check;                   // this worker's partial sums in this tick (World::tick adds them)

  // Per pose buffer above: the clip whose SampleJob last wrote it when nothing has written it
  // since, else null. Such a buffer holds the rest pose wherever that clip has no track, so
  // sampling the same clip into it again, or another clip of the rig with the same fields
  // (same_clip_fields), skips the rest-pose copy (SampleJob::output_holds_base;
  // bench_animator Fox Walk+Run: two copies saved per entity-tick).
  // Kept by evaluator.cpp's internal paths; its entry points that may write a scratch buffer
  // through a caller's span (evaluate_layer, evaluate_local_pose, frozen_chain_rebuilds_pose)
  // forget them all, and so does ensure().
  std::array<const Clip*, kMaxBlendClips> slot_sampled{};
  const Clip* motion_sampled = nullptr;
  const Clip* layer_sampled = nullptr;
  std::array<const Clip*, kPaletteBatchSize> pose_sampled{};
  void forget_sampled();

  // Grows every buffer to `nodes` entries (allocates only when growing; growing moves every
  // buffer, so no span taken from them before survives it).
  void ensure(std::size_t nodes);

 private:
  std::vector<Transform, CacheLineAllocator<Transform>> pose_arena;
  std::vector<float, CacheLineAllocator<float>> model_arena;
};

// The layer's pose at its current phases and fade into `out` (node count entries; must not be
// the layer's own `frozen`). Uses scratch.slot_poses and scratch.motion.
bool evaluate_layer(const Rig& rig, const Layer& layer, std::span<uint32_t> cursors,
                    std::span<Transform> out, EvalScratch& scratch);

// The pose a frozen chain (Layer::frozen_chain, non-empty) describes, evaluated as the layer
// evaluated it when it froze: into `out` (node count entries). False when a stage cannot be
// evaluated. Allocates.
//
// The base motion (the rest pose when it has no clip), then each later stage's motion mixed
// over it as a crossfading layer does at the stage's fade state. The stages' own cursor
// offsets are ignored (cursors never change output). Uses scratch.slot_poses, .motion and
// .layer; allocates (restore path, not per tick).
bool rebuild_frozen_pose(const Rig& rig, std::span<const FrozenStage> chain, std::vector<Transform>& out,
                         EvalScratch& scratch);
// True when `layer.frozen_chain` (non-empty) rebuilds `layer.frozen` bit for bit (above).
bool frozen_chain_rebuilds_pose(const Rig& rig, const Layer& layer, EvalScratch& scratch);

// The entity's local pose: rest, then each layer in order. Uses scratch.slot_poses, .motion and
// .layer; `out` may be one of scratch.poses.
bool evaluate_local_pose(const WorldTables& tables, EntityState& state, const Rig& rig,
                         std::span<Transform> out, EvalScratch& scratch);

// Asks the cache for the heap blocks an entity's evaluation reads first (its layers and
// cursors), so that they arrive while other work runs. A hint: changes no result.
void prefetch_entity_state(const Entity& entity);

// For each of `count` (1..kPaletteBatchSize) entities sharing one rig: local pose (left in
// scratch.poses[k]) -> world matrices -> entity.palette (and its hash when `hash`), the last two
// steps for the whole batch at once (PaletteBatchJob: the same bits as one entity at a time)
// and only when `compute_palettes` (`hash` needs it). Sets each entity's `failed`; a failed entity
// keeps its previous palette. `stream_palettes`: write the palettes past the caches
// (PaletteBatchJob::streaming_stores), for palettes nothing reads soon; never with `hash`
// (the hash reads them right after: they must stay in the cache for it).
void evaluate_batch(const WorldTables& tables, Entity* const* entities, std::size_t count,
                    EvalScratch& scratch, bool compute_palettes, bool hash, bool stream_palettes);

// Advances every phase and crossfade of the entity by dt_us of world time; ends finished fades;
// moves its root by layer 0's root motion over that advance (root_motion_step.h), then steers
// it (locomotion.h). Appends to `events` (when not null) every marker the advance crossed on a
// clip at kEventWeightThreshold or more, stamped with `tick` (docs/events.md).
// Inline: most entities take its short path (one layer, no crossfade, no markers to look
// for), which the World's pass then calls without a call in between.
void advance_entity_layers(EntityState& state, const Rig& rig, int64_t dt_us, std::vector<AnimationEvent>* events,
                           uint64_t tick);  // the general path
inline void advance_entity(EntityState& state, const Rig& rig, int64_t dt_us,
                           std::vector<AnimationEvent>* events = nullptr, uint64_t tick = 0) {
  if (state.layers.size() == 1 && state.layers[0].fade_source == FadeSource::kNone && events == nullptr) {
    advance_plain_motion(state, rig, dt_us);  // what the general path does here, alpha 1
    if (state.locomotion.mode != LocomotionMode::kNone) step_locomotion(state, rig, dt_us);
    return;
  }
  advance_entity_layers(state, rig, dt_us, events, tick);
}

// The markers of `clip` that a playhead crosses moving from wrapped phase `from` by `delta`
// (phase units, unwrapped; negative: backwards) under `wrap`: forwards [from, from + delta),
// backwards (from + delta, from]; a clamped playhead that reaches an end crosses a marker there.
// Writes to `out` (kMaxClipMarkers entries) the index of every marker crossed, once each
// however many loops the advance spans, in the order the playhead meets them; returns how
// many.
std::size_t find_marker_crossings(const Clip& clip, WrapMode wrap, int64_t from, int64_t delta,
                                  std::span<uint16_t, kMaxClipMarkers> out);

}  // namespace posecast::sim
