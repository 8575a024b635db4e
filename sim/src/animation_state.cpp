#include "posecast/sim/animation_state.h"

#include <algorithm>

#include "posecast/model.h"
#include "posecast/sim/commands.h"
#include "world_tables.h"

namespace posecast::sim {

const char* to_string(WrapMode mode) {
  switch (mode) {
    case WrapMode::kLoop:
      return "loop";
    case WrapMode::kClamp:
      return "clamp";
    case WrapMode::kPingPong:
      return "ping_pong";
  }
  return "?";
}

const char* to_string(LayerMode mode) {
  switch (mode) {
    case LayerMode::kOverride:
      return "override";
    case LayerMode::kAdditive:
      return "additive";
  }
  return "?";
}

int64_t rescale_phase(int64_t phase, int64_t from_cycle, int64_t to_cycle) {
  if (from_cycle <= 0 || to_cycle <= 0) return 0;
  // Both cycles are below 2^54 (kMaxClipDurationUs << 17), so the product needs 128 bits.
  __extension__ using Int128 = __int128;
  return static_cast<int64_t>(static_cast<Int128>(phase) * to_cycle / from_cycle);
}

bool shows_base_layer_only(const EntityState& state) {
  const auto active = [](const Layer& l) {
    return (l.target.count > 0 || l.fade_source != FadeSource::kNone) && l.weight != 0.0f;
  };
  if (state.layers.empty() || !active(state.layers[0])) return false;
  for (std::size_t i = 1; i < state.layers.size(); ++i) {
    if (active(state.layers[i])) return false;
  }
  const Layer& base = state.layers[0];
  return base.mode == LayerMode::kOverride && base.weight >= 1.0f && base.mask == kNoMask;
}

bool shows_base_motion_only(const EntityState& state) {
  return shows_base_layer_only(state) && state.layers[0].fade_source == FadeSource::kNone;
}

std::size_t EntityState::byte_size() const {
  std::size_t bytes = sizeof(EntityState) + layers.capacity() * sizeof(Layer) +
                      cursors.capacity() * sizeof(uint32_t) +
                      waypoints.capacity() * sizeof(Waypoint);
  for (const Layer& layer : layers) {
    bytes += layer.frozen.capacity() * sizeof(Transform) +
             layer.frozen_chain.capacity() * sizeof(FrozenStage);
  }
  return bytes;
}

const char* command_name(const CommandBody& body) {
  struct Namer {
    const char* operator()(const SpawnCommand&) const { return "spawn"; }
    const char* operator()(const DespawnCommand&) const { return "despawn"; }
    const char* operator()(const PlayCommand&) const { return "play"; }
    const char* operator()(const CrossfadeCommand&) const { return "crossfade"; }
    const char* operator()(const SetSpeedCommand&) const { return "set_speed"; }
    const char* operator()(const SetLayerWeightCommand&) const { return "set_layer_weight"; }
    const char* operator()(const SetMaskCommand&) const { return "set_mask"; }
    const char* operator()(const SetBlendWeightsCommand&) const { return "set_blend_weights"; }
    const char* operator()(const SetLayerModeCommand&) const { return "set_layer_mode"; }
    const char* operator()(const TeleportCommand&) const { return "teleport"; }
    const char* operator()(const MoveCommand&) const { return "move"; }
    const char* operator()(const MoveToCommand&) const { return "move_to"; }
  };
  return std::visit(Namer{}, body);
}

void layout_cursors(EntityState& state, const Rig& rig) {
  uint32_t total = 0;
  const auto assign = [&](Motion& motion) {
    for (uint8_t i = 0; i < motion.count; ++i) {
      ClipSlot& slot = motion.slots[i];
      slot.cursor_offset = total;
      total += static_cast<uint32_t>(rig.clips[slot.clip].tracks.size());
    }
  };
  for (Layer& layer : state.layers) {
    assign(layer.target);
    if (layer.fade_source == FadeSource::kMotion) assign(layer.source);
  }
  state.cursors.resize(total);
  std::fill(state.cursors.begin(), state.cursors.end(), 0u);
}

}  // namespace posecast::sim
