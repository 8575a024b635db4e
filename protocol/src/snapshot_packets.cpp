#include "posecast/protocol/snapshot_packets.h"

#include <string>

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
  if (max_packet_bytes < snapshot_packet_overhead(1) + 1) {
    return Error{"snapshot packets: max_packet_bytes " + std::to_string(max_packet_bytes) +
                 " cannot hold a snapshot header and one record"};
  }
  // Group records greedily by the overhead bound, then encode each group and check the
  // real size (the bound is conservative, so the check only guards the bound itself).
  std::vector<std::pair<std::size_t, std::size_t>> groups;  // [first, end)
  std::size_t first = 0;
  while (first < entities.size() || groups.empty()) {
    std::size_t end = first;
    std::size_t pose_bytes = 0;
    while (end < entities.size() &&
           snapshot_packet_overhead(end - first + 1) + pose_bytes + entities[end].pose.size() <=
               max_packet_bytes) {
      pose_bytes += entities[end].pose.size();
      ++end;
    }
    if (end == first && first < entities.size()) {
      return Error{"snapshot packets: entity " + std::to_string(entities[first].entity_id) +
                   ": pose of " + std::to_string(entities[first].pose.size()) +
                   " bytes does not fit a " + std::to_string(max_packet_bytes) + "-byte packet"};
    }
    groups.emplace_back(first, end);
    first = end;
    if (entities.empty()) break;
  }
  if (groups.size() > 255) {
    return Error{"snapshot packets: " + std::to_string(groups.size()) +
                 " parts needed, at most 255 allowed"};
  }
  std::vector<std::vector<uint8_t>> packets;
  packets.reserve(groups.size());
  Snapshot part;
  part.server_tick = header.server_tick;
  part.baseline_tick = header.baseline_tick;
  part.prior_tick = header.prior_tick;
  part.older_tick = header.older_tick;
  part.part_count = static_cast<uint8_t>(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    part.part_index = static_cast<uint8_t>(g);
    part.ack_echo_us = g == 0 ? header.ack_echo_us : 0;
    part.ack_hold_us = g == 0 ? header.ack_hold_us : 0;
    auto encoded = encode_snapshot(
        part, entities.subspan(groups[g].first, groups[g].second - groups[g].first));
    if (!encoded) return encoded.error();
    if (encoded.value().size() > max_packet_bytes) {
      return Error{"snapshot packets: internal size bound exceeded (" +
                   std::to_string(encoded.value().size()) + " bytes)"};
    }
    packets.push_back(std::move(encoded.value()));
  }
  return packets;
}

}  // namespace posecast::protocol
