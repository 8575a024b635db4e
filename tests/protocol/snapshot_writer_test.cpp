// SnapshotWriter: packets never exceed the limit, the bound it reports holds the bytes it
// writes, written_bytes() equals them exactly, and dropping records restores its state.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "posecast/protocol/snapshot_writer.h"

namespace posecast::protocol {
namespace {

constexpr std::size_t kDatagramOverhead = 28;

// Appends `count` records with poses of `pose_bytes + i % 13` bytes; checks next_record_cost()
// against the bound's growth on the way.
void append(SnapshotWriter& writer, std::size_t count, std::size_t pose_bytes) {
  for (std::size_t i = 0; i < count; ++i) {
    writer.next_pose().assign(pose_bytes + i % 13, static_cast<uint8_t>(i));
    const std::size_t before = writer.bound_bytes();
    const std::size_t cost = writer.next_record_cost();
    writer.append(static_cast<uint32_t>(500 + i), static_cast<uint16_t>(i % 5));
    ASSERT_EQ(writer.bound_bytes(), before + cost) << "record " << i;
  }
}

std::size_t bytes_of(const std::vector<std::vector<uint8_t>>& packets, std::size_t overhead) {
  std::size_t total = 0;
  for (const auto& packet : packets) total += packet.size() + overhead;
  return total;
}

TEST(SnapshotWriter, PacketsStayWithinTheLimitAndWrittenBytesAreTheBytesWritten) {
  for (const std::size_t limit : {500u, 800u, 1200u}) {
    for (const std::size_t pose_bytes : {1u, 40u, 150u, 300u}) {
      SnapshotWriter writer(limit, kDatagramOverhead);
      writer.begin({77, 70, 63, 56, 12345, 678});
      append(writer, 120, pose_bytes);
      const auto packets = writer.finish();
      ASSERT_TRUE(packets.ok()) << packets.error().message;
      ASSERT_EQ(packets.value().size(), writer.packet_count());
      for (const auto& packet : packets.value()) EXPECT_LE(packet.size(), limit);
      EXPECT_EQ(writer.written_bytes(), bytes_of(packets.value(), kDatagramOverhead));
      EXPECT_LE(writer.written_bytes(), writer.bound_bytes()) << limit << "/" << pose_bytes;
    }
  }
}

TEST(SnapshotWriter, WritesTheSameBytesAsEncodeSnapshotPackets) {
  SnapshotWriter writer;
  writer.begin({9, 6, kNoTick, kNoTick, 5, 6});
  append(writer, 90, 70);
  const auto written = writer.finish();
  ASSERT_TRUE(written.ok());
  const std::vector<EntityPose> records(writer.records().begin(), writer.records().end());
  const auto encoded = encode_snapshot_packets({9, 6, kNoTick, kNoTick, 5, 6}, records);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(written.value(), encoded.value());
}

TEST(SnapshotWriter, DroppingTheNewestRecordsRestoresBoundAndPackets) {
  SnapshotWriter writer(600, kDatagramOverhead);
  writer.begin({1, kNoTick, kNoTick, kNoTick});
  const std::size_t empty_bound = writer.bound_bytes();
  std::vector<std::size_t> bounds, packets;
  for (std::size_t i = 0; i < 40; ++i) {
    bounds.push_back(writer.bound_bytes());
    packets.push_back(writer.packet_count());
    append(writer, 1, 60 + i);
  }
  for (std::size_t i = 40; i-- > 0;) {
    writer.drop_last();
    EXPECT_EQ(writer.bound_bytes(), bounds[i]) << i;
    EXPECT_EQ(writer.packet_count(), packets[i]) << i;
  }
  EXPECT_EQ(writer.bound_bytes(), empty_bound);
  EXPECT_EQ(writer.record_count(), 0u);
}

// The writer's arithmetic relies on the overhead growing by the same bytes per record.
TEST(SnapshotWriter, PacketOverheadIsAffineInTheRecordCount) {
  const std::size_t empty = snapshot_packet_overhead(0);
  const std::size_t per_record = snapshot_packet_overhead(1) - empty;
  for (std::size_t records = 0; records <= 300; ++records) {
    ASSERT_EQ(snapshot_packet_overhead(records), empty + per_record * records) << records;
  }
}

TEST(SnapshotWriter, AnEmptySnapshotIsOnePacketMeasuredExactly) {
  SnapshotWriter writer(kMaxPacketBytes, kDatagramOverhead);
  writer.begin({3, kNoTick, kNoTick, kNoTick});
  EXPECT_EQ(writer.bound_bytes(), snapshot_packet_overhead(0) + kDatagramOverhead);
  const auto packets = writer.finish();
  ASSERT_TRUE(packets.ok());
  ASSERT_EQ(packets.value().size(), 1u);
  EXPECT_EQ(writer.written_bytes(), packets.value()[0].size() + kDatagramOverhead);
}

TEST(SnapshotWriter, ARecordTooLargeForAPacketFailsFinish) {
  SnapshotWriter writer(400);
  writer.begin({1, kNoTick, kNoTick, kNoTick});
  append(writer, 2, 30);
  writer.next_pose().assign(500, 1);
  writer.append(42, 0);
  const auto packets = writer.finish();
  ASSERT_FALSE(packets.ok());
  EXPECT_NE(packets.error().message.find("entity 42"), std::string::npos);
  writer.drop_last();  // without it the snapshot writes again
  EXPECT_TRUE(writer.finish().ok());
}

TEST(SnapshotWriter, BeginStartsAfreshAfterAFullSnapshot) {
  SnapshotWriter writer;
  writer.begin({5, kNoTick, kNoTick, kNoTick});
  append(writer, 200, 90);
  ASSERT_GT(writer.packet_count(), 1u);
  writer.begin({6, kNoTick, kNoTick, kNoTick});
  EXPECT_EQ(writer.record_count(), 0u);
  EXPECT_EQ(writer.packet_count(), 1u);
  EXPECT_EQ(writer.written_bytes(), 0u);
}

}  // namespace
}  // namespace posecast::protocol
