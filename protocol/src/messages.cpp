// Message adapters: plain structs <-> FlatBuffers (posecast_messages.fbs). The generated header
// is included here only.

#include "posecast/protocol/messages.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "posecast/protocol/root_coding.h"
#include "posecast_messages_generated.h"

namespace posecast::protocol {
namespace {

namespace fb = flatbuffers;
namespace w = posecast::wire;

// A record's wire size field: its byte count in the low 11 bits, its root bytes above.
constexpr unsigned kRecordSizeBits = 11;
static_assert(kMaxRecordBytes == (1u << kRecordSizeBits) - 1 && kMaxRootBytes < (1u << (16 - kRecordSizeBits)));
uint16_t pack_record_size(std::size_t size, std::size_t root_size) {
  return static_cast<uint16_t>(size | (root_size << kRecordSizeBits));
}

// Verifier limits: our deepest message is Envelope -> Welcome -> [AssetInfo] -> string (depth 4);
// the largest table count is a Welcome with kMaxAssets assets.
constexpr fb::uoffset_t kMaxDepth = 8;
constexpr fb::uoffset_t kMaxTables = kMaxAssets + 8;

Error field_error(const char* message_name, const std::string& what) {
  return Error{std::string("message: ") + message_name + ": " + what};
}

// ---------- encoding ----------

class Encoder {
 public:
  Result<std::vector<uint8_t>> operator()(const ClientHello& m) {
    if (m.client_name.size() > kMaxStringBytes) return too_long("client_hello", "client_name");
    const auto name = fbb_.CreateString(m.client_name);
    return finish(w::Payload::ClientHello,
                  w::CreateClientHello(fbb_, m.protocol_version, m.client_nonce, name).Union());
  }
  Result<std::vector<uint8_t>> operator()(const ServerChallenge& m) {
    return finish(w::Payload::ServerChallenge,
                  w::CreateServerChallenge(fbb_, m.client_nonce, m.challenge_token).Union());
  }
  Result<std::vector<uint8_t>> operator()(const ChallengeResponse& m) {
    return finish(w::Payload::ChallengeResponse,
                  w::CreateChallengeResponse(fbb_, m.client_nonce, m.challenge_token).Union());
  }
  Result<std::vector<uint8_t>> operator()(const Welcome& m) {
    if (m.assets.size() > kMaxAssets) {
      return field_error("welcome", "assets: more than " + std::to_string(kMaxAssets));
    }
    std::vector<fb::Offset<w::AssetInfo>> assets;
    assets.reserve(m.assets.size());
    for (std::size_t i = 0; i < m.assets.size(); ++i) {
      const AssetInfo& a = m.assets[i];
      if (a.source.size() > kMaxStringBytes) {
        return too_long("welcome", "assets[" + std::to_string(i) + "].source");
      }
      const auto source = fbb_.CreateString(a.source);
      assets.push_back(w::CreateAssetInfo(fbb_, a.model_id, a.content_hash, a.joint_count, source));
    }
    const auto vec = fbb_.CreateVector(assets);
    return finish(w::Payload::Welcome,
                  w::CreateWelcome(fbb_, m.protocol_version, m.client_id, m.tick_rate_hz,
                                   m.send_rate_hz, m.server_tick, vec)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const Snapshot& m) { return snapshot(m, m.entities); }
  // A Snapshot with `entities` as its records (m.entities is not read).
  Result<std::vector<uint8_t>> snapshot(const Snapshot& m, std::span<const EntityPose> entities) {
    if (m.part_count == 0 || m.part_index >= m.part_count) {
      return field_error("snapshot", "part_index " + std::to_string(m.part_index) +
                                         " is not below part_count " +
                                         std::to_string(m.part_count));
    }
    if (entities.size() > std::numeric_limits<uint16_t>::max()) {
      return field_error("snapshot", "more than 65535 records");
    }
    std::vector<w::EntityRecord> records;
    records.reserve(entities.size());
    std::size_t pose_bytes = 0;
    for (std::size_t i = 0; i < entities.size(); ++i) {
      const EntityPose& e = entities[i];
      if (e.pose.size() > kMaxRecordBytes) {
        return field_error("snapshot", "records[" + std::to_string(i) + "]: record over " +
                                           std::to_string(kMaxRecordBytes) + " bytes");
      }
      if (e.root_size > kMaxRootBytes || e.root_size > e.pose.size()) {
        return field_error("snapshot", "records[" + std::to_string(i) + "]: root_size " +
                                           std::to_string(e.root_size) + " beyond the record");
      }
      records.emplace_back(e.entity_id, e.generation, pack_record_size(e.pose.size(), e.root_size));
      pose_bytes += e.pose.size();
    }
    uint8_t* poses_data = nullptr;
    const auto poses = fbb_.CreateUninitializedVector(pose_bytes, &poses_data);
    for (const EntityPose& e : entities) {
      if (!e.pose.empty()) std::memcpy(poses_data, e.pose.data(), e.pose.size());
      poses_data += e.pose.size();
    }
    const auto recs = fbb_.CreateVectorOfStructs(records);
    return finish(w::Payload::Snapshot,
                  w::CreateSnapshot(fbb_, m.server_tick, m.baseline_tick, m.prior_tick,
                                    m.part_index, m.part_count, recs, poses, m.older_tick,
                                    m.ack_echo_us, m.ack_hold_us)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const Ack& m) {
    return finish(w::Payload::Ack,
                  w::CreateAck(fbb_, m.newest_tick, m.previous_mask, m.echo_us, m.events_received).Union());
  }
  Result<std::vector<uint8_t>> operator()(const AnimationEvents& m) {
    if (m.events.empty() || m.events.size() > kMaxEventsPerMessage) {
      return field_error("animation_events", "events: " + std::to_string(m.events.size()) + " is not in 1.." +
                                                 std::to_string(kMaxEventsPerMessage));
    }
    if (m.first_sequence == 0 || m.first_sequence > UINT32_MAX - m.events.size()) {
      return field_error("animation_events", "first_sequence out of range");
    }
    std::vector<w::AnimationEventRecord> records;
    records.reserve(m.events.size());
    for (const WireEvent& e : m.events) {
      records.emplace_back(e.tick, e.entity_id, e.x, e.z, e.clip, e.marker, e.generation, e.layer, e.weight_q8);
    }
    const auto events = fbb_.CreateVectorOfStructs(records);
    return finish(w::Payload::AnimationEvents, w::CreateAnimationEvents(fbb_, m.first_sequence, events).Union());
  }
  Result<std::vector<uint8_t>> operator()(const ClientCommand& m) {
    if (static_cast<uint8_t>(m.op) >= kCommandOpCount) {
      return field_error("client_command", "op out of range");
    }
    return finish(w::Payload::ClientCommand,
                  w::CreateClientCommand(fbb_, m.sequence, m.entity_id, m.generation,
                                         static_cast<w::CommandOp>(m.op), m.clip, m.layer,
                                         m.time_us, m.value, m.x, m.z, m.yaw, m.speed, m.turn_rate,
                                         m.apply_tick)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const OwnerState& m) {
    if (m.state.empty() || m.state.size() > kMaxOwnerStateBytes) {
      return field_error("owner_state", "state: " + std::to_string(m.state.size()) + " bytes is not in 1.." +
                                            std::to_string(kMaxOwnerStateBytes));
    }
    const auto state = fbb_.CreateVector(m.state);
    return finish(w::Payload::OwnerState,
                  w::CreateOwnerState(fbb_, m.server_tick, m.entity_id, m.generation, m.applied_sequence, state)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const EntitySpawn& m) {
    return finish(w::Payload::EntitySpawn,
                  w::CreateEntitySpawn(fbb_, m.entity_id, m.generation, m.model_id, m.rig_index,
                                       m.tick)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const EntityDespawn& m) {
    return finish(w::Payload::EntityDespawn,
                  w::CreateEntityDespawn(fbb_, m.entity_id, m.generation, m.tick).Union());
  }
  Result<std::vector<uint8_t>> operator()(const Disconnect& m) {
    if (static_cast<uint8_t>(m.reason) >= kDisconnectReasonCount) {
      return field_error("disconnect", "reason out of range");
    }
    if (m.message.size() > kMaxStringBytes) return too_long("disconnect", "message");
    const auto text = fbb_.CreateString(m.message);
    return finish(
        w::Payload::Disconnect,
        w::CreateDisconnect(fbb_, static_cast<w::DisconnectReason>(m.reason), text).Union());
  }

  Result<std::vector<uint8_t>> operator()(const SessionStatus& m) {
    if (m.owned.size() > kMaxOwnedListed) {
      return field_error("session_status", "owned: more than " + std::to_string(kMaxOwnedListed));
    }
    const auto owned = fbb_.CreateVector(m.owned);
    return finish(w::Payload::SessionStatus,
                  w::CreateSessionStatus(fbb_, m.server_tick, owned, m.replay_first_tick,
                                         m.replay_last_tick, m.replay_tick, m.replay_speed_q16)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const ReplayControl& m) {
    if (static_cast<uint8_t>(m.action) >= kReplayActionCount) {
      return field_error("replay_control", "action out of range");
    }
    return finish(w::Payload::ReplayControl,
                  w::CreateReplayControl(fbb_, m.sequence, static_cast<w::ReplayAction>(m.action),
                                         m.tick, m.ticks, m.speed_q16)
                      .Union());
  }

  Result<std::vector<uint8_t>> operator()(const HitQuery& m) {
    return finish(w::Payload::HitQuery,
                  w::CreateHitQuery(fbb_, m.sequence, m.origin_x, m.origin_y, m.origin_z, m.direction_x,
                                    m.direction_y, m.direction_z, m.length, m.view_us)
                      .Union());
  }
  Result<std::vector<uint8_t>> operator()(const HitResult& m) {
    if (static_cast<uint8_t>(m.outcome) >= kHitOutcomeCount) return field_error("hit_result", "outcome out of range");
    if (m.refusal >= kHitRefusalCount) return field_error("hit_result", "refusal out of range");
    return finish(w::Payload::HitResult,
                  w::CreateHitResult(fbb_, m.sequence, static_cast<w::HitOutcome>(m.outcome), m.refusal,
                                     m.entity_id, m.joint, m.distance, m.view_us, m.clamped)
                      .Union());
  }

 private:
  Result<std::vector<uint8_t>> finish(w::Payload type, fb::Offset<void> payload) {
    fbb_.Finish(w::CreateEnvelope(fbb_, type, payload), w::EnvelopeIdentifier());
    const uint8_t* data = fbb_.GetBufferPointer();
    return std::vector<uint8_t>(data, data + fbb_.GetSize());
  }
  static Error too_long(const char* message_name, const std::string& field) {
    return field_error(message_name,
                       field + ": longer than " + std::to_string(kMaxStringBytes) + " bytes");
  }

  fb::FlatBufferBuilder fbb_{256};
};

// ---------- decoding (the buffer is already verified) ----------

Result<std::string> read_string(const fb::String* s, const char* message_name, const char* field) {
  if (s == nullptr) return std::string();
  if (s->size() > kMaxStringBytes) {
    return field_error(message_name, std::string(field) + ": longer than " +
                                         std::to_string(kMaxStringBytes) + " bytes");
  }
  return std::string(s->c_str(), s->size());
}

Result<Message> decode_welcome(const w::Welcome& t) {
  Welcome m;
  m.protocol_version = t.protocol_version();
  m.client_id = t.client_id();
  m.tick_rate_hz = t.tick_rate_hz();
  m.send_rate_hz = t.send_rate_hz();
  m.server_tick = t.server_tick();
  if (const auto* assets = t.assets()) {
    if (assets->size() > kMaxAssets) {
      return field_error("welcome", "assets: more than " + std::to_string(kMaxAssets));
    }
    m.assets.reserve(assets->size());
    for (fb::uoffset_t i = 0; i < assets->size(); ++i) {
      const w::AssetInfo* a = assets->Get(i);
      if (a == nullptr) return field_error("welcome", "assets[" + std::to_string(i) + "]: null");
      auto source = read_string(a->source(), "welcome", "assets[].source");
      if (!source) return source.error();
      m.assets.push_back(
          AssetInfo{a->model_id(), a->content_hash(), a->joint_count(), std::move(source.value())});
    }
  }
  return Message{std::move(m)};
}

Result<Message> decode_snapshot(const w::Snapshot& t) {
  Snapshot m;
  m.server_tick = t.server_tick();
  m.baseline_tick = t.baseline_tick();
  m.prior_tick = t.prior_tick();
  m.older_tick = t.older_tick();
  m.part_index = t.part_index();
  m.part_count = t.part_count();
  m.ack_echo_us = t.ack_echo_us();
  m.ack_hold_us = t.ack_hold_us();
  if (m.part_count == 0 || m.part_index >= m.part_count) {
    return field_error("snapshot", "part_index " + std::to_string(m.part_index) +
                                       " is not below part_count " + std::to_string(m.part_count));
  }
  if ((m.baseline_tick == kNoTick && m.prior_tick != kNoTick) ||
      (m.prior_tick == kNoTick && m.older_tick != kNoTick)) {
    return field_error("snapshot", "a reference tick without the newer ones");
  }
  const auto* records = t.records();
  const auto* poses = t.poses();
  const std::size_t record_count = records ? records->size() : 0;
  const std::size_t pose_bytes = poses ? poses->size() : 0;
  std::size_t offset = 0;
  m.entities.resize(record_count);
  for (std::size_t i = 0; i < record_count; ++i) {
    const w::EntityRecord* r = records->Get(static_cast<fb::uoffset_t>(i));
    const std::size_t size = r->pose_size() & kMaxRecordBytes;
    const std::size_t root_size = r->pose_size() >> kRecordSizeBits;
    if (root_size > size) {
      return field_error("snapshot", "records[" + std::to_string(i) + "]: root transform of " +
                                         std::to_string(root_size) + " bytes in a record of " +
                                         std::to_string(size));
    }
    if (size > pose_bytes - offset) {
      return field_error("snapshot",
                         "records[" + std::to_string(i) + "]: pose bytes run past the pose data");
    }
    EntityPose& e = m.entities[i];
    e.entity_id = r->entity_id();
    e.generation = r->generation();
    e.root_size = static_cast<uint8_t>(root_size);
    // size > 0 implies the pose vector exists (pose_bytes > 0); a record with no pose bytes
    // may come with no pose vector at all (found by fuzz_message_decode).
    if (size > 0) e.pose.assign(poses->data() + offset, poses->data() + offset + size);
    offset += size;
  }
  if (offset != pose_bytes) {
    return field_error("snapshot", std::to_string(pose_bytes - offset) +
                                       " pose bytes belong to no record");
  }
  return Message{std::move(m)};
}

Result<Message> decode_session_status(const w::SessionStatus& t) {
  SessionStatus m;
  m.server_tick = t.server_tick();
  if (const auto* owned = t.owned()) {
    if (owned->size() > kMaxOwnedListed) {
      return field_error("session_status", "owned: more than " + std::to_string(kMaxOwnedListed));
    }
    m.owned.assign(owned->begin(), owned->end());
  }
  m.replay_first_tick = t.replay_first_tick();
  m.replay_last_tick = t.replay_last_tick();
  m.replay_tick = t.replay_tick();
  m.replay_speed_q16 = t.replay_speed_q16();
  if (m.is_replay() && (m.replay_last_tick < m.replay_first_tick || m.replay_tick < m.replay_first_tick ||
                        m.replay_tick > m.replay_last_tick)) {
    return field_error("session_status", "replay ticks out of order (first " +
                                             std::to_string(m.replay_first_tick) + ", now " +
                                             std::to_string(m.replay_tick) + ", last " +
                                             std::to_string(m.replay_last_tick) + ")");
  }
  if (m.replay_speed_q16 < 0 || m.replay_speed_q16 > kMaxReplaySpeedQ16) {
    return field_error("session_status", "replay_speed_q16 out of range");
  }
  return Message{std::move(m)};
}

Result<Message> decode_envelope(const w::Envelope& envelope) {
  const void* payload = envelope.payload();
  if (payload == nullptr) return Error{"message: envelope has no payload"};
  switch (envelope.payload_type()) {
    case w::Payload::ClientHello: {
      const auto* t = envelope.payload_as_ClientHello();
      auto name = read_string(t->client_name(), "client_hello", "client_name");
      if (!name) return name.error();
      return Message{ClientHello{t->protocol_version(), t->client_nonce(), std::move(name.value())}};
    }
    case w::Payload::ServerChallenge: {
      const auto* t = envelope.payload_as_ServerChallenge();
      return Message{ServerChallenge{t->client_nonce(), t->challenge_token()}};
    }
    case w::Payload::ChallengeResponse: {
      const auto* t = envelope.payload_as_ChallengeResponse();
      return Message{ChallengeResponse{t->client_nonce(), t->challenge_token()}};
    }
    case w::Payload::Welcome:
      return decode_welcome(*envelope.payload_as_Welcome());
    case w::Payload::Snapshot:
      return decode_snapshot(*envelope.payload_as_Snapshot());
    case w::Payload::Ack: {
      const auto* t = envelope.payload_as_Ack();
      return Message{Ack{t->newest_tick(), t->previous_mask(), t->echo_us(), t->events_received()}};
    }
    case w::Payload::AnimationEvents: {
      const auto* t = envelope.payload_as_AnimationEvents();
      AnimationEvents m;
      m.first_sequence = t->first_sequence();
      const auto* events = t->events();
      const std::size_t count = events == nullptr ? 0 : events->size();
      if (count == 0 || count > kMaxEventsPerMessage) {
        return field_error("animation_events", "events: " + std::to_string(count) + " is not in 1.." +
                                                   std::to_string(kMaxEventsPerMessage));
      }
      if (m.first_sequence == 0 || m.first_sequence > UINT32_MAX - count) {
        return field_error("animation_events", "first_sequence out of range");
      }
      m.events.reserve(count);
      for (std::size_t i = 0; i < count; ++i) {
        const w::AnimationEventRecord* e = events->Get(static_cast<fb::uoffset_t>(i));
        if (!std::isfinite(e->x()) || !std::isfinite(e->z())) {
          return field_error("animation_events", "events[" + std::to_string(i) + "]: position is not finite");
        }
        m.events.push_back(WireEvent{e->tick(), e->entity_id(), e->generation(), e->clip(), e->marker(),
                                     e->layer(), e->weight_q8(), e->x(), e->z()});
      }
      return Message{std::move(m)};
    }
    case w::Payload::ClientCommand: {
      const auto* t = envelope.payload_as_ClientCommand();
      const auto op = static_cast<uint8_t>(t->op());
      if (op >= kCommandOpCount) {
        return field_error("client_command", "op " + std::to_string(op) + " out of range");
      }
      const float movement[5] = {t->x(), t->z(), t->yaw(), t->speed(), t->turn_rate()};
      const char* const names[5] = {"x", "z", "yaw", "speed", "turn_rate"};
      for (int i = 0; i < 5; ++i) {
        if (!std::isfinite(movement[i])) return field_error("client_command", std::string(names[i]) + " is not finite");
      }
      return Message{ClientCommand{t->sequence(), t->entity_id(), t->generation(),
                                   static_cast<CommandOp>(op), t->clip(), t->layer(),
                                   t->time_us(), t->value(), movement[0], movement[1], movement[2],
                                   movement[3], movement[4], t->apply_tick()}};
    }
    case w::Payload::OwnerState: {
      const auto* t = envelope.payload_as_OwnerState();
      const auto* state = t->state();
      if (state == nullptr || state->size() == 0 || state->size() > kMaxOwnerStateBytes) {
        return field_error("owner_state", "state: missing or over " + std::to_string(kMaxOwnerStateBytes) + " bytes");
      }
      return Message{OwnerState{t->server_tick(), t->entity_id(), t->generation(), t->applied_sequence(),
                                std::vector<uint8_t>(state->begin(), state->end())}};
    }
    case w::Payload::EntitySpawn: {
      const auto* t = envelope.payload_as_EntitySpawn();
      return Message{
          EntitySpawn{t->entity_id(), t->generation(), t->model_id(), t->rig_index(), t->tick()}};
    }
    case w::Payload::EntityDespawn: {
      const auto* t = envelope.payload_as_EntityDespawn();
      return Message{EntityDespawn{t->entity_id(), t->generation(), t->tick()}};
    }
    case w::Payload::Disconnect: {
      const auto* t = envelope.payload_as_Disconnect();
      const auto reason = static_cast<uint8_t>(t->reason());
      if (reason >= kDisconnectReasonCount) {
        return field_error("disconnect", "reason " + std::to_string(reason) + " out of range");
      }
      auto text = read_string(t->message(), "disconnect", "message");
      if (!text) return text.error();
      return Message{Disconnect{static_cast<DisconnectReason>(reason), std::move(text.value())}};
    }
    case w::Payload::SessionStatus:
      return decode_session_status(*envelope.payload_as_SessionStatus());
    case w::Payload::ReplayControl: {
      const auto* t = envelope.payload_as_ReplayControl();
      const auto action = static_cast<uint8_t>(t->action());
      if (action >= kReplayActionCount) {
        return field_error("replay_control", "action " + std::to_string(action) + " out of range");
      }
      return Message{ReplayControl{t->sequence(), static_cast<ReplayAction>(action), t->tick(),
                                   t->ticks(), t->speed_q16()}};
    }
    case w::Payload::HitQuery: {
      const auto* t = envelope.payload_as_HitQuery();
      return Message{HitQuery{t->sequence(), t->origin_x(), t->origin_y(), t->origin_z(), t->direction_x(),
                              t->direction_y(), t->direction_z(), t->length(), t->view_us()}};
    }
    case w::Payload::HitResult: {
      const auto* t = envelope.payload_as_HitResult();
      const auto outcome = static_cast<uint8_t>(t->outcome());
      if (outcome >= kHitOutcomeCount) {
        return field_error("hit_result", "outcome " + std::to_string(outcome) + " out of range");
      }
      if (t->refusal() >= kHitRefusalCount) {
        return field_error("hit_result", "refusal " + std::to_string(t->refusal()) + " out of range");
      }
      return Message{HitResult{t->sequence(), static_cast<HitOutcome>(outcome), t->refusal(), t->entity_id(),
                               t->joint(), t->distance(), t->view_us(), t->clamped()}};
    }
    case w::Payload::NONE:
      break;
  }
  return Error{"message: unknown payload type " +
               std::to_string(static_cast<unsigned>(envelope.payload_type()))};
}

}  // namespace

const char* to_string(DisconnectReason reason) {
  switch (reason) {
    case DisconnectReason::kUnspecified: return "unspecified";
    case DisconnectReason::kClientLeft: return "client left";
    case DisconnectReason::kTimeout: return "timeout";
    case DisconnectReason::kProtocolMismatch: return "protocol mismatch";
    case DisconnectReason::kServerFull: return "server full";
    case DisconnectReason::kBadChallenge: return "bad challenge";
    case DisconnectReason::kAssetMismatch: return "asset mismatch";
    case DisconnectReason::kKicked: return "kicked";
    case DisconnectReason::kServerShutdown: return "server shutdown";
    case DisconnectReason::kMalformedTraffic: return "malformed traffic";
  }
  return "unknown";
}

const char* to_string(CommandOp op) {
  switch (op) {
    case CommandOp::kPlay: return "play";
    case CommandOp::kCrossfade: return "crossfade";
    case CommandOp::kSetSpeed: return "set_speed";
    case CommandOp::kSetLayerWeight: return "set_layer_weight";
    case CommandOp::kStop: return "stop";
    case CommandOp::kSeek: return "seek";
    case CommandOp::kMove: return "move";
    case CommandOp::kMoveTo: return "move_to";
    case CommandOp::kTeleport: return "teleport";
  }
  return "unknown";
}

const char* to_string(ReplayAction action) {
  switch (action) {
    case ReplayAction::kPause: return "pause";
    case ReplayAction::kResume: return "resume";
    case ReplayAction::kStep: return "step";
    case ReplayAction::kSeek: return "seek";
    case ReplayAction::kSetSpeed: return "set_speed";
  }
  return "unknown";
}

const char* hit_refusal_name(uint8_t refusal) {
  static const char* const kNames[kHitRefusalCount] = {"none", "bad_ray", "no_right", "rate_limited", "disabled"};
  return refusal < kHitRefusalCount ? kNames[refusal] : "?";
}

Result<std::vector<uint8_t>> encode_message(const Message& message) {
  Encoder encoder;
  return std::visit(encoder, message);
}

Result<std::vector<uint8_t>> encode_snapshot(const Snapshot& header,
                                             std::span<const EntityPose> entities) {
  Encoder encoder;
  return encoder.snapshot(header, entities);
}

// The payload union's types are 1 + the Message alternative, in the same order.
static_assert(static_cast<std::size_t>(w::Payload::MAX) == std::variant_size_v<Message>,
              "the payload union and Message list the same kinds");

std::optional<std::size_t> encoded_message_kind(std::span<const uint8_t> bytes) {
  if (bytes.size() < 8 || !fb::BufferHasIdentifier(bytes.data(), w::EnvelopeIdentifier())) return std::nullopt;
  const auto type = static_cast<std::size_t>(w::GetEnvelope(bytes.data())->payload_type());
  if (type == 0 || type > std::variant_size_v<Message>) return std::nullopt;
  return type - 1;
}

Result<Message> decode_message(std::span<const uint8_t> bytes) {
  if (bytes.size() > kMaxDecodeBytes) {
    return Error{"message: " + std::to_string(bytes.size()) + " bytes is over the " +
                 std::to_string(kMaxDecodeBytes) + "-byte limit"};
  }
  if (bytes.size() < 8) {
    return Error{"message: " + std::to_string(bytes.size()) + " bytes is too short"};
  }
  // FlatBuffers reads scalars in place: work on an 8-aligned copy when the caller's bytes are
  // not aligned (a datagram at an odd offset), so no read is misaligned.
  std::vector<uint8_t> aligned_copy;
  const uint8_t* data = bytes.data();
  if (reinterpret_cast<std::uintptr_t>(data) % 8 != 0) {
    aligned_copy.assign(bytes.begin(), bytes.end());
    data = aligned_copy.data();
  }
  if (!fb::BufferHasIdentifier(data, w::EnvelopeIdentifier())) {
    return Error{"message: not a posecast message (file identifier is not PCW1)"};
  }
  fb::Verifier::Options options;
  options.max_depth = kMaxDepth;
  options.max_tables = kMaxTables;
  options.check_alignment = true;
  fb::Verifier verifier(data, bytes.size(), options);
  if (!w::VerifyEnvelopeBuffer(verifier)) {
    return Error{"message: FlatBuffers verification failed (truncated or malformed)"};
  }
  return decode_envelope(*w::GetEnvelope(data));
}

Status check_protocol_version(uint16_t peer_version) {
  if (peer_version == kProtocolVersion) return {};
  return Error{"protocol version mismatch: peer speaks version " + std::to_string(peer_version) +
               ", this build speaks version " + std::to_string(kProtocolVersion)};
}

}  // namespace posecast::protocol
