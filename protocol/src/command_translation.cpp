// A client's ClientCommand as an animator command (docs/session.md, "Commands and authority").
// Authority is checked by the caller; this only maps the op and checks what the World would
// otherwise reject later with less context.

#include "posecast/protocol/command_translation.h"

#include <cmath>
#include <string>

#include "posecast/sim/root_transform.h"

namespace posecast::protocol {
namespace {

sim::MotionSpec single_clip(uint16_t clip, int64_t start_offset_us, sim::SpeedQ16 speed) {
  sim::MotionSpec motion;
  motion.clips[0] = sim::ClipWeight{clip, 1.0f};
  motion.count = 1;
  motion.start_offset_us = start_offset_us;
  motion.speed = speed;
  return motion;
}

bool within(float v, float limit) { return std::isfinite(v) && v >= -limit && v <= limit; }

// Move, MoveTo, Teleport: values the World would refuse are refused here with a reason (the
// World refuses them too; the World is never asked).
Result<sim::Command> translate_movement(const ClientCommand& command, const std::string& where,
                                        sim::Command out) {
  const float extent = sim::kWorldHalfExtent;
  switch (command.op) {
    case CommandOp::kMove:
      if (!(std::isfinite(command.speed) && command.speed >= 0.0f && command.speed <= sim::kMaxMoveSpeed)) {
        return Error{where + ": speed out of 0.." + std::to_string(sim::kMaxMoveSpeed)};
      }
      if (!within(command.turn_rate, sim::kMaxTurnRate)) return Error{where + ": turn rate out of range"};
      out.body = sim::MoveCommand{command.speed, command.turn_rate};
      return out;
    case CommandOp::kMoveTo:
      if (!(std::isfinite(command.speed) && command.speed > 0.0f && command.speed <= sim::kMaxMoveSpeed)) {
        return Error{where + ": speed out of (0, " + std::to_string(sim::kMaxMoveSpeed) + "]"};
      }
      if (!within(command.x, extent) || !within(command.z, extent)) return Error{where + ": target outside the world"};
      out.body = sim::MoveToCommand{command.x, command.z, command.speed, false};
      return out;
    default:  // kTeleport
      if (!within(command.x, extent) || !within(command.z, extent)) return Error{where + ": position outside the world"};
      if (!within(command.yaw, 1e6f)) return Error{where + ": yaw out of range"};
      out.body = sim::TeleportCommand{command.x, command.z, command.yaw};
      return out;
  }
}

}  // namespace

Result<sim::Command> translate_client_command(const ClientCommand& command,
                                              const sim::World& world, uint64_t tick) {
  const std::string where = "command " + std::to_string(command.sequence) + " (" +
                            to_string(command.op) + ")";
  if (command.layer >= sim::kMaxLayers) {
    return Error{where + ": layer " + std::to_string(command.layer) + " (at most " +
                 std::to_string(sim::kMaxLayers - 1) + ")"};
  }
  const sim::EntityState* state = world.find_entity(command.entity_id);
  const Rig* rig = world.entity_rig(command.entity_id);
  if (state == nullptr || rig == nullptr) return Error{where + ": unknown entity"};
  const auto clip_ok = [&](int32_t clip) { return clip >= 0 && static_cast<std::size_t>(clip) < rig->clips.size(); };
  // The layer's current speed (Seek keeps it), 1x for a layer not playing yet.
  sim::SpeedQ16 speed = sim::kSpeedOne;
  int32_t current_clip = -1;
  if (command.layer < state->layers.size()) {
    const sim::Layer& layer = state->layers[command.layer];
    speed = layer.target.speed;
    if (layer.target.count > 0) current_clip = layer.target.slots[0].clip;
  }

  sim::Command out;
  out.tick = tick;
  out.entity = command.entity_id;
  switch (command.op) {
    case CommandOp::kPlay:
      if (!clip_ok(command.clip)) return Error{where + ": clip " + std::to_string(command.clip) + " out of range"};
      out.body = sim::PlayCommand{command.layer,
                                  single_clip(static_cast<uint16_t>(command.clip), command.time_us, sim::kSpeedOne)};
      return out;
    case CommandOp::kCrossfade:
      if (!clip_ok(command.clip)) return Error{where + ": clip " + std::to_string(command.clip) + " out of range"};
      if (command.time_us < 0 || command.time_us > 60'000'000) return Error{where + ": fade duration out of 0..60 s"};
      out.body = sim::CrossfadeCommand{command.layer, single_clip(static_cast<uint16_t>(command.clip), 0, sim::kSpeedOne),
                                       command.time_us, false};
      return out;
    case CommandOp::kSetSpeed:
      if (command.value < -(64 << 16) || command.value > (64 << 16)) return Error{where + ": speed out of -64..64"};
      out.body = sim::SetSpeedCommand{command.layer, command.value};
      return out;
    case CommandOp::kSetLayerWeight:
      if (command.value < 0 || command.value > (1 << 16)) return Error{where + ": weight out of 0..1"};
      out.body = sim::SetLayerWeightCommand{command.layer, static_cast<float>(command.value) / 65536.0f};
      return out;
    case CommandOp::kStop:
      // The animator has no "stop": a layer at weight 0 contributes nothing and is skipped.
      out.body = sim::SetLayerWeightCommand{command.layer, 0.0f};
      return out;
    case CommandOp::kMove:
    case CommandOp::kMoveTo:
    case CommandOp::kTeleport:
      return translate_movement(command, where, out);
    case CommandOp::kSeek: {
      const int32_t clip = command.clip >= 0 ? command.clip : current_clip;
      if (!clip_ok(clip)) return Error{where + ": no clip to seek in"};
      out.body = sim::PlayCommand{command.layer, single_clip(static_cast<uint16_t>(clip), command.time_us, speed)};
      return out;
    }
  }
  return Error{where + ": unknown op"};
}

}  // namespace posecast::protocol
