#include "raw_client.h"

#include <gtest/gtest.h>

namespace posecast::test {

std::vector<uint8_t> encode(const protocol::Message& message) {
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(message);
  EXPECT_TRUE(bytes.ok()) << (bytes.ok() ? "" : bytes.error().message);
  return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

RawClient::RawClient(asio::io_context& io) : transport_(io) {
  const Status s = transport_.open(net::Endpoint(asio::ip::make_address("127.0.0.1"), 0));
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
}

void RawClient::send_bytes(std::span<const uint8_t> bytes, const net::Endpoint& to) {
  transport_.send_to({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, to);
}

void RawClient::send(const protocol::Message& message, const net::Endpoint& to, std::size_t pad_to) {
  std::vector<uint8_t> bytes = encode(message);
  if (bytes.size() < pad_to) bytes.resize(pad_to, 0);
  send_bytes(bytes, to);
}

void RawClient::drain() {
  std::vector<std::byte> buffer(net::kReceiveBufferBytes);
  for (;;) {
    net::Endpoint from;
    const std::size_t n = transport_.receive_from(buffer, from);
    if (n == 0) break;
    Received r;
    r.bytes.assign(reinterpret_cast<const uint8_t*>(buffer.data()),
                   reinterpret_cast<const uint8_t*>(buffer.data()) + n);
    wire_bytes_ += n + net::kUdpIpv4HeaderBytes;
    Result<protocol::Message> m = protocol::decode_message(r.bytes);
    if (m) {
      r.message = std::move(m).value();
      if (auto* spawn = std::get_if<protocol::EntitySpawn>(&*r.message)) {
        auto it = known.find(spawn->entity_id);
        if (it == known.end() || it->second.first != spawn->generation) {
          known[spawn->entity_id] = {spawn->generation, spawn->model_id};
        }
      }
      if (auto* despawn = std::get_if<protocol::EntityDespawn>(&*r.message)) {
        auto it = known.find(despawn->entity_id);
        if (it != known.end() && it->second.first == despawn->generation) known.erase(it);
      }
      if (!formats_.empty()) {
        if (auto* snapshot = std::get_if<protocol::Snapshot>(&*r.message)) on_snapshot(*snapshot);
      }
    }
    received_.push_back(std::move(r));
  }
}

void RawClient::set_formats(std::vector<const protocol::PoseFormat*> formats, std::vector<const Rig*> rigs,
                            uint32_t tick_rate_hz) {
  formats_ = std::move(formats);
  dictionaries_.clear();
  for (std::size_t i = 0; i < formats_.size() && i < rigs.size(); ++i) {
    dictionaries_.push_back(std::make_unique<protocol::ClipDictionary>(rigs[i]->skeleton, rigs[i]->clips, *formats_[i]));
  }
  tick_rate_hz_ = tick_rate_hz;
}

void RawClient::on_snapshot(const protocol::Snapshot& part) {
  View& view = views[part.server_tick];
  if (view.parts == 0) {
    view.parts = part.part_count;
    view.baseline = part.baseline_tick;
    view.prior = part.prior_tick;
    view.older = part.older_tick;
  }
  if (part.part_index >= 32) {  // this test client tracks at most 32 parts
    view.failed = true;
    return;
  }
  if ((view.parts_seen >> part.part_index) & 1u) return;
  view.parts_seen |= 1u << part.part_index;
  auto held = [&](uint32_t tick, uint32_t id, uint16_t gen) -> const protocol::QuantizedPose* {
    auto v = views.find(tick);
    if (v == views.end() || !v->second.complete) return nullptr;
    auto e = v->second.poses.find(id);
    if (e == v->second.poses.end() || e->second.first != gen) return nullptr;
    return &e->second.second;
  };
  for (const protocol::EntityPose& record : part.entities) {
    auto k = known.find(record.entity_id);
    if (k == known.end() || k->second.first != record.generation || k->second.second >= formats_.size()) {
      view.failed = true;  // the client cannot complete this view; the server repeats the spawn
      ++unknown_entities;
      continue;
    }
    protocol::PoseReference reference;
    reference.tick_rate_hz = tick_rate_hz_;
    if (view.baseline != protocol::kNoTick) {
      reference.baseline = held(view.baseline, record.entity_id, record.generation);
      reference.baseline_age = part.server_tick - view.baseline;
      if (reference.baseline != nullptr && view.prior != protocol::kNoTick) {
        reference.prior = held(view.prior, record.entity_id, record.generation);
        reference.prior_age = view.baseline - view.prior;
      }
      if (reference.prior != nullptr && view.older != protocol::kNoTick) {
        reference.older = held(view.older, record.entity_id, record.generation);
        reference.older_age = view.prior - view.older;
      }
    }
    protocol::QuantizedPose pose;
    const uint32_t model = k->second.second;
    protocol::PoseDecodeInfo info;
    Status s = protocol::decode_pose(*formats_[model], record.pose_bytes(), reference, pose,
                                     protocol::PoseCoding::kRangeCoded,
                                     model < dictionaries_.size() ? dictionaries_[model].get() : nullptr,
                                     &prediction_, &info);
    if (s) {
      s = protocol::decode_root(record.root_bytes(), protocol::root_reference(reference, info.references),
                                pose.root);
    }
    if (!s) {
      view.failed = true;
      if (first_failure.empty()) first_failure = s.error().message;
      ++decode_failures;
      continue;
    }
    view.poses[record.entity_id] = {record.generation, std::move(pose)};
    view.decoded[record.entity_id] = true;
  }
  try_complete(part.server_tick);
}

void RawClient::try_complete(uint32_t tick) {
  View& view = views[tick];
  if (view.complete || view.failed) return;
  if (view.parts_seen != (view.parts >= 32 ? ~0u : ((1u << view.parts) - 1))) return;
  if (view.baseline != protocol::kNoTick) {
    auto base = views.find(view.baseline);
    if (base == views.end() || !base->second.complete) return;
    for (const auto& [id, entry] : base->second.poses) {
      auto k = known.find(id);
      if (k == known.end() || k->second.first != entry.first) continue;  // despawned
      if (!view.poses.count(id)) view.poses[id] = entry;
    }
  }
  view.complete = true;
  if (auto_ack) send(ack(), server);
}

protocol::Ack RawClient::ack() const {
  protocol::Ack ack;
  ack.newest_tick = protocol::kNoTick;
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    if (it->second.complete) {
      ack.newest_tick = it->first;
      break;
    }
  }
  if (ack.newest_tick == protocol::kNoTick) return ack;
  for (uint32_t i = 0; i < 32 && i + 1 <= ack.newest_tick; ++i) {
    auto v = views.find(ack.newest_tick - 1 - i);
    if (v != views.end() && v->second.complete) ack.previous_mask |= 1u << i;
  }
  return ack;
}

}  // namespace posecast::test
