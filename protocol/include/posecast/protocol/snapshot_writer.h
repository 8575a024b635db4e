#pragma once
// SnapshotWriter: one tick's snapshot for one receiver, written record by record into
// datagrams of at most max_packet_bytes, measuring the packets as it goes. Every packet is a
// complete Snapshot message (same header, part_index/part_count set) holding whole records,
// so each decodes and applies on its own when others are lost.
//
// Records go into packets greedily, in order: a record joins the current packet while the
// packet's size bound (snapshot_packet_overhead(records) + pose bytes) stays within the limit,
// else it opens the next packet. bound_bytes() is that bound over all packets, plus
// `datagram_overhead` per packet (the bytes the caller's link adds to each datagram, e.g. the
// UDP/IP header); a budget can test next_record_cost() before appending. finish() encodes the
// packets; their real sizes never exceed the bound, and written_bytes() reports them (plus the
// datagram overhead) exactly. This is the one place packet grouping is computed:
// encode_snapshot_packets (snapshot_packets.h) writes through it.
//
// Reusable: begin() starts the next snapshot and keeps every buffer's capacity (no allocation
// when steady). Not thread-safe; one writer per thread.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posecast/protocol/messages.h"
#include "posecast/protocol/snapshot_packets.h"
#include "posecast/result.h"

namespace posecast::protocol {

class SnapshotWriter {
 public:
  explicit SnapshotWriter(std::size_t max_packet_bytes = kMaxPacketBytes,
                          std::size_t datagram_overhead = 0);

  // Starts a snapshot with `header`: no records, one (empty) packet.
  void begin(const SnapshotHeader& header);

  // The buffer the next record's pose bytes go into before append(); its contents are
  // unspecified until written (it recycles an earlier record's buffer).
  std::vector<uint8_t>& next_pose();
  // What appending the next record (its pose in next_pose()) would add to bound_bytes().
  std::size_t next_record_cost() const {
    const std::size_t pose_bytes = record_count_ < records_.size() ? records_[record_count_].pose.size() : 0;
    return fits_current(pose_bytes) ? record_overhead_ + pose_bytes : packet_bound(1, pose_bytes);
  }
  // Appends the next record (its bytes in next_pose(): `root_size` root bytes, then the pose
  // codec's) to the current packet or a new one.
  void append(uint32_t entity_id, uint16_t generation, uint8_t root_size = 0);
  // Removes the newest record (record_count() > 0), restoring the packets as they were.
  void drop_last();

  std::size_t record_count() const { return record_count_; }
  std::span<const EntityPose> records() const { return {records_.data(), record_count_}; }
  std::size_t packet_count() const { return packets_.size(); }
  // Upper bound of the bytes finish() writes, datagram overhead included.
  std::size_t bound_bytes() const { return bound_bytes_; }

  // Encodes the packets (part order). Fails when a record alone does not fit a packet (its
  // pose is too large: docs/protocol.md), when more than 255 parts would be needed, or when
  // max_packet_bytes cannot hold a header and one record.
  Result<std::vector<std::vector<uint8_t>>> finish();
  // The bytes the last successful finish() wrote, plus the datagram overhead of each packet.
  std::size_t written_bytes() const { return written_bytes_; }

 private:
  struct Packet {
    std::size_t first = 0;       // index of its first record
    std::size_t records = 0;
    std::size_t pose_bytes = 0;
  };
  // The bound of one packet's bytes with datagram overhead (snapshot_packet_overhead is
  // affine in the record count: empty_overhead_ + record_overhead_ per record).
  std::size_t packet_bound(std::size_t records, std::size_t pose_bytes) const {
    return empty_overhead_ + record_overhead_ * records + pose_bytes + datagram_overhead_;
  }
  // Whether a record of `pose_bytes` joins the current packet.
  bool fits_current(std::size_t pose_bytes) const {
    const Packet& current = packets_.back();
    return empty_overhead_ + record_overhead_ * (current.records + 1) + current.pose_bytes + pose_bytes <=
           max_packet_bytes_;
  }

  std::size_t max_packet_bytes_;
  std::size_t datagram_overhead_;
  std::size_t empty_overhead_;   // snapshot_packet_overhead(0)
  std::size_t record_overhead_;  // what each record adds to it
  SnapshotHeader header_;
  std::vector<EntityPose> records_;  // [0, record_count_) are this snapshot's; the rest recycled
  std::size_t record_count_ = 0;
  std::vector<Packet> packets_;
  std::size_t bound_bytes_ = 0;
  std::size_t oversized_ = SIZE_MAX;  // index of the first record too large for any packet
  std::size_t written_bytes_ = 0;
};

}  // namespace posecast::protocol
