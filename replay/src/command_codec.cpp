#include "posecast/replay/command_codec.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace posecast::replay {
namespace {

using namespace posecast::sim;

// motion = u8 count  u8 wrap  u8 root_motion  svarint speed  svarint start_offset_us
//          { varint clip  f32 weight }[min(count, kMaxBlendClips)]
void write_motion(ByteWriter& w, const MotionSpec& m) {
  w.u8(m.count);
  w.u8(static_cast<uint8_t>(m.wrap));
  w.u8(m.root_motion ? 1 : 0);
  w.svarint(m.speed);
  w.svarint(m.start_offset_us);
  const int n = std::min<int>(m.count, kMaxBlendClips);
  for (int i = 0; i < n; ++i) {
    w.varint(m.clips[static_cast<std::size_t>(i)].clip);
    w.f32(m.clips[static_cast<std::size_t>(i)].weight);
  }
}

int32_t read_i32(ByteReader& r, const char* field) {
  const int64_t v = r.svarint(field);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    r.fail(field, std::to_string(v) + " does not fit 32 bits");
    return 0;
  }
  return static_cast<int32_t>(v);
}

void read_motion(ByteReader& r, MotionSpec& m) {
  m.count = r.u8("body.motion.count");
  m.wrap = static_cast<WrapMode>(r.u8("body.motion.wrap"));
  const uint8_t root_motion = r.u8("body.motion.root_motion");
  if (root_motion > 1) r.fail("body.motion.root_motion", std::to_string(root_motion) + " is not 0 or 1");
  m.root_motion = root_motion == 1;
  m.speed = read_i32(r, "body.motion.speed");
  m.start_offset_us = r.svarint("body.motion.start_offset_us");
  const int n = std::min<int>(m.count, kMaxBlendClips);
  for (int i = 0; i < n; ++i) {
    ClipWeight& c = m.clips[static_cast<std::size_t>(i)];
    c.clip = static_cast<uint16_t>(r.varint("body.motion.clips.clip", 0xFFFF));
    c.weight = r.f32("body.motion.clips.weight");
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_motion(const MotionSpec& a, const MotionSpec& b) {
  if (a.count != b.count || a.wrap != b.wrap || a.speed != b.speed ||
      a.start_offset_us != b.start_offset_us || a.root_motion != b.root_motion) {
    return false;
  }
  const int n = std::min<int>(a.count, kMaxBlendClips);
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (a.clips[k].clip != b.clips[k].clip || !same_bits(a.clips[k].weight, b.clips[k].weight)) return false;
  }
  return true;
}

// The field kinds a command body is made of. Each writes, reads (checking what fits the
// member) and compares (floats by their bits) one member `C::*m` of a command struct C.

// An unsigned integer as a varint; reading fails above the member type's maximum.
template <class C, class T>
struct Varint {
  const char* name;
  T C::*m;
  void write(ByteWriter& w, const C& c) const { w.varint(c.*m); }
  void read(ByteReader& r, C& c) const {
    c.*m = static_cast<T>(r.varint(name, std::numeric_limits<T>::max()));
  }
  bool same(const C& a, const C& b) const { return a.*m == b.*m; }
};

// A signed integer (int32_t or int64_t) as a zigzag varint; an int32_t that does not fit
// fails.
template <class C, class T>
struct Svarint {
  const char* name;
  T C::*m;
  void write(ByteWriter& w, const C& c) const { w.svarint(c.*m); }
  void read(ByteReader& r, C& c) const {
    if constexpr (std::is_same_v<T, int32_t>) {
      c.*m = read_i32(r, name);
    } else {
      c.*m = r.svarint(name);
    }
  }
  bool same(const C& a, const C& b) const { return a.*m == b.*m; }
};

// A byte: uint8_t, or an enum stored as its value (kept as it was, valid or not).
template <class C, class T>
struct Byte {
  const char* name;
  T C::*m;
  void write(ByteWriter& w, const C& c) const { w.u8(static_cast<uint8_t>(c.*m)); }
  void read(ByteReader& r, C& c) const { c.*m = static_cast<T>(r.u8(name)); }
  bool same(const C& a, const C& b) const { return a.*m == b.*m; }
};

// A bool as a byte, 0 or 1.
template <class C>
struct Flag {
  const char* name;
  bool C::*m;
  void write(ByteWriter& w, const C& c) const { w.u8(c.*m ? 1 : 0); }
  void read(ByteReader& r, C& c) const {
    const uint8_t v = r.u8(name);
    if (v > 1) r.fail(name, std::to_string(v) + " is not 0 or 1");
    c.*m = v == 1;
  }
  bool same(const C& a, const C& b) const { return a.*m == b.*m; }
};

template <class C>
struct F32 {
  const char* name;
  float C::*m;
  void write(ByteWriter& w, const C& c) const { w.f32(c.*m); }
  void read(ByteReader& r, C& c) const { c.*m = r.f32(name); }
  bool same(const C& a, const C& b) const { return same_bits(a.*m, b.*m); }
};

// A RootTransform as f32 x, y, z, yaw (kept as they are, valid or not).
template <class C>
struct Root {
  RootTransform C::*m;
  void write(ByteWriter& w, const C& c) const {
    const RootTransform& t = c.*m;
    w.f32(t.x);
    w.f32(t.y);
    w.f32(t.z);
    w.f32(t.yaw);
  }
  void read(ByteReader& r, C& c) const {
    RootTransform& t = c.*m;
    t.x = r.f32("body.at.x");
    t.y = r.f32("body.at.y");
    t.z = r.f32("body.at.z");
    t.yaw = r.f32("body.at.yaw");
  }
  bool same(const C& a, const C& b) const {
    const RootTransform& x = a.*m;
    const RootTransform& y = b.*m;
    return same_bits(x.x, y.x) && same_bits(x.y, y.y) && same_bits(x.z, y.z) && same_bits(x.yaw, y.yaw);
  }
};

template <class C>
struct Motion {
  MotionSpec C::*m;
  void write(ByteWriter& w, const C& c) const { write_motion(w, c.*m); }
  void read(ByteReader& r, C& c) const { read_motion(r, c.*m); }
  bool same(const C& a, const C& b) const { return same_motion(a.*m, b.*m); }
};

// u8 count, then min(count, kMaxBlendClips) f32 weights.
template <class C>
struct Weights {
  uint8_t C::*count;
  std::array<float, kMaxBlendClips> C::*weights;
  void write(ByteWriter& w, const C& c) const {
    w.u8(c.*count);
    for (int i = 0; i < used(c); ++i) w.f32((c.*weights)[static_cast<std::size_t>(i)]);
  }
  void read(ByteReader& r, C& c) const {
    c.*count = r.u8("body.count");
    for (int i = 0; i < used(c); ++i) (c.*weights)[static_cast<std::size_t>(i)] = r.f32("body.weights");
  }
  bool same(const C& a, const C& b) const {
    if (a.*count != b.*count) return false;
    for (int i = 0; i < used(a); ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (!same_bits((a.*weights)[k], (b.*weights)[k])) return false;
    }
    return true;
  }
  int used(const C& c) const { return std::min<int>(c.*count, kMaxBlendClips); }
};

template <class C>
constexpr Byte<C, uint8_t> layer_field(uint8_t C::*m) {
  return {"body.layer", m};
}

// The command table: per command, its stored kind code and its body's fields in stored order.
// Encoding, decoding and comparison all follow it, so a new command is one entry here (and
// its CommandKind); a variant alternative without an entry does not compile.
template <class C>
struct CommandFormat;

template <>
struct CommandFormat<SpawnCommand> {
  static constexpr CommandKind kind = CommandKind::kSpawn;
  static constexpr auto fields = std::make_tuple(
      Varint<SpawnCommand, ModelId>{"body.model", &SpawnCommand::model},
      Varint<SpawnCommand, uint16_t>{"body.rig", &SpawnCommand::rig},
      Root<SpawnCommand>{&SpawnCommand::at});
};
template <>
struct CommandFormat<DespawnCommand> {
  static constexpr CommandKind kind = CommandKind::kDespawn;
  static constexpr auto fields = std::make_tuple();
};
template <>
struct CommandFormat<PlayCommand> {
  static constexpr CommandKind kind = CommandKind::kPlay;
  static constexpr auto fields = std::make_tuple(layer_field(&PlayCommand::layer),
                                                 Motion<PlayCommand>{&PlayCommand::motion});
};
template <>
struct CommandFormat<CrossfadeCommand> {
  using C = CrossfadeCommand;
  static constexpr CommandKind kind = CommandKind::kCrossfade;
  static constexpr auto fields = std::make_tuple(
      layer_field(&C::layer), Motion<C>{&C::motion},
      Svarint<C, int64_t>{"body.duration_us", &C::duration_us},
      Flag<C>{"body.sync_phase", &C::sync_phase});
};
template <>
struct CommandFormat<SetSpeedCommand> {
  using C = SetSpeedCommand;
  static constexpr CommandKind kind = CommandKind::kSetSpeed;
  static constexpr auto fields =
      std::make_tuple(layer_field(&C::layer), Svarint<C, SpeedQ16>{"body.speed", &C::speed});
};
template <>
struct CommandFormat<SetLayerWeightCommand> {
  using C = SetLayerWeightCommand;
  static constexpr CommandKind kind = CommandKind::kSetLayerWeight;
  static constexpr auto fields =
      std::make_tuple(layer_field(&C::layer), F32<C>{"body.weight", &C::weight});
};
template <>
struct CommandFormat<SetMaskCommand> {
  using C = SetMaskCommand;
  static constexpr CommandKind kind = CommandKind::kSetMask;
  static constexpr auto fields =
      std::make_tuple(layer_field(&C::layer), Svarint<C, int32_t>{"body.mask", &C::mask});
};
template <>
struct CommandFormat<SetBlendWeightsCommand> {
  using C = SetBlendWeightsCommand;
  static constexpr CommandKind kind = CommandKind::kSetBlendWeights;
  static constexpr auto fields =
      std::make_tuple(layer_field(&C::layer), Weights<C>{&C::count, &C::weights});
};
template <>
struct CommandFormat<SetLayerModeCommand> {
  using C = SetLayerModeCommand;
  static constexpr CommandKind kind = CommandKind::kSetLayerMode;
  static constexpr auto fields = std::make_tuple(
      layer_field(&C::layer), Byte<C, LayerMode>{"body.mode", &C::mode},
      Svarint<C, int32_t>{"body.reference_clip", &C::reference_clip},
      Svarint<C, int64_t>{"body.reference_time_us", &C::reference_time_us});
};

template <>
struct CommandFormat<TeleportCommand> {
  using C = TeleportCommand;
  static constexpr CommandKind kind = CommandKind::kTeleport;
  static constexpr auto fields = std::make_tuple(F32<C>{"body.x", &C::x}, F32<C>{"body.z", &C::z},
                                                 F32<C>{"body.yaw", &C::yaw});
};
template <>
struct CommandFormat<MoveCommand> {
  using C = MoveCommand;
  static constexpr CommandKind kind = CommandKind::kMove;
  static constexpr auto fields = std::make_tuple(F32<C>{"body.speed", &C::speed},
                                                 F32<C>{"body.turn_rate", &C::turn_rate});
};
template <>
struct CommandFormat<MoveToCommand> {
  using C = MoveToCommand;
  static constexpr CommandKind kind = CommandKind::kMoveTo;
  static constexpr auto fields =
      std::make_tuple(F32<C>{"body.x", &C::x}, F32<C>{"body.z", &C::z},
                      F32<C>{"body.speed", &C::speed}, Flag<C>{"body.queue", &C::queue});
};

static_assert(std::is_same_v<SpeedQ16, int32_t>, "SetSpeed's speed is stored as an int32");

template <class C>
void write_body(ByteWriter& w, const C& c) {
  std::apply([&](const auto&... f) { (f.write(w, c), ...); }, CommandFormat<C>::fields);
}

template <class C>
CommandBody read_body(ByteReader& r) {
  C c;
  std::apply([&](const auto&... f) { (f.read(r, c), ...); }, CommandFormat<C>::fields);
  return c;
}

template <class C>
bool same_body(const C& a, const C& b) {
  return std::apply([&](const auto&... f) { return (f.same(a, b) && ...); },
                    CommandFormat<C>::fields);
}

CommandKind kind_of(const CommandBody& body) {
  return std::visit([](const auto& c) { return CommandFormat<std::decay_t<decltype(c)>>::kind; },
                    body);
}

// The body of the command whose kind code is `kind`; nullopt for an unknown code.
template <std::size_t... I>
std::optional<CommandBody> read_body_of_kind(uint8_t kind, ByteReader& r,
                                             std::index_sequence<I...>) {
  std::optional<CommandBody> body;
  // The first kind that matches reads the body; || stops there.
  static_cast<void>(
      ((static_cast<uint8_t>(CommandFormat<std::variant_alternative_t<I, CommandBody>>::kind) == kind
            ? (body = read_body<std::variant_alternative_t<I, CommandBody>>(r), true)
            : false) ||
       ...));
  return body;
}

constexpr std::size_t kCommandKinds = std::variant_size_v<CommandBody>;

// The stored codes are 1..kCommandKinds, each once (decode_command's message names the range).
template <std::size_t... I>
constexpr bool kinds_are_one_to_n(std::index_sequence<I...>) {
  constexpr uint8_t codes[] = {
      static_cast<uint8_t>(CommandFormat<std::variant_alternative_t<I, CommandBody>>::kind)...};
  for (std::size_t k = 1; k <= sizeof...(I); ++k) {
    int n = 0;
    for (uint8_t code : codes) n += code == k ? 1 : 0;
    if (n != 1) return false;
  }
  return true;
}
static_assert(kinds_are_one_to_n(std::make_index_sequence<kCommandKinds>{}));

}  // namespace

void encode_command(ByteWriter& w, uint32_t submitter, const Command& command, uint64_t apply_tick) {
  w.u8(static_cast<uint8_t>(kind_of(command.body)));
  w.varint(submitter);
  w.varint(command.entity);
  w.varint(apply_tick >= command.tick ? apply_tick - command.tick : 0);
  std::visit([&](const auto& c) { write_body(w, c); }, command.body);
}

bool decode_command(ByteReader& r, uint64_t apply_tick, RecordedCommand& out) {
  const uint8_t kind = r.u8("kind");
  out.submitter = static_cast<uint32_t>(r.varint("submitter", std::numeric_limits<uint32_t>::max()));
  Command& c = out.command;
  c.entity = static_cast<EntityId>(r.varint("entity", std::numeric_limits<EntityId>::max()));
  const uint64_t lateness = r.varint("lateness", apply_tick);
  c.tick = apply_tick - lateness;
  if (!r.ok()) return false;
  std::optional<CommandBody> body =
      read_body_of_kind(kind, r, std::make_index_sequence<kCommandKinds>{});
  if (!body) {
    r.fail("kind", std::to_string(kind) + " is not a command kind (1.." +
                       std::to_string(kCommandKinds) + ")");
    return false;
  }
  c.body = std::move(*body);
  return r.ok();
}

bool same_command(const Command& a, const Command& b) {
  if (a.tick != b.tick || a.entity != b.entity || a.body.index() != b.body.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using C = std::decay_t<decltype(x)>;
        return same_body(x, std::get<C>(b.body));
      },
      a.body);
}

}  // namespace posecast::replay
