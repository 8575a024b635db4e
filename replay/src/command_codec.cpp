#include "posecast/replay/command_codec.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace posecast::replay {
namespace {

using namespace posecast::sim;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

CommandKind kind_of(const CommandBody& body) {
  return std::visit(
      Overloaded{[](const SpawnCommand&) { return CommandKind::kSpawn; },
                 [](const DespawnCommand&) { return CommandKind::kDespawn; },
                 [](const PlayCommand&) { return CommandKind::kPlay; },
                 [](const CrossfadeCommand&) { return CommandKind::kCrossfade; },
                 [](const SetSpeedCommand&) { return CommandKind::kSetSpeed; },
                 [](const SetLayerWeightCommand&) { return CommandKind::kSetLayerWeight; },
                 [](const SetMaskCommand&) { return CommandKind::kSetMask; },
                 [](const SetBlendWeightsCommand&) { return CommandKind::kSetBlendWeights; },
                 [](const SetLayerModeCommand&) { return CommandKind::kSetLayerMode; }},
      body);
}

// motion = u8 count  u8 wrap  svarint speed  svarint start_offset_us
//          { varint clip  f32 weight }[min(count, kMaxBlendClips)]
void write_motion(ByteWriter& w, const MotionSpec& m) {
  w.u8(m.count);
  w.u8(static_cast<uint8_t>(m.wrap));
  w.svarint(m.speed);
  w.svarint(m.start_offset_us);
  const int n = std::min<int>(m.count, kMaxBlendClips);
  for (int i = 0; i < n; ++i) {
    w.varint(m.clips[static_cast<std::size_t>(i)].clip);
    w.f32(m.clips[static_cast<std::size_t>(i)].weight);
  }
}

void read_motion(ByteReader& r, MotionSpec& m) {
  m.count = r.u8("body.motion.count");
  m.wrap = static_cast<WrapMode>(r.u8("body.motion.wrap"));
  const int64_t speed = r.svarint("body.motion.speed");
  if (speed < std::numeric_limits<SpeedQ16>::min() || speed > std::numeric_limits<SpeedQ16>::max()) {
    r.fail("body.motion.speed", std::to_string(speed) + " does not fit 32 bits");
  }
  m.speed = static_cast<SpeedQ16>(speed);
  m.start_offset_us = r.svarint("body.motion.start_offset_us");
  const int n = std::min<int>(m.count, kMaxBlendClips);
  for (int i = 0; i < n; ++i) {
    ClipWeight& c = m.clips[static_cast<std::size_t>(i)];
    c.clip = static_cast<uint16_t>(r.varint("body.motion.clips.clip", 0xFFFF));
    c.weight = r.f32("body.motion.clips.weight");
  }
}

uint8_t read_layer(ByteReader& r) { return r.u8("body.layer"); }

int32_t read_i32(ByteReader& r, const char* field) {
  const int64_t v = r.svarint(field);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    r.fail(field, std::to_string(v) + " does not fit 32 bits");
    return 0;
  }
  return static_cast<int32_t>(v);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_motion(const MotionSpec& a, const MotionSpec& b) {
  if (a.count != b.count || a.wrap != b.wrap || a.speed != b.speed ||
      a.start_offset_us != b.start_offset_us) {
    return false;
  }
  const int n = std::min<int>(a.count, kMaxBlendClips);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (a.clips[k].clip != b.clips[k].clip || !same_bits(a.clips[k].weight, b.clips[k].weight)) return false;
  }
  return true;
}

}  // namespace

void encode_command(ByteWriter& w, uint32_t submitter, const Command& command, uint64_t apply_tick) {
  w.u8(static_cast<uint8_t>(kind_of(command.body)));
  w.varint(submitter);
  w.varint(command.entity);
  w.varint(apply_tick >= command.tick ? apply_tick - command.tick : 0);
  std::visit(Overloaded{[&](const SpawnCommand& c) {
                          w.varint(c.model);
                          w.varint(c.rig);
                        },
                        [&](const DespawnCommand&) {},
                        [&](const PlayCommand& c) {
                          w.u8(c.layer);
                          write_motion(w, c.motion);
                        },
                        [&](const CrossfadeCommand& c) {
                          w.u8(c.layer);
                          write_motion(w, c.motion);
                          w.svarint(c.duration_us);
                          w.u8(c.sync_phase ? 1 : 0);
                        },
                        [&](const SetSpeedCommand& c) {
                          w.u8(c.layer);
                          w.svarint(c.speed);
                        },
                        [&](const SetLayerWeightCommand& c) {
                          w.u8(c.layer);
                          w.f32(c.weight);
                        },
                        [&](const SetMaskCommand& c) {
                          w.u8(c.layer);
                          w.svarint(c.mask);
                        },
                        [&](const SetBlendWeightsCommand& c) {
                          w.u8(c.layer);
                          w.u8(c.count);
                          const int n = std::min<int>(c.count, kMaxBlendClips);
                          for (int i = 0; i < n; ++i) w.f32(c.weights[static_cast<std::size_t>(i)]);
                        },
                        [&](const SetLayerModeCommand& c) {
                          w.u8(c.layer);
                          w.u8(static_cast<uint8_t>(c.mode));
                          w.svarint(c.reference_clip);
                          w.svarint(c.reference_time_us);
                        }},
             command.body);
}

bool decode_command(ByteReader& r, uint64_t apply_tick, RecordedCommand& out) {
  const uint8_t kind = r.u8("kind");
  out.submitter = static_cast<uint32_t>(r.varint("submitter", std::numeric_limits<uint32_t>::max()));
  Command& c = out.command;
  c.entity = static_cast<EntityId>(r.varint("entity", std::numeric_limits<EntityId>::max()));
  const uint64_t lateness = r.varint("lateness", apply_tick);
  c.tick = apply_tick - lateness;
  if (!r.ok()) return false;
  switch (static_cast<CommandKind>(kind)) {
    case CommandKind::kSpawn: {
      SpawnCommand s;
      s.model = static_cast<ModelId>(r.varint("body.model", std::numeric_limits<ModelId>::max()));
      s.rig = static_cast<uint16_t>(r.varint("body.rig", 0xFFFF));
      c.body = s;
      break;
    }
    case CommandKind::kDespawn:
      c.body = DespawnCommand{};
      break;
    case CommandKind::kPlay: {
      PlayCommand p;
      p.layer = read_layer(r);
      read_motion(r, p.motion);
      c.body = p;
      break;
    }
    case CommandKind::kCrossfade: {
      CrossfadeCommand x;
      x.layer = read_layer(r);
      read_motion(r, x.motion);
      x.duration_us = r.svarint("body.duration_us");
      const uint8_t sync = r.u8("body.sync_phase");
      if (sync > 1) r.fail("body.sync_phase", std::to_string(sync) + " is not 0 or 1");
      x.sync_phase = sync == 1;
      c.body = x;
      break;
    }
    case CommandKind::kSetSpeed: {
      SetSpeedCommand s;
      s.layer = read_layer(r);
      s.speed = read_i32(r, "body.speed");
      c.body = s;
      break;
    }
    case CommandKind::kSetLayerWeight: {
      SetLayerWeightCommand s;
      s.layer = read_layer(r);
      s.weight = r.f32("body.weight");
      c.body = s;
      break;
    }
    case CommandKind::kSetMask: {
      SetMaskCommand s;
      s.layer = read_layer(r);
      s.mask = read_i32(r, "body.mask");
      c.body = s;
      break;
    }
    case CommandKind::kSetBlendWeights: {
      SetBlendWeightsCommand s;
      s.layer = read_layer(r);
      s.count = r.u8("body.count");
      const int n = std::min<int>(s.count, kMaxBlendClips);
      for (int i = 0; i < n; ++i) s.weights[static_cast<std::size_t>(i)] = r.f32("body.weights");
      c.body = s;
      break;
    }
    case CommandKind::kSetLayerMode: {
      SetLayerModeCommand s;
      s.layer = read_layer(r);
      s.mode = static_cast<LayerMode>(r.u8("body.mode"));
      s.reference_clip = read_i32(r, "body.reference_clip");
      s.reference_time_us = r.svarint("body.reference_time_us");
      c.body = s;
      break;
    }
    default:
      r.fail("kind", std::to_string(kind) + " is not a command kind (1..9)");
      return false;
  }
  return r.ok();
}

bool same_command(const Command& a, const Command& b) {
  if (a.tick != b.tick || a.entity != b.entity || a.body.index() != b.body.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b.body);
        if constexpr (std::is_same_v<T, SpawnCommand>) {
          return x.model == y.model && x.rig == y.rig;
        } else if constexpr (std::is_same_v<T, DespawnCommand>) {
          return true;
        } else if constexpr (std::is_same_v<T, PlayCommand>) {
          return x.layer == y.layer && same_motion(x.motion, y.motion);
        } else if constexpr (std::is_same_v<T, CrossfadeCommand>) {
          return x.layer == y.layer && same_motion(x.motion, y.motion) &&
                 x.duration_us == y.duration_us && x.sync_phase == y.sync_phase;
        } else if constexpr (std::is_same_v<T, SetSpeedCommand>) {
          return x.layer == y.layer && x.speed == y.speed;
        } else if constexpr (std::is_same_v<T, SetLayerWeightCommand>) {
          return x.layer == y.layer && same_bits(x.weight, y.weight);
        } else if constexpr (std::is_same_v<T, SetMaskCommand>) {
          return x.layer == y.layer && x.mask == y.mask;
        } else if constexpr (std::is_same_v<T, SetBlendWeightsCommand>) {
          if (x.layer != y.layer || x.count != y.count) return false;
          const int n = std::min<int>(x.count, kMaxBlendClips);
          for (int i = 0; i < n; ++i) {
            if (!same_bits(x.weights[static_cast<std::size_t>(i)], y.weights[static_cast<std::size_t>(i)])) return false;
          }
          return true;
        } else {
          return x.layer == y.layer && x.mode == y.mode && x.reference_clip == y.reference_clip &&
                 x.reference_time_us == y.reference_time_us;
        }
      },
      a.body);
}

}  // namespace posecast::replay
