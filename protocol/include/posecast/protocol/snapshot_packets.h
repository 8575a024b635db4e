#pragma once
// Splitting one tick's snapshot into datagrams of at most kMaxPacketBytes. Every packet is a
// complete Snapshot message (same header, part_index/part_count set) holding whole entity
// records, so each decodes and applies on its own when others are lost.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posecast/protocol/messages.h"
#include "posecast/result.h"

namespace posecast::protocol {

// The snapshot header every part repeats.
struct SnapshotHeader {
  uint32_t server_tick = 0;
  uint32_t baseline_tick = kNoTick;
  uint32_t prior_tick = kNoTick;
  uint32_t older_tick = kNoTick;
  // Round-trip echo (Snapshot::ack_echo_us / ack_hold_us): written into part 0 only.
  uint32_t ack_echo_us = 0;
  uint32_t ack_hold_us = 0;
};

// Encodes `entities` (in order) into as few packets as a greedy fill allows, each at most
// `max_packet_bytes` (through a SnapshotWriter, snapshot_writer.h, which groups and measures). An empty entity list gives one packet with no records. Fails when one
// record alone does not fit a packet (its pose is too large: see docs/protocol.md), when more
// than 255 parts would be needed, or when max_packet_bytes is too small for a header.
Result<std::vector<std::vector<uint8_t>>> encode_snapshot_packets(
    const SnapshotHeader& header, std::span<const EntityPose> entities,
    std::size_t max_packet_bytes = kMaxPacketBytes);

// Bytes of a Snapshot packet beyond its pose bytes, for `records` records: an upper bound,
// affine in `records`, that the SnapshotWriter groups by (exposed for capacity planning and
// tests).
std::size_t snapshot_packet_overhead(std::size_t records);

}  // namespace posecast::protocol
