// Wire messages: every type round-trips, versions are checked, hostile bytes give errors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <functional>
#include <random>

#include "posecast/protocol/messages.h"
#include "posecast_messages_generated.h"
#include "protocol_rigs.h"

namespace posecast::protocol {
namespace {

std::vector<Message> sample_messages() {
  Welcome welcome;
  welcome.client_id = 7;
  welcome.tick_rate_hz = 60;
  welcome.send_rate_hz = 20;
  welcome.server_tick = 1234;
  welcome.assets = {{1, 0x1122334455667788ull, 24, "Fox.glb"}, {2, 42, 128, "gen-rig:128"}};
  Snapshot snapshot;
  snapshot.server_tick = 100;
  snapshot.baseline_tick = 97;
  snapshot.prior_tick = 94;
  snapshot.older_tick = 91;
  snapshot.ack_echo_us = 0xFFFFFFFFu;
  snapshot.ack_hold_us = 16'667;
  snapshot.entities = {{3, 1, {1, 2, 3}, 2}, {9, 65535, {}}, {12, 2, std::vector<uint8_t>(300, 0xAB), 31}};
  return {
      ClientHello{kProtocolVersion, 0xDEADBEEFCAFEull, "viewer"},
      ServerChallenge{5, 6},
      ChallengeResponse{5, 6},
      welcome,
      snapshot,
      Ack{100, 0xF0F0F0F0u},
      Ack{kNoTick, 0, 123'456'789},
      ClientCommand{17, 3, 1, CommandOp::kCrossfade, 2, 1, 250000, 65536},
      EntitySpawn{3, 1, 2, 0, 90},
      EntityDespawn{3, 1, 120},
      Disconnect{DisconnectReason::kProtocolMismatch, "peer speaks 2"},
      SessionStatus{300, {4, 7, 1000000}, kNoTick, kNoTick, kNoTick, 65536},
      SessionStatus{301, {}, 10, 9000, 512, 0},
      ReplayControl{3, ReplayAction::kSeek, 4500, 0, 0},
      ReplayControl{4, ReplayAction::kSetSpeed, 0, 0, 2 * 65536},
      HitQuery{9, 1.5f, 1.0f, -3.0f, 0.0f, 0.0f, 1.0f, 50.0f, 1'234'567},
      HitResult{9, HitOutcome::kHit, 0, 1000002, 17, 3.25f, 1'234'567, false},
      HitResult{10, HitOutcome::kRefused, 3, 0, 0, 0.0f, 0, false},
      ClientCommand{18, 3, 1, CommandOp::kMove, -1, 0, 0, 0, 0.0f, 0.0f, 0.0f, 80.0f, 0.5f, 4321},
      OwnerState{4320, 3, 1, 18, std::vector<uint8_t>(180, 0x3C)},
  };
}

TEST(Messages, EveryMessageTypeRoundTrips) {
  for (const Message& m : sample_messages()) {
    auto bytes = encode_message(m);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    auto back = decode_message(bytes.value());
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value().index(), m.index());
    EXPECT_TRUE(back.value() == m) << "message type " << m.index();
  }
}

// encode_snapshot (records from a span, no Message copy) gives encode_message's bytes.
TEST(Messages, SnapshotFromASpanOfRecordsEncodesTheSameBytes) {
  for (const Message& m : sample_messages()) {
    const auto* snapshot = std::get_if<Snapshot>(&m);
    if (snapshot == nullptr) continue;
    Snapshot header = *snapshot;
    header.entities.clear();
    auto from_span = encode_snapshot(header, snapshot->entities);
    auto from_message = encode_message(m);
    ASSERT_TRUE(from_span.ok() && from_message.ok());
    EXPECT_EQ(from_span.value(), from_message.value());
    header.part_index = 2;  // not below part_count: refused the same way
    EXPECT_FALSE(encode_snapshot(header, snapshot->entities).ok());
  }
}

TEST(Messages, DecodesFromMisalignedBuffer) {
  auto bytes = encode_message(Message{Ack{5, 3}});
  ASSERT_TRUE(bytes.ok());
  std::vector<uint8_t> shifted(bytes.value().size() + 1);
  std::memcpy(shifted.data() + 1, bytes.value().data(), bytes.value().size());
  auto back = decode_message(std::span<const uint8_t>(shifted).subspan(1));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(std::get<Ack>(back.value()) == (Ack{5, 3}));
}

TEST(Messages, ProtocolVersionMismatchIsRefusedWithBothVersions) {
  EXPECT_TRUE(check_protocol_version(kProtocolVersion).ok());
  const Status st = check_protocol_version(kProtocolVersion + 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find(std::to_string(kProtocolVersion + 1)), std::string::npos);
  EXPECT_NE(st.error().message.find(std::to_string(kProtocolVersion)), std::string::npos);
}

TEST(Messages, EncodeRefusesFieldsThatDoNotFit) {
  EXPECT_FALSE(encode_message(Message{ClientHello{1, 0, std::string(kMaxStringBytes + 1, 'x')}}).ok());
  Snapshot s;
  s.part_index = 1;
  s.part_count = 1;
  EXPECT_FALSE(encode_message(Message{s}).ok());
  Snapshot big;
  big.entities.push_back({1, 0, std::vector<uint8_t>(kMaxRecordBytes + 1, 0)});
  EXPECT_FALSE(encode_message(Message{big}).ok());
  Snapshot root_beyond_record;
  root_beyond_record.entities.push_back({1, 0, std::vector<uint8_t>(2, 0), 3});
  EXPECT_FALSE(encode_message(Message{root_beyond_record}).ok());
  Snapshot root_too_long;
  root_too_long.entities.push_back({1, 0, std::vector<uint8_t>(40, 0), 32});
  EXPECT_FALSE(encode_message(Message{root_too_long}).ok());
  EXPECT_FALSE(encode_message(Message{OwnerState{1, 2, 3, 4, {}}}).ok());
  EXPECT_FALSE(encode_message(Message{OwnerState{1, 2, 3, 4, std::vector<uint8_t>(kMaxOwnerStateBytes + 1, 0)}}).ok());
  EXPECT_TRUE(encode_message(Message{OwnerState{1, 2, 3, 4, std::vector<uint8_t>(kMaxOwnerStateBytes, 0)}}).ok());
}

// A shot's floats travel as sent (NaN included: the server answers it as a bad ray); an answer
// with an outcome or refusal out of range is not encoded.
TEST(Messages, HitQueryCarriesNanAndHitResultRangesAreChecked) {
  HitQuery q;
  q.length = std::numeric_limits<float>::quiet_NaN();
  auto bytes = encode_message(Message{q});
  ASSERT_TRUE(bytes.ok());
  auto back = decode_message(bytes.value());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(std::isnan(std::get<HitQuery>(back.value()).length));
  EXPECT_FALSE(encode_message(Message{HitResult{1, static_cast<HitOutcome>(3)}}).ok());
  EXPECT_FALSE(encode_message(Message{HitResult{1, HitOutcome::kRefused, kHitRefusalCount}}).ok());
}

TEST(Messages, EmptyShortAndForeignBytesAreErrors) {
  EXPECT_FALSE(decode_message({}).ok());
  const std::vector<uint8_t> short_bytes = {1, 2, 3};
  EXPECT_FALSE(decode_message(short_bytes).ok());
  std::vector<uint8_t> foreign(64, 0);
  const auto r = decode_message(foreign);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("PCW1"), std::string::npos);
  EXPECT_FALSE(decode_message(std::vector<uint8_t>(kMaxDecodeBytes + 1, 0)).ok());
}

TEST(Messages, EveryTruncationIsAnErrorOrTheSameMessage) {
  for (const Message& m : sample_messages()) {
    const auto bytes = encode_message(m).value();
    for (std::size_t len = 0; len < bytes.size(); ++len) {
      const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
      const auto r = decode_message(prefix);
      // Cutting only trailing alignment padding leaves every referenced byte: the same message.
      if (r.ok()) {
        EXPECT_TRUE(r.value() == m) << "type " << m.index() << " truncated to " << len;
        EXPECT_GE(len + 8, bytes.size());
      }
    }
  }
}

TEST(Messages, RandomMutationsNeverCrash) {
  test::TestRng rng{1234};
  std::size_t decoded = 0, rejected = 0;
  for (const Message& m : sample_messages()) {
    const auto bytes = encode_message(m).value();
    for (int round = 0; round < 400; ++round) {
      std::vector<uint8_t> mutated = bytes;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        mutated[rng() % mutated.size()] = static_cast<uint8_t>(rng());
      }
      const auto r = decode_message(mutated);
      (r.ok() ? decoded : rejected) += 1;
    }
  }
  // Both outcomes occur: mutations in payload values decode, structural ones are rejected.
  EXPECT_GT(decoded, 0u);
  EXPECT_GT(rejected, 0u);
}

// Builds an envelope directly with the generated API to reach values the adapters never write.
std::vector<uint8_t> raw_envelope(const std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>& make,
                                  wire::Payload type) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto payload = make(fbb);
  fbb.Finish(wire::CreateEnvelope(fbb, type, payload), wire::EnvelopeIdentifier());
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

TEST(Messages, OutOfRangeEnumsAreRejected) {
  const auto bad_reason = raw_envelope(
      [](flatbuffers::FlatBufferBuilder& fbb) {
        return wire::CreateDisconnect(fbb, static_cast<wire::DisconnectReason>(200)).Union();
      },
      wire::Payload::Disconnect);
  EXPECT_FALSE(decode_message(bad_reason).ok());
  const auto bad_op = raw_envelope(
      [](flatbuffers::FlatBufferBuilder& fbb) {
        return wire::CreateClientCommand(fbb, 1, 2, 3, static_cast<wire::CommandOp>(99)).Union();
      },
      wire::Payload::ClientCommand);
  EXPECT_FALSE(decode_message(bad_op).ok());
  const auto bad_action = raw_envelope(
      [](flatbuffers::FlatBufferBuilder& fbb) {
        return wire::CreateReplayControl(fbb, 1, static_cast<wire::ReplayAction>(5)).Union();
      },
      wire::Payload::ReplayControl);
  EXPECT_FALSE(decode_message(bad_action).ok());
  const auto bad_type = raw_envelope(
      [](flatbuffers::FlatBufferBuilder& fbb) { return wire::CreateAck(fbb, 1, 2).Union(); },
      static_cast<wire::Payload>(77));
  EXPECT_FALSE(decode_message(bad_type).ok());
  const auto no_payload = raw_envelope(
      [](flatbuffers::FlatBufferBuilder&) { return flatbuffers::Offset<void>(0); },
      wire::Payload::Ack);
  EXPECT_FALSE(decode_message(no_payload).ok());
}

TEST(Messages, SessionStatusRefusesInconsistentReplayFieldsAndLongOwnedLists) {
  // Replay position outside [first, last], or last before first.
  for (const SessionStatus& bad : {SessionStatus{1, {}, 10, 20, 21, 65536}, SessionStatus{1, {}, 10, 20, 9, 65536},
                                   SessionStatus{1, {}, 30, 20, 25, 65536}, SessionStatus{1, {}, 10, 20, 15, -1}}) {
    auto bytes = encode_message(bad);
    ASSERT_TRUE(bytes.ok());
    auto back = decode_message(bytes.value());
    ASSERT_FALSE(back.ok());
    EXPECT_NE(back.error().message.find("session_status"), std::string::npos) << back.error().message;
  }
  SessionStatus many;
  many.owned.assign(kMaxOwnedListed + 1, 5);
  EXPECT_FALSE(encode_message(many).ok());
  many.owned.pop_back();
  EXPECT_TRUE(encode_message(many).ok());
}

TEST(Messages, SnapshotRecordsMustMatchThePoseBytes) {
  auto make = [](uint16_t first_size, std::size_t pose_bytes) {
    return raw_envelope(
        [&](flatbuffers::FlatBufferBuilder& fbb) {
          std::vector<wire::EntityRecord> records = {wire::EntityRecord(1, 0, first_size),
                                                     wire::EntityRecord(2, 0, 4)};
          std::vector<uint8_t> poses(pose_bytes, 1);
          const auto r = fbb.CreateVectorOfStructs(records);
          const auto p = fbb.CreateVector(poses);
          return wire::CreateSnapshot(fbb, 10, kNoTick, kNoTick, 0, 1, r, p).Union();
        },
        wire::Payload::Snapshot);
  };
  EXPECT_TRUE(decode_message(make(4, 8)).ok());
  EXPECT_FALSE(decode_message(make(60000, 8)).ok());  // runs past the pose data
  EXPECT_FALSE(decode_message(make(2, 8)).ok());      // bytes that belong to no record
  // Root bytes (top 5 bits of pose_size) within the record's bytes, and no more than them.
  const auto with_root = decode_message(make(static_cast<uint16_t>(4 | (3 << 11)), 8));
  ASSERT_TRUE(with_root.ok()) << with_root.error().message;
  EXPECT_EQ(std::get<Snapshot>(with_root.value()).entities[0].root_size, 3);
  EXPECT_EQ(std::get<Snapshot>(with_root.value()).entities[0].pose_bytes().size(), 1u);
  const auto root_past = decode_message(make(static_cast<uint16_t>(4 | (5 << 11)), 8));
  ASSERT_FALSE(root_past.ok());
  EXPECT_NE(root_past.error().message.find("root transform of 5 bytes in a record of 4"), std::string::npos)
      << root_past.error().message;
  const auto bad_part = raw_envelope(
      [](flatbuffers::FlatBufferBuilder& fbb) {
        return wire::CreateSnapshot(fbb, 10, kNoTick, kNoTick, 3, 2).Union();
      },
      wire::Payload::Snapshot);
  EXPECT_FALSE(decode_message(bad_part).ok());
}

// Regression (fuzz_message_decode): records with pose_size 0 and no pose vector at all made
// the decoder call data() on a null vector.
TEST(Messages, SnapshotWithEmptyRecordsAndNoPoseVectorDecodes) {
  const auto bytes = raw_envelope(
      [](flatbuffers::FlatBufferBuilder& fbb) {
        std::vector<wire::EntityRecord> records = {wire::EntityRecord(4, 1, 0), wire::EntityRecord(5, 2, 0)};
        const auto r = fbb.CreateVectorOfStructs(records);
        return wire::CreateSnapshot(fbb, 10, kNoTick, kNoTick, 0, 1, r).Union();
      },
      wire::Payload::Snapshot);
  const auto m = decode_message(bytes);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto& s = std::get<Snapshot>(m.value());
  ASSERT_EQ(s.entities.size(), 2u);
  EXPECT_TRUE(s.entities[0].pose.empty());
  EXPECT_EQ(s.entities[1].entity_id, 5u);
}

// The verifier's limits (messages.cpp: depth 8, kMaxAssets + 8 tables) sit just above the
// largest legal message. The schema has no recursive table, so no buffer nests deeper than
// Envelope -> Welcome -> AssetInfo (3 tables): the depth limit cannot be reached, and every
// Welcome within kMaxAssets has at most kMaxAssets + 2 tables. What the limits can be checked
// for: the largest legal Welcome passes them, and a huge one is stopped by the verifier
// itself, before decoding ever counts the assets.
TEST(Messages, HugeTablesAreRejectedByVerifierLimits) {
  const auto welcome_with = [](int count) {
    return raw_envelope(
        [count](flatbuffers::FlatBufferBuilder& fbb) {
          std::vector<flatbuffers::Offset<wire::AssetInfo>> assets;
          for (int i = 0; i < count; ++i) {
            const auto source = fbb.CreateString("gen-rig:24");  // the deepest path: a string in an asset
            assets.push_back(wire::CreateAssetInfo(fbb, static_cast<uint32_t>(i), 0, 24, source));
          }
          const auto v = fbb.CreateVector(assets);
          return wire::CreateWelcome(fbb, kProtocolVersion, 1, 60, 20, 0, v).Union();
        },
        wire::Payload::Welcome);
  };
  const auto largest = decode_message(welcome_with(static_cast<int>(kMaxAssets)));
  ASSERT_TRUE(largest.ok()) << largest.error().message;
  EXPECT_EQ(std::get<Welcome>(largest.value()).assets.size(), kMaxAssets);
  // One over: the verifier lets it through (kMaxAssets + 3 tables), the count check refuses it.
  const auto one_over = decode_message(welcome_with(static_cast<int>(kMaxAssets) + 1));
  ASSERT_FALSE(one_over.ok());
  EXPECT_NE(one_over.error().message.find("assets: more than"), std::string::npos) << one_over.error().message;
  // 400 asset tables: over the verifier's table limit. The message is the verifier's, so the
  // limit (not the count check behind it) is what rejected it.
  const auto huge = decode_message(welcome_with(400));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("FlatBuffers verification failed"), std::string::npos)
      << huge.error().message;
}

}  // namespace
}  // namespace posecast::protocol
