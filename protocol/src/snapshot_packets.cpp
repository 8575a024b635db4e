#include "posecast/protocol/snapshot_packets.h"

#include "posecast/protocol/snapshot_writer.h"

namespace posecast::protocol {
namespace {

// Measured once from real encodings: a snapshot with every header field at its widest value
// and no records, plus 8 bytes per record (the EntityRecord struct), plus alignment slack for
// the two vectors.
std::size_t empty_snapshot_bytes() {
  static const std::size_t bytes = [] {
    Snapshot s;
    s.server_tick = 0xFFFFFFFEu;
    s.baseline_tick = 0xFFFFFFFEu;
    s.prior_tick = 0xFFFFFFFEu;
    s.older_tick = 0xFFFFFFFEu;
    s.part_index = 254;
    s.part_count = 255;
    s.ack_echo_us = 0xFFFFFFFFu;
    s.ack_hold_us = 0xFFFFFFFFu;
    auto encoded = encode_message(Message{s});
    return encoded ? encoded.value().size() : kMaxPacketBytes;
  }();
  return bytes;
}

constexpr std::size_t kRecordBytes = 8;
constexpr std::size_t kAlignmentSlack = 16;

}  // namespace

std::size_t snapshot_packet_overhead(std::size_t records) {
  return empty_snapshot_bytes() + kAlignmentSlack + kRecordBytes * records;
}

Result<std::vector<std::vector<uint8_t>>> encode_snapshot_packets(
    const SnapshotHeader& header, std::span<const EntityPose> entities,
    std::size_t max_packet_bytes) {
  SnapshotWriter writer(max_packet_bytes);
  writer.begin(header);
  for (const EntityPose& entity : entities) {
    writer.next_pose() = entity.pose;
    writer.append(entity.entity_id, entity.generation, entity.root_size);
  }
  return writer.finish();
}

}  // namespace posecast::protocol
