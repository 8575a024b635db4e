#pragma once
// The posecast wire messages as plain C++ structs, and their (de)serialisation.
//
// Every datagram is one message (protocol/schemas/posecast_messages.fbs, FlatBuffers); the
// generated types never leave protocol/src. decode_message() treats its input as hostile: it
// runs the FlatBuffers Verifier with depth and table limits and range-checks every enum,
// index and size, so any byte string yields a message or an Error naming the field, never a
// crash or an out-of-bounds read.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "posecast/result.h"

namespace posecast::protocol {

// Carried in ClientHello and Welcome; peers with different versions do not talk.
// Version 2 added SessionStatus (ownership, replay position) and ReplayControl.
// Version 3 changed the pose codec's range-coded records (docs/codec.md: zigzag residuals,
// low bits in a side stream, "axes as expected" and "side stream omitted" flags).
// Version 4 changed range-coded pose records twice over: residuals are coded with static
// per-context symbol tables instead of adaptive unary bins (residual_tables.h), and the recipe
// carries crossfades, motion speeds and wraps and the steady time (docs/codec.md
// "Clip-dictionary prediction").
// Version 5 changed the recipe's frozen source into a chain of up to three frozen mixes (fades
// interrupted again, fades in from the rest pose; docs/codec.md).
// Version 6: the clip dictionary predicts without axis hysteresis (a prediction is a function
// of its recipe alone) and a record equal to its prediction says so in one flag and sends no
// body ("exact"; docs/codec.md), so a receiver may defer computing its codes.
// Version 7: each record carries its entity's root transform (root_size bytes before the pose
// codec's, in the top bits of pose_size; root_coding.h), and ClientCommand gains Move, MoveTo
// and Teleport (x, z, yaw, speed, turn_rate).
// Version 8: HitQuery (a client fires a ray at its view time) and HitResult (hit, miss or
// refused; docs/hit-queries.md); AnimationEvents (server -> client, repeated until
// acknowledged) and Ack::events_received (docs/events.md); a record's root bytes follow root
// coding v8 (root_coding.h: implied velocities, one Exp-Golomb order per record).
// Version 9: ClientCommand::apply_tick (the tick a predicting client applied the command at)
// and OwnerState (an owned entity's exact state for reconciliation; docs/client.md).
inline constexpr uint16_t kProtocolVersion = 9;
// Largest datagram posecast sends (fits the 1280-byte IPv6 minimum MTU with headers to spare).
inline constexpr std::size_t kMaxPacketBytes = 1200;
// decode_message() refuses anything larger before looking at it.
inline constexpr std::size_t kMaxDecodeBytes = 64 * 1024;
// Snapshot ticks meaning "no baseline".
inline constexpr uint32_t kNoTick = 0xFFFFFFFFu;
// Strings on the wire are at most this long (names, sources, reasons).
inline constexpr std::size_t kMaxStringBytes = 256;
// A Welcome lists at most this many assets.
inline constexpr std::size_t kMaxAssets = 256;

enum class DisconnectReason : uint8_t {
  kUnspecified = 0,
  kClientLeft,
  kTimeout,
  kProtocolMismatch,
  kServerFull,
  kBadChallenge,
  kAssetMismatch,
  kKicked,
  kServerShutdown,
  kMalformedTraffic,
};
inline constexpr uint8_t kDisconnectReasonCount = 10;

enum class CommandOp : uint8_t {
  kPlay = 0,        // start `clip` on `layer` at clip time `time_us`
  kCrossfade,       // fade the layer to `clip` over `time_us`
  kSetSpeed,        // `value` = speed in 1/65536
  kSetLayerWeight,  // `value` = weight in 1/65536
  kStop,            // stop `layer`
  kSeek,            // set the layer's clip time to `time_us`
  kMove,            // walk forward at `speed` units/s turning at `turn_rate` rad/s (0, 0: stand)
  kMoveTo,          // walk to (`x`, `z`) at `speed` units/s, then stand
  kTeleport,        // stand at (`x`, `z`) facing `yaw` radians
};
inline constexpr uint8_t kCommandOpCount = 9;

const char* to_string(DisconnectReason reason);
const char* to_string(CommandOp op);

struct ClientHello {
  uint16_t protocol_version = kProtocolVersion;
  uint64_t client_nonce = 0;
  std::string client_name;  // <= kMaxStringBytes
  bool operator==(const ClientHello&) const = default;
};

struct ServerChallenge {
  uint64_t client_nonce = 0;
  uint64_t challenge_token = 0;
  bool operator==(const ServerChallenge&) const = default;
};

struct ChallengeResponse {
  uint64_t client_nonce = 0;
  uint64_t challenge_token = 0;
  bool operator==(const ChallengeResponse&) const = default;
};

struct AssetInfo {
  uint32_t model_id = 0;
  uint64_t content_hash = 0;
  uint16_t joint_count = 0;
  std::string source;  // <= kMaxStringBytes
  bool operator==(const AssetInfo&) const = default;
};

struct Welcome {
  uint16_t protocol_version = kProtocolVersion;
  uint32_t client_id = 0;
  uint16_t tick_rate_hz = 60;
  uint16_t send_rate_hz = 20;
  uint32_t server_tick = 0;
  std::vector<AssetInfo> assets;  // <= kMaxAssets
  bool operator==(const Welcome&) const = default;
};

// A record's bytes are at most this many (root and pose; 11 bits of the wire's pose_size).
inline constexpr std::size_t kMaxRecordBytes = 2047;

// One entity's record in a snapshot: `root_size` bytes of root transform coding (root_coding.h;
// 0: the receiver's prediction holds), then the pose codec's bytes (pose_codec.h).
struct EntityPose {
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  std::vector<uint8_t> pose;  // root bytes then pose bytes, <= kMaxRecordBytes (and must fit a packet)
  uint8_t root_size = 0;      // <= kMaxRootBytes and <= pose.size()
  std::span<const uint8_t> root_bytes() const { return {pose.data(), root_size}; }
  std::span<const uint8_t> pose_bytes() const {
    return std::span<const uint8_t>(pose).subspan(root_size);
  }
  bool operator==(const EntityPose&) const = default;
};

// Poses of one server tick. `baseline_tick`, `prior_tick` and `older_tick` name the snapshots
// (newest first, each older than the one before) the receiver already holds that the records
// are coded against (kNoTick: none, and then none of the older ones; see PoseReference).
// A snapshot split over several packets repeats the header in each part; every part holds
// whole records and decodes alone.
struct Snapshot {
  uint32_t server_tick = 0;
  uint32_t baseline_tick = kNoTick;
  uint32_t prior_tick = kNoTick;
  uint32_t older_tick = kNoTick;
  uint8_t part_index = 0;  // < part_count
  uint8_t part_count = 1;  // >= 1
  std::vector<EntityPose> entities;
  // Round-trip echo: an Ack's echo_us and the server's time holding it (us); 0 = none.
  uint32_t ack_echo_us = 0;
  uint32_t ack_hold_us = 0;
  bool operator==(const Snapshot&) const = default;
};

// Newest snapshot tick received; bit i of previous_mask: tick newest_tick - 1 - i received.
struct Ack {
  uint32_t newest_tick = 0;
  uint32_t previous_mask = 0;
  uint32_t echo_us = 0;  // the client's clock at sending (us mod 2^32), 0 = no echo wanted
  // Every animation event sequence up to this one has arrived (0: none); docs/events.md.
  uint32_t events_received = 0;
  bool operator==(const Ack&) const = default;
};

// One animation event (docs/events.md; sim::AnimationEvent on the wire).
struct WireEvent {
  uint32_t tick = 0;        // session tick (the snapshot tick whose pose shows the crossing)
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  uint16_t clip = 0;        // clip index in the entity's rig
  uint16_t marker = 0;      // marker index in that clip (Clip::markers)
  uint8_t layer = 0;
  uint8_t weight_q8 = 0;    // the clip's share of the pose, 0..255 for 0..1
  float x = 0.0f, z = 0.0f;  // where the entity stood
  bool operator==(const WireEvent&) const = default;
};
// An AnimationEvents message carries at most this many (24 bytes each: it fits one datagram).
inline constexpr std::size_t kMaxEventsPerMessage = 40;

// Events numbered first_sequence, first_sequence + 1, ...: a client's events are numbered from
// 1 without gaps, repeated until acked (Ack::events_received).
struct AnimationEvents {
  uint32_t first_sequence = 1;  // >= 1
  std::vector<WireEvent> events;  // 1..kMaxEventsPerMessage
  bool operator==(const AnimationEvents&) const = default;
};

struct ClientCommand {
  uint32_t sequence = 0;
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  CommandOp op = CommandOp::kPlay;
  int16_t clip = -1;    // clip index in the entity's rig, -1 for none
  uint8_t layer = 0;
  int64_t time_us = 0;  // fade duration or clip time, per op
  int32_t value = 0;    // 16.16 fixed point, per op
  // Movement ops (model units, radians; finite: decode_message refuses NaN and infinities, the
  // server refuses values out of the World's ranges).
  float x = 0.0f, z = 0.0f, yaw = 0.0f;
  float speed = 0.0f, turn_rate = 0.0f;
  // The session tick the client applied the command at in its prediction (docs/client.md,
  // "Prediction"); the server applies it at that tick when it arrives in time, at its arrival
  // tick when late, and refuses it when further ahead than its lead limit. 0: at arrival.
  uint32_t apply_tick = 0;
  bool operator==(const ClientCommand&) const = default;
};

struct EntitySpawn {
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  uint32_t model_id = 0;
  uint16_t rig_index = 0;
  uint32_t tick = 0;
  bool operator==(const EntitySpawn&) const = default;
};

struct EntityDespawn {
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  uint32_t tick = 0;
  bool operator==(const EntityDespawn&) const = default;
};

struct Disconnect {
  DisconnectReason reason = DisconnectReason::kUnspecified;
  std::string message;  // <= kMaxStringBytes
  bool operator==(const Disconnect&) const = default;
};

// SessionStatus lists at most this many owned entities.
inline constexpr std::size_t kMaxOwnedListed = 64;

// What this client may command and, in a replay session, where playback is. Repeated by the
// server (docs/session.md); the newest received (by server_tick) is current.
struct SessionStatus {
  uint32_t server_tick = 0;
  std::vector<uint32_t> owned;          // entity ids, <= kMaxOwnedListed
  uint32_t replay_first_tick = kNoTick;  // kNoTick: a live session (then all replay_* unused)
  uint32_t replay_last_tick = kNoTick;
  uint32_t replay_tick = kNoTick;        // the recording tick now shown
  int32_t replay_speed_q16 = 65536;      // 16.16; 0 while paused
  bool is_replay() const { return replay_first_tick != kNoTick; }
  bool operator==(const SessionStatus&) const = default;
};

enum class ReplayAction : uint8_t {
  kPause = 0,
  kResume,
  kStep,      // while paused: advance `ticks` ticks (1 when 0)
  kSeek,      // to recording tick `tick`
  kSetSpeed,  // `speed_q16` (16.16), in (0, kMaxReplaySpeedQ16]
};
inline constexpr uint8_t kReplayActionCount = 5;
inline constexpr int32_t kMaxReplaySpeedQ16 = 64 * 65536;
const char* to_string(ReplayAction action);

struct ReplayControl {
  uint32_t sequence = 0;
  ReplayAction action = ReplayAction::kPause;
  uint32_t tick = 0;
  uint32_t ticks = 0;
  int32_t speed_q16 = 0;
  bool operator==(const ReplayControl&) const = default;
};

// A shot (docs/hit-queries.md): a ray at the client's view time (server microseconds on the
// session ticks' clock, sim::tick_start_us). The floats are passed through as sent, NaN
// included: the server refuses a bad ray with a HitResult (and counts it), not as a
// malformed datagram.
struct HitQuery {
  uint32_t sequence = 0;
  float origin_x = 0, origin_y = 0, origin_z = 0;
  float direction_x = 0, direction_y = 0, direction_z = 1;
  float length = 0;
  int64_t view_us = 0;
  bool operator==(const HitQuery&) const = default;
};

enum class HitOutcome : uint8_t { kMiss = 0, kHit, kRefused };
inline constexpr uint8_t kHitOutcomeCount = 3;
// HitResult::refusal values (server::HitRefusal's): 0 none .. 4 disabled.
inline constexpr uint8_t kHitRefusalCount = 5;
// "none", "bad_ray", "no_right", "rate_limited", "disabled" (the metrics' reason labels); "?"
// beyond.
const char* hit_refusal_name(uint8_t refusal);

struct HitResult {
  uint32_t sequence = 0;  // the HitQuery's
  HitOutcome outcome = HitOutcome::kMiss;
  uint8_t refusal = 0;    // < kHitRefusalCount; nonzero only when refused
  uint32_t entity_id = 0;
  uint16_t joint = 0;
  float distance = 0;
  int64_t view_us = 0;
  bool clamped = false;
  bool operator==(const HitResult&) const = default;
};

// OwnerState::state holds at most this many bytes (a snapshot part's datagram must fit beside it).
inline constexpr std::size_t kMaxOwnerStateBytes = 900;

// The exact state of an entity this client owns after session tick `server_tick`
// (sim::World::entity_snapshot bytes, checked by sim::World::restore_entity, not here) and the
// newest command sequence of this client that the server had applied or refused by then.
struct OwnerState {
  uint32_t server_tick = 0;
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  uint32_t applied_sequence = 0;
  std::vector<uint8_t> state;  // 1..kMaxOwnerStateBytes
  bool operator==(const OwnerState&) const = default;
};

using Message = std::variant<ClientHello, ServerChallenge, ChallengeResponse, Welcome, Snapshot,
                             Ack, ClientCommand, EntitySpawn, EntityDespawn, Disconnect,
                             SessionStatus, ReplayControl, HitQuery, HitResult,
                             AnimationEvents, OwnerState>;

// Serialises one message. Fails (naming the field) when a field does not fit the wire: a
// string over kMaxStringBytes, too many assets, a pose over 65535 bytes, more than 65535
// records, part_index >= part_count. Does not enforce kMaxPacketBytes: use
// encode_snapshot_packets() (snapshot_packets.h) for snapshots.
Result<std::vector<uint8_t>> encode_message(const Message& message);
// encode_message(Snapshot) of `header` with `entities` as its records (header.entities is not
// read): the same bytes, without copying the records into a Message first.
Result<std::vector<uint8_t>> encode_snapshot(const Snapshot& header,
                                             std::span<const EntityPose> entities);

// The Message alternative (its index()) that bytes made by encode_message() or
// encode_snapshot() hold, read from the envelope's payload type without decoding the rest;
// nullopt when the bytes are not a posecast envelope. Trusted input only (what this process
// encoded; counting what it sends): it does not verify the buffer, decode_message() does.
std::optional<std::size_t> encoded_message_kind(std::span<const uint8_t> bytes);

// Parses one datagram. Any input (empty, truncated, random, malicious) gives a Message or an
// Error such as "message: snapshot: records[3]: pose bytes run past the pose data".
Result<Message> decode_message(std::span<const uint8_t> bytes);

// Success when a peer's protocol version equals kProtocolVersion, else an Error saying both
// versions (the text to put in Disconnect::message).
Status check_protocol_version(uint16_t peer_version);

}  // namespace posecast::protocol
