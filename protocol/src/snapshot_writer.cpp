#include "posecast/protocol/snapshot_writer.h"

#include <string>

namespace posecast::protocol {

SnapshotWriter::SnapshotWriter(std::size_t max_packet_bytes, std::size_t datagram_overhead)
    : max_packet_bytes_(max_packet_bytes),
      datagram_overhead_(datagram_overhead),
      empty_overhead_(snapshot_packet_overhead(0)),
      record_overhead_(snapshot_packet_overhead(1) - snapshot_packet_overhead(0)) {
  begin(SnapshotHeader{});
}

void SnapshotWriter::begin(const SnapshotHeader& header) {
  header_ = header;
  record_count_ = 0;
  packets_.assign(1, Packet{});
  bound_bytes_ = packet_bound(0, 0);
  oversized_ = SIZE_MAX;
  written_bytes_ = 0;
}

std::vector<uint8_t>& SnapshotWriter::next_pose() {
  if (records_.size() <= record_count_) records_.emplace_back();
  return records_[record_count_].pose;
}

void SnapshotWriter::append(uint32_t entity_id, uint16_t generation, uint8_t root_size) {
  EntityPose& record = records_[record_count_];  // next_pose() made it
  record.entity_id = entity_id;
  record.generation = generation;
  record.root_size = root_size;
  const std::size_t pose_bytes = record.pose.size();
  bound_bytes_ += next_record_cost();
  if (!fits_current(pose_bytes)) {
    // A record too large even for an empty packet makes finish() fail; it is still counted
    // (as a packet of its own) so the bound stays an upper bound of what was asked.
    if (packets_.back().records == 0 || empty_overhead_ + record_overhead_ + pose_bytes > max_packet_bytes_) {
      if (oversized_ == SIZE_MAX) oversized_ = record_count_;
    }
    packets_.push_back(Packet{record_count_, 0, 0});
  }
  ++packets_.back().records;
  packets_.back().pose_bytes += pose_bytes;
  ++record_count_;
}

void SnapshotWriter::drop_last() {
  if (record_count_ == 0) return;
  --record_count_;
  const std::size_t pose_bytes = records_[record_count_].pose.size();
  Packet& current = packets_.back();
  bound_bytes_ -= packet_bound(current.records, current.pose_bytes);
  --current.records;
  current.pose_bytes -= pose_bytes;
  if (current.records == 0 && packets_.size() > 1) {
    packets_.pop_back();
  } else {
    bound_bytes_ += packet_bound(current.records, current.pose_bytes);
  }
  if (oversized_ == record_count_) oversized_ = SIZE_MAX;
}

Result<std::vector<std::vector<uint8_t>>> SnapshotWriter::finish() {
  written_bytes_ = 0;
  if (max_packet_bytes_ < snapshot_packet_overhead(1) + 1) {
    return Error{"snapshot packets: max_packet_bytes " + std::to_string(max_packet_bytes_) +
                 " cannot hold a snapshot header and one record"};
  }
  if (oversized_ != SIZE_MAX) {
    const EntityPose& record = records_[oversized_];
    return Error{"snapshot packets: entity " + std::to_string(record.entity_id) + ": pose of " +
                 std::to_string(record.pose.size()) + " bytes does not fit a " +
                 std::to_string(max_packet_bytes_) + "-byte packet"};
  }
  if (packets_.size() > 255) {
    return Error{"snapshot packets: " + std::to_string(packets_.size()) +
                 " parts needed, at most 255 allowed"};
  }
  std::vector<std::vector<uint8_t>> out;
  out.reserve(packets_.size());
  Snapshot part;
  part.server_tick = header_.server_tick;
  part.baseline_tick = header_.baseline_tick;
  part.prior_tick = header_.prior_tick;
  part.older_tick = header_.older_tick;
  part.part_count = static_cast<uint8_t>(packets_.size());
  std::size_t written = 0;
  for (std::size_t p = 0; p < packets_.size(); ++p) {
    part.part_index = static_cast<uint8_t>(p);
    // The round-trip echo rides in part 0 only (one sample per Ack is enough).
    part.ack_echo_us = p == 0 ? header_.ack_echo_us : 0;
    part.ack_hold_us = p == 0 ? header_.ack_hold_us : 0;
    const Packet& packet = packets_[p];
    auto encoded = encode_snapshot(part, records().subspan(packet.first, packet.records));
    if (!encoded) return encoded.error();
    if (encoded.value().size() > max_packet_bytes_) {
      return Error{"snapshot packets: internal size bound exceeded (" +
                   std::to_string(encoded.value().size()) + " bytes)"};
    }
    written += encoded.value().size() + datagram_overhead_;
    out.push_back(std::move(encoded.value()));
  }
  written_bytes_ = written;
  return out;
}

}  // namespace posecast::protocol
