#pragma once
// Per-entity animation state: small, plain data, no pointers into assets. The immutable assets
// (Model: skeleton and clips) are shared by every entity and referenced by index; what an
// entity owns is which clips play, their phases, speeds and weights, its crossfades, and one
// sampling cursor per track of each playing clip. See docs/determinism.md for the time rules.

#include <array>
#include <cstdint>
#include <vector>

#include "posecast/sim/playback_time.h"
#include "posecast/sim/root_transform.h"
#include "posecast/transform.h"

namespace posecast::sim {

using EntityId = uint32_t;
using ModelId = uint32_t;
inline constexpr int32_t kNoMask = -1;
inline constexpr int32_t kRestReference = -1;  // additive reference: the skeleton's rest pose

// A layer plays one clip or a weighted blend of up to this many.
inline constexpr int kMaxBlendClips = 4;
// Layers per entity, evaluated in index order (0 is the base).
inline constexpr int kMaxLayers = 4;

// One clip of a motion.
struct ClipSlot {
  int64_t phase = 0;        // wrapped (playback_time.h), microseconds * 2^16
  float weight = 1.0f;      // blend weight within the motion, finite, >= 0
  uint16_t clip = 0;        // index into the entity's Rig::clips
  uint16_t reserved = 0;    // keeps the struct padding-free
  uint32_t cursor_offset = 0;  // first sampling cursor in EntityState::cursors (derived)
  uint32_t reserved2 = 0;
};
static_assert(sizeof(ClipSlot) == 24, "ClipSlot stays small and padding-free");

// What a layer plays: 1..kMaxBlendClips clips sharing a speed and a wrap mode, each with its own
// phase and blend weight (count 0: nothing).
struct Motion {
  std::array<ClipSlot, kMaxBlendClips> slots{};
  SpeedQ16 speed = kSpeedOne;
  uint8_t count = 0;
  WrapMode wrap = WrapMode::kLoop;
  // 1: on layer 0 its clips' root motion moves the entity (docs/movement.md); 0: it does not.
  uint8_t root_motion = 1;
  // 1: phase-synced (locomotion's blends): slot 0 advances at `speed` and every other slot
  // follows at slot 0's normalised phase (rescale_phase), so walk and run keep their feet
  // together. Evaluation is the same either way; only the advance differs.
  uint8_t sync = 0;
};
static_assert(sizeof(Motion) == 4 * sizeof(ClipSlot) + 8, "Motion stays padding-free");

// Where a crossfading layer fades from.
enum class FadeSource : uint8_t {
  kNone = 0,        // no crossfade: the layer shows `target`
  kMotion = 1,      // `source` keeps playing while it fades out
  kFrozenPose = 2,  // `frozen`: the pose the layer showed when a crossfade was interrupted
};
inline constexpr uint8_t kFadeSourceCount = 3;

enum class LayerMode : uint8_t {
  kOverride = 0,  // mixes over the layers below by weight * mask
  kAdditive = 1,  // adds (pose - reference) scaled by weight * mask
};
inline constexpr uint8_t kLayerModeCount = 2;
const char* to_string(LayerMode mode);

// One stage of the chain that rebuilds a frozen pose (Layer::frozen_chain): what the pose
// was evaluated from when a crossfade was interrupted (sim/src/world_commands.cpp). Stage 0 is
// the base: a motion (the interrupted fade's source, at its clip phases at the interrupting
// command's tick), or no motion (count 0) for the rest pose; its fade fields are 0. Each
// later stage is the target of a fade that was interrupted in turn, with its phases and its
// fade progress at that interrupt: evaluating the base and mixing each later stage over it at
// elapsed / duration (as the layer evaluated it) gives the frozen pose bit for bit.
// Evaluation never reads it (the frozen pose is what the layer shows); the server describes
// the frozen pose to clients with it (a frozen chain recipe, server/src/pose_recipe.cpp).
struct FrozenStage {
  Motion motion;
  int64_t fade_elapsed_us = 0;
  int64_t fade_duration_us = 0;
};
// Longest chain kept: a base and three interrupted fades (protocol::kMaxFrozenMixes mixes).
// A fourth interrupt leaves the frozen pose without a description.
inline constexpr std::size_t kMaxFrozenStages = 4;

struct Layer {
  Motion target;                  // what the layer plays (fades in during a crossfade)
  Motion source;                  // valid when fade_source == kMotion
  // Crossfade progress in integer microseconds of world time (not scaled by speed); the fade
  // weight elapsed / duration is computed fresh each tick.
  int64_t fade_elapsed_us = 0;
  int64_t fade_duration_us = 0;
  float weight = 1.0f;            // layer weight, finite
  int32_t mask = kNoMask;         // World mask id, or kNoMask (every node weight 1)
  int32_t reference = kRestReference;  // World additive reference id (additive layers)
  FadeSource fade_source = FadeSource::kNone;
  LayerMode mode = LayerMode::kOverride;
  uint8_t reserved[2] = {0, 0};
  std::vector<Transform> frozen;  // node count entries when fade_source == kFrozenPose
  // When `frozen` is known to be a chain of motions (FrozenStage: a crossfade from a motion
  // interrupted, a fade in from the rest pose, either interrupted again up to
  // kMaxFrozenStages stages), that chain; else empty: a longer chain, or a state restored from
  // a version-1 snapshot. It changes no pose, only which poses carry recipes.
  std::vector<FrozenStage> frozen_chain;
};

struct EntityState {
  EntityId id = 0;
  ModelId model = 0;
  uint16_t rig = 0;                // index into Model::rigs
  std::vector<Layer> layers;       // 0..kMaxLayers, grown when a command addresses a layer
  // Sampling cursors of every active slot (ClipSlot::cursor_offset). Output never depends on
  // their values (sampling.h), so they are not serialised: a restore starts them at 0.
  std::vector<uint32_t> cursors;
  RootTransform root;              // after this tick's commands and motion
  // The part of root.yaw that is layer 0's travelling clips' blended yaw sway over their
  // stride (docs/movement.md): root.yaw - sway is the heading the entity travels along.
  float sway = 0.0f;
  // Derived, never serialised or hashed (like the cursors): det_sin_cos of the heading last
  // used to move the entity, as bits, so that one walking straight does not evaluate it every
  // tick (sim/src/root_motion_step.cpp). All-ones bits (a NaN no heading has): none yet.
  // Beside the root: every tick reads both (then the locomotion's mode).
  uint32_t heading_bits = 0xFFFFFFFFu;
  float heading_sin = 0.0f;
  float heading_cos = 1.0f;
  Locomotion locomotion;           // steering from move / move_to (root_transform.h)
  // move_to targets queued after locomotion's current one (MoveToCommand::queue), walked in
  // order; at most kMaxWaypoints.
  WaypointQueue waypoints;

  // Bytes this state occupies, heap included (capacities, not sizes).
  std::size_t byte_size() const;
};

// Crossfade weight of the target at this tick: elapsed / duration as a float, 1 with no fade.
// Inline: every layer's advance asks, and most have no fade.
inline float fade_alpha(const Layer& layer) {
  if (layer.fade_source == FadeSource::kNone || layer.fade_duration_us <= 0) return 1.0f;
  if (layer.fade_elapsed_us >= layer.fade_duration_us) return 1.0f;
  // Computed fresh from two integers each tick (never accumulated): one correctly rounded
  // double division, then one rounding to float.
  return static_cast<float>(static_cast<double>(layer.fade_elapsed_us) /
                            static_cast<double>(layer.fade_duration_us));
}

// True when the entity's pose is exactly layer 0's motion (a clip or a plain blend of clips):
// layer 0 is the only active layer (playing, or fading, at a nonzero weight), an override at
// full weight, unmasked, not crossfading. The server attaches clip recipes to such poses
// (clients can then evaluate them themselves); anything else is not a recipe.
bool shows_base_motion_only(const EntityState& state);

// True when the entity's pose is exactly layer 0's (playing, or crossfading from a motion or a
// frozen pose): shows_base_motion_only without the "not crossfading" condition. The server
// attaches crossfade recipes to such poses when the fade's source is a motion.
bool shows_base_layer_only(const EntityState& state);

}  // namespace posecast::sim
