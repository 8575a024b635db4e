#include "evaluator.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "posecast/blending.h"
#include "posecast/hash.h"
#include "posecast/palette_batch.h"
#include "posecast/sampling.h"
#include "locomotion.h"
#include "root_motion_step.h"

namespace posecast::sim {
namespace {

void copy_pose(std::span<const Transform> from, std::span<Transform> to) {
  // Transform is padding-free: a byte copy is a bit-exact copy.
  if (!from.empty()) std::memcpy(to.data(), from.data(), from.size() * sizeof(Transform));
}

// Whether a buffer that a Run() of `sampled` (or null: unknown) left holds the rest pose
// wherever `clip` has no track, so that sampling `clip` into it may skip the rest-pose copy:
// the same clip, or another clip of this rig that writes the same fields (same_clip_fields).
// A crowd playing different clips passes its scratch buffers from clip to clip:
// bench_replay's recorded minute (Fox Walk / Run / Survey, which animate the same 21 fields)
// would copy the rest pose in nearly every sample, 4 % of its tick.
bool holds_base_for(const Rig& rig, const Clip& clip, const Clip* sampled) {
  if (sampled == &clip) return true;
  if (sampled == nullptr) return false;
  // Only a clip of this rig: another rig's buffer holds that rig's rest pose. (std::less:
  // a total order even for pointers into different arrays.)
  const std::less<const Clip*> before;
  const Clip* first = rig.clips.data();
  if (before(sampled, first) || !before(sampled, first + rig.clips.size())) return false;
  return same_clip_fields(clip, *sampled);
}

// `sampled`: out's record in EvalScratch (the clip that last sampled into it, see there),
// read and updated.
bool sample_slot(const Rig& rig, const Motion& motion, const ClipSlot& slot,
                 std::span<uint32_t> cursors, std::span<Transform> out, const Clip*& sampled) {
  const Clip& clip = rig.clips[slot.clip];
  SampleJob job;
  job.skeleton = &rig.skeleton;
  job.clip = &clip;
  job.time_us = sample_time_us(slot.phase, clip.duration_us, motion.wrap);
  job.cursor = cursors.subspan(slot.cursor_offset, clip.tracks.size());
  job.output = out;
  job.assets_validated = true;  // World::add_model validated the model (validate_model)
  job.output_holds_base = holds_base_for(rig, clip, sampled);
  const bool ok = job.Run();
  sampled = ok ? &clip : nullptr;
  return ok;
}

// One motion's pose: its single clip sampled straight into `out`, or its clips blended.
// `out_sampled`: out's record in EvalScratch (a local null one for a buffer of the caller's).
bool evaluate_motion(const Rig& rig, const Motion& motion, std::span<uint32_t> cursors,
                     std::span<Transform> out, const Clip*& out_sampled, EvalScratch& scratch) {
  const std::size_t nodes = out.size();
  if (motion.count == 0) {
    copy_pose(rig.skeleton.rest, out);
    out_sampled = nullptr;
    return true;
  }
  if (motion.count == 1) return sample_slot(rig, motion, motion.slots[0], cursors, out, out_sampled);
  std::array<BlendInput, kMaxBlendClips> inputs{};
  std::size_t used = 0;
  for (uint8_t i = 0; i < motion.count; ++i) {
    const ClipSlot& slot = motion.slots[i];
    if (!(slot.weight > 0.0f)) continue;  // weight 0 contributes nothing: skip its sampling
    std::span<Transform> pose(scratch.slot_poses[i].data(), nodes);
    if (!sample_slot(rig, motion, slot, cursors, pose, scratch.slot_sampled[i])) return false;
    inputs[used++] = BlendInput{pose, slot.weight};
  }
  BlendJob blend;
  blend.inputs = std::span<const BlendInput>(inputs.data(), used);
  blend.rest = rig.skeleton.rest;
  blend.output = out;
  out_sampled = nullptr;
  return blend.Run();
}

// evaluate_layer with out's record (see evaluate_motion).
bool evaluate_layer_recorded(const Rig& rig, const Layer& layer, std::span<uint32_t> cursors,
                             std::span<Transform> out, const Clip*& out_sampled,
                             EvalScratch& scratch) {
  switch (layer.fade_source) {
    case FadeSource::kNone:
      return evaluate_motion(rig, layer.target, cursors, out, out_sampled, scratch);
    case FadeSource::kMotion:
      if (!evaluate_motion(rig, layer.source, cursors, out, out_sampled, scratch)) return false;
      break;
    case FadeSource::kFrozenPose:
      if (layer.frozen.size() != out.size()) return false;
      copy_pose(layer.frozen, out);
      out_sampled = nullptr;
      break;
  }
  const float alpha = fade_alpha(layer);
  if (!(alpha > 0.0f)) return true;  // the fade's first tick shows its source exactly
  std::span<Transform> target(scratch.motion.data(), out.size());
  if (!evaluate_motion(rig, layer.target, cursors, target, scratch.motion_sampled, scratch)) {
    return false;
  }
  OverrideBlendJob mix;
  mix.pose = out;
  mix.layer = target;
  mix.weight = alpha;
  out_sampled = nullptr;
  return mix.Run();
}

// evaluate_local_pose with out's record (see evaluate_motion).
bool evaluate_local_pose_recorded(const WorldTables& tables, EntityState& state, const Rig& rig,
                                  std::span<Transform> out, const Clip*& out_sampled,
                                  EvalScratch& scratch) {
  std::span<uint32_t> cursors(state.cursors);
  const auto active = [](const Layer& l) {
    return (l.target.count > 0 || l.fade_source != FadeSource::kNone) && l.weight != 0.0f;
  };
  std::size_t first = 0;
  // A full-weight, unmasked override base layer replaces the rest pose entirely (exactly what
  // OverrideBlendJob would compute with t >= 1), so it is evaluated straight into `out`.
  if (!state.layers.empty()) {
    const Layer& base = state.layers[0];
    if (active(base) && base.mode == LayerMode::kOverride && base.weight >= 1.0f &&
        base.mask == kNoMask) {
      if (!evaluate_layer_recorded(rig, base, cursors, out, out_sampled, scratch)) return false;
      first = 1;
    }
  }
  if (first == 0) {
    copy_pose(rig.skeleton.rest, out);
    out_sampled = nullptr;
  }
  std::span<Transform> layer_pose(scratch.layer.data(), out.size());
  for (std::size_t i = first; i < state.layers.size(); ++i) {
    const Layer& layer = state.layers[i];
    if (!active(layer)) continue;
    if (!evaluate_layer_recorded(rig, layer, cursors, layer_pose, scratch.layer_sampled, scratch)) {
      return false;
    }
    std::span<const float> mask;
    if (layer.mask != kNoMask) mask = tables.masks[static_cast<std::size_t>(layer.mask)].node_weights;
    out_sampled = nullptr;
    if (layer.mode == LayerMode::kOverride) {
      OverrideBlendJob job;
      job.pose = out;
      job.layer = layer_pose;
      job.weight = layer.weight;
      job.mask = mask;
      if (!job.Run()) return false;
    } else {
      AdditiveBlendJob job;
      job.pose = out;
      job.additive = layer_pose;
      job.reference = layer.reference == kRestReference
                          ? std::span<const Transform>(rig.skeleton.rest)
                          : std::span<const Transform>(
                                tables.references[static_cast<std::size_t>(layer.reference)].pose);
      job.weight = layer.weight;
      job.mask = mask;
      if (!job.Run()) return false;
    }
  }
  return true;
}

}  // namespace

void EvalScratch::forget_sampled() {
  slot_sampled.fill(nullptr);
  motion_sampled = nullptr;
  layer_sampled = nullptr;
  pose_sampled.fill(nullptr);
}

void EvalScratch::ensure(std::size_t nodes) {
  forget_sampled();  // conservative: a grown buffer is a new one
  if (slot_poses[0].size() < nodes) {
    // Each slice spans whole cache lines: a multiple of lcm(64, 40) = 320 bytes.
    constexpr std::size_t kLineAndTransform = 5 * kCacheLineBytes;
    static_assert(kLineAndTransform % sizeof(Transform) == 0);
    const std::size_t lines = (nodes * sizeof(Transform) + kLineAndTransform - 1) / kLineAndTransform;
    const std::size_t stride = lines * (kLineAndTransform / sizeof(Transform));
    constexpr std::size_t kBuffers = kMaxBlendClips + 2 + kPaletteBatchSize;
    pose_arena.assign(stride * kBuffers, Transform{});
    std::size_t next = 0;
    const auto slice = [&](std::span<Transform>& buffer) {
      buffer = std::span<Transform>(pose_arena.data() + next, stride);
      next += stride;
    };
    for (std::span<Transform>& buffer : slot_poses) slice(buffer);
    slice(motion);
    slice(layer);
    for (std::span<Transform>& buffer : poses) slice(buffer);
  }
  constexpr std::size_t kLineFloats = kCacheLineBytes / sizeof(float);
  const std::size_t floats = (PaletteBatchJob::scratch_floats(nodes) + kLineFloats - 1) / kLineFloats * kLineFloats;
  if (batch_models.size() < floats) {
    model_arena.assign(floats, 0.0f);
    batch_models = model_arena;
  }
}

bool evaluate_layer(const Rig& rig, const Layer& layer, std::span<uint32_t> cursors,
                    std::span<Transform> out, EvalScratch& scratch) {
  // `out` may be a scratch buffer (the World's commands pass scratch.layer): its record, and
  // any other, is unknown before and after.
  scratch.forget_sampled();
  const Clip* out_sampled = nullptr;
  const bool ok = evaluate_layer_recorded(rig, layer, cursors, out, out_sampled, scratch);
  scratch.forget_sampled();
  return ok;
}

bool rebuild_frozen_pose(const Rig& rig, std::span<const FrozenStage> chain, std::vector<Transform>& out,
                         EvalScratch& scratch) {
  const std::size_t nodes = rig.skeleton.node_count();
  if (chain.empty()) return false;
  scratch.ensure(nodes);
  std::size_t tracks = 0;
  for (const Clip& clip : rig.clips) tracks = std::max(tracks, clip.tracks.size());
  std::vector<uint32_t> cursors(tracks, 0u);
  const auto own_cursors = [](Motion m) {  // every slot on the one cursor block above
    for (ClipSlot& slot : m.slots) slot.cursor_offset = 0;
    return m;
  };
  // The chain so far, as the frozen source of a crossfading layer fading to the next stage.
  Layer step;
  step.fade_source = FadeSource::kFrozenPose;
  step.frozen.resize(nodes);
  const Clip* frozen_sampled = nullptr;  // step.frozen is not a scratch buffer
  if (!evaluate_motion(rig, own_cursors(chain[0].motion), cursors, step.frozen, frozen_sampled, scratch)) {
    return false;
  }
  std::span<Transform> next(scratch.layer.data(), nodes);
  for (std::size_t k = 1; k < chain.size(); ++k) {
    const FrozenStage& stage = chain[k];
    step.target = own_cursors(stage.motion);
    step.fade_elapsed_us = stage.fade_elapsed_us;
    step.fade_duration_us = stage.fade_duration_us;
    if (!evaluate_layer(rig, step, cursors, next, scratch)) return false;
    copy_pose(next, step.frozen);
  }
  out = std::move(step.frozen);
  return true;
}

bool frozen_chain_rebuilds_pose(const Rig& rig, const Layer& layer, EvalScratch& scratch) {
  const std::size_t nodes = rig.skeleton.node_count();
  if (layer.frozen_chain.empty() || layer.frozen.size() != nodes) return false;
  std::vector<Transform> rebuilt;
  if (!rebuild_frozen_pose(rig, layer.frozen_chain, rebuilt, scratch)) return false;
  return std::memcmp(rebuilt.data(), layer.frozen.data(), nodes * sizeof(Transform)) == 0;
}

bool evaluate_local_pose(const WorldTables& tables, EntityState& state, const Rig& rig,
                         std::span<Transform> out, EvalScratch& scratch) {
  scratch.forget_sampled();  // as evaluate_layer: `out` may be any buffer
  const Clip* out_sampled = nullptr;
  const bool ok = evaluate_local_pose_recorded(tables, state, rig, out, out_sampled, scratch);
  scratch.forget_sampled();
  return ok;
}

namespace {

// Asks the cache for [data, data + bytes), line by line, to be read. A hint only: no effect
// on any result.
void prefetch_bytes(const void* data, std::size_t bytes) {
  constexpr std::size_t kLine = 64;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t offset = 0; offset < bytes; offset += kLine) __builtin_prefetch(p + offset);
}

}  // namespace

void prefetch_entity_state(const Entity& entity) {
  prefetch_bytes(entity.state.layers.data(), entity.state.layers.size() * sizeof(Layer));
  prefetch_bytes(entity.state.cursors.data(), entity.state.cursors.size() * sizeof(uint32_t));
}

void evaluate_batch(const WorldTables& tables, Entity* const* entities, std::size_t count,
                    EvalScratch& scratch, bool compute_palettes, bool hash,
                    bool stream_palettes) {
  const Rig& rig = *entities[0]->rig;
  const std::size_t nodes = rig.skeleton.node_count();
  std::array<std::span<const Transform>, kPaletteBatchSize> locals;
  std::array<std::span<glm::mat4>, kPaletteBatchSize> palettes;
  std::array<std::size_t, kPaletteBatchSize> lane_entity;  // batch lane -> index in `entities`
  std::size_t lanes = 0;
  // With many entities (N = 10,000 Fox: some 20 MB of state and palettes a tick), an
  // entity's heap blocks are cache misses, each on the evaluation's chain. So the next
  // entity's layers and cursors are requested while this one evaluates (the caller requests
  // the first one's, prefetch_entity_state). Fox Walk+Run at N = 10,000: 0.78-0.85 of the
  // time per entity. Prefetching the palettes too (24
  // lines each, to be written) gained no more than the noise.
  for (std::size_t k = 0; k < count; ++k) {
    Entity& entity = *entities[k];
    if (k + 1 < count) prefetch_entity_state(*entities[k + 1]);
    std::span<Transform> pose(scratch.poses[k].data(), nodes);
    entity.failed = !evaluate_local_pose_recorded(tables, entity.state, rig, pose,
                                                  scratch.pose_sampled[k], scratch);
    if (entity.failed) continue;
    locals[lanes] = pose;
    palettes[lanes] = entity.palette;
    lane_entity[lanes++] = k;
  }
  if (compute_palettes && lanes > 0) {
    PaletteBatchJob job;
    job.skeleton = &rig.skeleton;
    job.locals = std::span(locals).first(lanes);
    job.palettes = std::span(palettes).first(lanes);
    job.scratch = scratch.batch_models;
    job.assets_validated = true;  // World::add_model validated the skeleton
    job.streaming_stores = stream_palettes;
    const uint32_t written = job.Run();
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      if ((written & (1u << lane)) == 0) entities[lane_entity[lane]]->failed = true;
    }
  }
  // A failed entity keeps its previous palette; its hash still covers what it shows.
  if (hash) {
    for (std::size_t k = 0; k < count; ++k) entities[k]->palette_hash = hash_palette(entities[k]->palette);
  }
}

std::size_t find_marker_crossings(const Clip& clip, WrapMode wrap, int64_t from, int64_t delta,
                                  std::span<uint16_t, kMaxClipMarkers> out) {
  const std::size_t count = std::min(clip.markers.size(), kMaxClipMarkers);
  if (delta == 0 || count == 0) return 0;
  const int64_t period = clip.duration_us << kPhaseFractionBits;
  const int64_t cycle = cycle_length(clip.duration_us, wrap);
  // Distance along the path to each marker crossed, to order them as the playhead meets them.
  std::array<int64_t, kMaxClipMarkers> distance{};
  std::size_t found = 0;
  const auto add = [&](std::size_t marker, int64_t along) {
    std::size_t at = found++;
    for (; at > 0 && distance[at - 1] > along; --at) {  // insertion: few markers per tick
      distance[at] = distance[at - 1];
      out[at] = out[at - 1];
    }
    distance[at] = along;
    out[at] = static_cast<uint16_t>(marker);
  };
  if (wrap == WrapMode::kClamp) {
    const int64_t to = std::clamp<int64_t>(from + delta, 0, period);
    for (std::size_t m = 0; m < count; ++m) {
      const int64_t point = clip.markers[m].time_us << kPhaseFractionBits;
      const bool crossed = delta > 0 ? (from <= point && (point < to || (to == period && point == period && from < period)))
                                     : (point <= from && (point > to || (to == 0 && point == 0 && from > 0)));
      if (crossed) add(m, delta > 0 ? point - from : from - point);
    }
    return found;
  }
  if (cycle == 0) return 0;
  // Loop and ping-pong: a marker sits at its time in the cycle (a loop's end is its start) and,
  // for ping-pong, also where the way back passes it; each such point is crossed when the
  // nearest copy of it along the path lies within the path.
  for (std::size_t m = 0; m < count; ++m) {
    const int64_t time = clip.markers[m].time_us << kPhaseFractionBits;
    int64_t points[2] = {time % cycle, (cycle - time) % cycle};
    const int distinct = wrap == WrapMode::kPingPong && points[1] != points[0] ? 2 : 1;
    int64_t best = -1;
    for (int k = 0; k < distinct; ++k) {
      const int64_t point = points[k];
      int64_t along = 0;
      if (delta > 0) {
        along = point >= from ? point - from : point + cycle - from;
        if (along >= delta) continue;
      } else {
        along = point <= from ? from - point : from + cycle - point;
        if (along >= -delta) continue;
      }
      if (best < 0 || along < best) best = along;
    }
    if (best >= 0) add(m, best);
  }
  return found;
}

namespace {

// The markers one motion's advance crossed (slot phases before it in `before`), for the slots
// whose share of the pose, `weight` x their share of the blend, is at the threshold.
void collect_motion_events(const Rig& rig, const Motion& before, const Motion& after, int64_t dt_us,
                           float weight, const EntityState& state, uint8_t layer, uint64_t tick,
                           std::vector<AnimationEvent>& events) {
  if (after.count == 0 || !(weight >= kEventWeightThreshold)) return;
  float total = 0.0f;
  for (uint8_t i = 0; i < after.count; ++i)
    if (after.slots[i].weight > 0.0f) total += after.slots[i].weight;
  if (!(total > 0.0f)) return;
  std::array<uint16_t, kMaxClipMarkers> crossed;
  for (uint8_t i = 0; i < after.count; ++i) {
    const ClipSlot& slot = after.slots[i];
    const Clip& clip = rig.clips[slot.clip];
    if (clip.markers.empty() || before.slots[i].clip != slot.clip) continue;
    const float share = weight * (slot.weight / total);
    if (!(share >= kEventWeightThreshold)) continue;
    // The unwrapped path: dt x speed for a slot that advances on its own; a synced follower
    // moved from its phase to its new one the way its leader went (wrapping at most once).
    int64_t delta = dt_us * after.speed;
    if (after.sync != 0 && i > 0) {
      const int64_t cycle = cycle_length(clip.duration_us, after.wrap);
      delta = slot.phase - before.slots[i].phase;
      if (after.wrap != WrapMode::kClamp && cycle > 0) {
        if (after.speed > 0 && delta < 0) delta += cycle;
        if (after.speed < 0 && delta > 0) delta -= cycle;
      }
      if (after.speed == 0) delta = 0;
    }
    const std::size_t n = find_marker_crossings(clip, after.wrap, before.slots[i].phase, delta, crossed);
    for (std::size_t k = 0; k < n; ++k) {
      AnimationEvent event;
      event.tick = tick;
      event.entity = state.id;
      event.clip = slot.clip;
      event.marker = crossed[k];
      event.layer = layer;
      event.weight = share;
      event.x = state.root.x;
      event.z = state.root.z;
      events.push_back(event);
    }
  }
}

bool motion_has_markers(const Rig& rig, const Motion& motion) {
  for (uint8_t i = 0; i < motion.count; ++i)
    if (!rig.clips[motion.slots[i].clip].markers.empty()) return true;
  return false;
}

// Where one motion's advance reports its events: the list (null: none are collected) and what
// collect_motion_events needs besides the motion.
struct EventSink {
  std::vector<AnimationEvent>* events;
  const EntityState& state;
  uint8_t layer;
  uint64_t tick;
};

// advance_motion, then the markers that advance crossed at `shown` (collect_motion_events).
// The phases before the advance are copied only when a clip of the motion has markers: a
// Motion is 104 bytes, and most motions have none. Always inlined: it runs for every motion of
// every entity each tick, and a call costs about a tenth of the whole advance.
[[gnu::always_inline]] inline void advance_and_collect(const Rig& rig, Motion& motion, int64_t dt_us,
                                                     RootMotionSum* moved, float alpha, float shown,
                                                     const EventSink& sink) {
  if (sink.events == nullptr || !motion_has_markers(rig, motion)) {
    advance_motion(rig, motion, dt_us, moved, alpha);
    return;
  }
  const Motion before = motion;
  advance_motion(rig, motion, dt_us, moved, alpha);
  collect_motion_events(rig, before, motion, dt_us, shown, sink.state, sink.layer, sink.tick, *sink.events);
}

}  // namespace

void advance_entity_layers(EntityState& state, const Rig& rig, int64_t dt_us, std::vector<AnimationEvent>* events,
                           uint64_t tick) {
  // Layer 0's root motion over this advance, weighted as this tick evaluated the layer: the
  // target by the fade's alpha, a fading-out motion by 1 - alpha (a frozen pose moves nothing).
  RootMotionSum delta;
  bool base = true;
  uint8_t index = 0;
  for (Layer& layer : state.layers) {
    const EventSink sink{events, state, index++, tick};
    const float fade = fade_alpha(layer);
    const float alpha = base ? fade : 0.0f;
    RootMotionSum* moved = base ? &delta : nullptr;
    base = false;
    const float shown = layer.fade_source == FadeSource::kNone ? 1.0f : fade;
    advance_and_collect(rig, layer.target, dt_us, moved, alpha, layer.weight * shown, sink);
    if (layer.fade_source == FadeSource::kNone) continue;
    if (layer.fade_source == FadeSource::kMotion) {
      advance_and_collect(rig, layer.source, dt_us, moved, 1.0f - alpha, layer.weight * (1.0f - fade), sink);
    }
    layer.fade_elapsed_us += dt_us;
    if (layer.fade_elapsed_us >= layer.fade_duration_us) {
      // The target now has weight 1: drop the source. Its cursors stay allocated (unused) until
      // the next command relays them out; the frozen pose keeps its capacity (no free per tick).
      layer.fade_source = FadeSource::kNone;
      layer.source.count = 0;
      layer.fade_elapsed_us = 0;
      layer.fade_duration_us = 0;
      layer.frozen.clear();
      layer.frozen_chain.clear();
    }
  }
  apply_root_motion(state, delta);
  if (state.locomotion.mode != LocomotionMode::kNone) step_locomotion(state, rig, dt_us);
}

}  // namespace posecast::sim
