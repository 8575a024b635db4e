// Snapshot splitting: every packet fits, holds whole records, and decodes alone.

#include <gtest/gtest.h>

#include "posecast/protocol/snapshot_packets.h"

namespace posecast::protocol {
namespace {

std::vector<EntityPose> entities(std::size_t count, std::size_t pose_bytes) {
  std::vector<EntityPose> out;
  for (std::size_t i = 0; i < count; ++i) {
    EntityPose e;
    e.entity_id = static_cast<uint32_t>(1000 + i);
    e.generation = static_cast<uint16_t>(i % 7);
    e.pose.assign(pose_bytes + i % 13, static_cast<uint8_t>(i));
    out.push_back(std::move(e));
  }
  return out;
}

TEST(SnapshotPackets, SmallSnapshotIsOnePacket) {
  const auto es = entities(3, 60);
  const auto packets = encode_snapshot_packets({50, 47, 44, 41}, es);
  ASSERT_TRUE(packets.ok()) << packets.error().message;
  ASSERT_EQ(packets.value().size(), 1u);
  const auto m = decode_message(packets.value()[0]);
  ASSERT_TRUE(m.ok());
  const auto& s = std::get<Snapshot>(m.value());
  EXPECT_EQ(s.server_tick, 50u);
  EXPECT_EQ(s.baseline_tick, 47u);
  EXPECT_EQ(s.prior_tick, 44u);
  EXPECT_EQ(s.older_tick, 41u);
  EXPECT_EQ(s.part_count, 1);
  EXPECT_EQ(s.entities, es);
}

TEST(SnapshotPackets, LargeSnapshotSplitsIntoPacketsThatEachDecodeAlone) {
  const auto es = entities(200, 70);
  const auto packets = encode_snapshot_packets({9, kNoTick, kNoTick, kNoTick, 77, 5'000}, es);
  ASSERT_TRUE(packets.ok()) << packets.error().message;
  ASSERT_GT(packets.value().size(), 10u);
  std::vector<EntityPose> all;
  for (std::size_t i = 0; i < packets.value().size(); ++i) {
    const auto& bytes = packets.value()[i];
    EXPECT_LE(bytes.size(), kMaxPacketBytes);
    const auto m = decode_message(bytes);
    ASSERT_TRUE(m.ok()) << m.error().message;
    const auto& s = std::get<Snapshot>(m.value());
    EXPECT_EQ(s.server_tick, 9u);
    EXPECT_EQ(s.part_index, i);
    EXPECT_EQ(s.part_count, packets.value().size());
    // The round-trip echo rides in part 0 only (one sample per Ack is enough).
    EXPECT_EQ(s.ack_echo_us, i == 0 ? 77u : 0u);
    EXPECT_EQ(s.ack_hold_us, i == 0 ? 5'000u : 0u);
    EXPECT_FALSE(s.entities.empty());
    all.insert(all.end(), s.entities.begin(), s.entities.end());
  }
  EXPECT_EQ(all, es);  // whole records, in order, none lost or split
}

TEST(SnapshotPackets, PacketsAreReasonablyFull) {
  const auto es = entities(200, 70);
  const auto packets = encode_snapshot_packets({9, kNoTick, kNoTick, kNoTick}, es).value();
  std::size_t total = 0;
  for (const auto& p : packets) total += p.size();
  EXPECT_GT(total / packets.size(), kMaxPacketBytes * 8 / 10);
}

TEST(SnapshotPackets, EmptySnapshotIsOnePacketWithNoRecords) {
  const auto packets = encode_snapshot_packets({1, kNoTick, kNoTick, kNoTick}, {});
  ASSERT_TRUE(packets.ok());
  ASSERT_EQ(packets.value().size(), 1u);
  EXPECT_TRUE(std::get<Snapshot>(decode_message(packets.value()[0]).value()).entities.empty());
}

TEST(SnapshotPackets, RecordTooLargeForAPacketIsAnError) {
  auto es = entities(1, 1190);
  const auto packets = encode_snapshot_packets({1, kNoTick, kNoTick, kNoTick}, es);
  ASSERT_FALSE(packets.ok());
  EXPECT_NE(packets.error().message.find("does not fit"), std::string::npos);
}

}  // namespace
}  // namespace posecast::protocol
