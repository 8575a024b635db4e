#pragma once
// Commands: the only way animation state changes. They are queued from any thread and applied
// at tick boundaries in a defined order (command_queue.h), so the same commands give the same
// world whatever thread queued them and when.

#include <array>
#include <cstdint>
#include <variant>

#include "posecast/sim/animation_state.h"

namespace posecast::sim {

// One clip of a motion to start, with its blend weight (finite, >= 0).
struct ClipWeight {
  uint16_t clip = 0;  // index into the entity's Rig::clips
  float weight = 1.0f;
};

// What Play and Crossfade start on a layer.
struct MotionSpec {
  std::array<ClipWeight, kMaxBlendClips> clips{};
  uint8_t count = 1;                 // 1..kMaxBlendClips
  WrapMode wrap = WrapMode::kLoop;
  SpeedQ16 speed = kSpeedOne;
  int64_t start_offset_us = 0;       // initial clip time (every clip), wrapped like playback
  bool root_motion = true;           // on layer 0, its clips' root motion moves the entity
};

// Creates the entity (its id must be free) in the rest pose, with no layer, standing at `at`
// (|x|, |z| <= kWorldHalfExtent, finite yaw, wrapped; y must be 0).
struct SpawnCommand {
  ModelId model = 0;
  uint16_t rig = 0;
  RootTransform at;
};
struct DespawnCommand {};
// Cuts the layer to `motion` (no fade); cancels a crossfade in progress.
struct PlayCommand {
  uint8_t layer = 0;
  MotionSpec motion;
};
// Fades the layer from what it shows now to `motion` over `duration_us` of world time.
// With sync_phase, every new clip starts at the normalised phase of the current target's first
// clip (walk <-> run without foot sliding) instead of start_offset_us. Started during another
// crossfade, the pose the layer shows at that tick is frozen and fades out (no pop).
// duration_us == 0 is a cut.
struct CrossfadeCommand {
  uint8_t layer = 0;
  MotionSpec motion;
  int64_t duration_us = 0;
  bool sync_phase = false;
};
// Speed of the layer's target motion (a fading-out source keeps its own).
struct SetSpeedCommand {
  uint8_t layer = 0;
  SpeedQ16 speed = kSpeedOne;
};
struct SetLayerWeightCommand {
  uint8_t layer = 0;
  float weight = 1.0f;  // finite
};
// mask: a World mask id for the entity's model and rig, or kNoMask.
struct SetMaskCommand {
  uint8_t layer = 0;
  int32_t mask = kNoMask;
};
// Blend weights of the target motion's clips; count must equal the motion's clip count.
struct SetBlendWeightsCommand {
  uint8_t layer = 0;
  std::array<float, kMaxBlendClips> weights{};
  uint8_t count = 0;
};
// Override or additive. An additive layer adds (its pose - reference); the reference is the
// rest pose (reference_clip < 0) or clip `reference_clip` sampled at reference_time_us.
struct SetLayerModeCommand {
  uint8_t layer = 0;
  LayerMode mode = LayerMode::kOverride;
  int32_t reference_clip = -1;
  int64_t reference_time_us = 0;
};

// Puts the entity at (x, 0, z) facing yaw (wrapped); |x|, |z| <= kWorldHalfExtent, all finite.
// Its animation and locomotion carry on from there.
struct TeleportCommand {
  float x = 0.0f;
  float z = 0.0f;
  float yaw = 0.0f;
};
// Moves forward along the facing at `speed` (0..kMaxMoveSpeed units/s), turning at
// `turn_rate` (|.| <= kMaxTurnRate rad/s): layer 0 becomes the rig's locomotion blend (idle,
// walk, run by speed, phase-synced), whose root motion carries the entity. Speed 0 and turn 0
// stands (idle). Clears queued waypoints. Refused for a rig without a walk clip with a ground
// speed. A play or crossfade on layer 0 ends locomotion.
struct MoveCommand {
  float speed = 0.0f;
  float turn_rate = 0.0f;
};
// Walks to (x, z) at `speed` (0 < speed <= kMaxMoveSpeed), turning towards it at most
// kMaxTurnRate, and stands (idle) on arrival (within the arrival radius, docs/movement.md).
// queue: walked after the current target and the waypoints already queued (at most
// kMaxWaypoints queued), at this command's speed; without it the target replaces them all.
// An entity that is not walking to a target starts on a queued one at once.
struct MoveToCommand {
  float x = 0.0f;
  float z = 0.0f;
  float speed = 0.0f;
  bool queue = false;
};

using CommandBody = std::variant<SpawnCommand, DespawnCommand, PlayCommand, CrossfadeCommand,
                                 SetSpeedCommand, SetLayerWeightCommand, SetMaskCommand,
                                 SetBlendWeightsCommand, SetLayerModeCommand, TeleportCommand,
                                 MoveCommand, MoveToCommand>;

struct Command {
  uint64_t tick = 0;      // applied at the start of this tick (or the next one, if late)
  EntityId entity = 0;
  CommandBody body;
};

// Name of the command kind ("spawn", "play", ...), as the scenario format spells it.
const char* command_name(const CommandBody& body);

}  // namespace posecast::sim
