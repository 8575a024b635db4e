// Snapshots (docs/session.md, "Snapshots and acks"; docs/server.md, "Interest and budget"):
// for each client due this tick, choose the baseline (newest acked snapshot within the age
// limit) and prior, rank the candidate entities by accumulated priority, take them in that
// order while the bytes -- counted exactly as they will leave, with 28 bytes of UDP/IP header
// per datagram -- fit the client's allowance, code each pose against what the client holds,
// and record the client's resulting view of this tick.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include <spdlog/spdlog.h>

#include "server_impl.h"

namespace posecast::server {
namespace {

constexpr float kSubscribedPriority = 1000.0f;
constexpr float kDistanceScale = 10.0f;  // world units at which priority halves

std::size_t wire(std::size_t payload) { return payload + net::kUdpIpv4HeaderBytes; }

const ViewEntry* find_view_entry(const SentSnapshot* snapshot, sim::EntityId id) {
  if (snapshot == nullptr) return nullptr;
  const auto it = std::lower_bound(snapshot->view.begin(), snapshot->view.end(), id,
                                   [](const ViewEntry& e, sim::EntityId v) { return e.id < v; });
  return it != snapshot->view.end() && it->id == id ? &*it : nullptr;
}

}  // namespace

SentSnapshot* ClientSession::find_sent(uint32_t tick) {
  for (SentSnapshot& s : ring) {
    if (s.tick == tick) return &s;
  }
  return nullptr;
}

ClientEntity* ClientSession::find_entity(sim::EntityId entity_id) {
  const auto it = std::lower_bound(entities.begin(), entities.end(), entity_id,
                                   [](const ClientEntity& e, sim::EntityId v) { return e.id < v; });
  return it != entities.end() && it->id == entity_id ? &*it : nullptr;
}

ClientInfo ClientSession::info() const {
  ClientInfo info;
  info.id = id;
  info.endpoint = endpoint;
  info.name = name;
  info.send_rate_hz = send_rate_hz;
  info.bandwidth_kbit = bandwidth_kbit;
  info.bytes_sent = bytes_sent;
  info.snapshots_sent = snapshots_sent;
  info.newest_acked_tick = newest_acked;
  return info;
}

namespace {

// A minimal spin lock: contention is two workers meeting on one entity, for microseconds.
class SpinLock {
 public:
  explicit SpinLock(std::atomic<bool>& flag) : flag_(flag) {
    while (flag_.exchange(true, std::memory_order_acquire)) {
      while (flag_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  ~SpinLock() { flag_.store(false, std::memory_order_release); }
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

 private:
  std::atomic<bool>& flag_;
};

}  // namespace

bool Server::Impl::encode_record(std::size_t index, const EncodedVariant& key, SendScratch& scratch,
                                 std::vector<uint8_t>& out) {
  EntityRecord& entity = entities[index];
  out.clear();
  SpinLock lock(entity_locks[index]);
  for (std::size_t v = 0; v < entity.variant_count; ++v) {
    const EncodedVariant& variant = entity.variants[v];
    if (variant.baseline_pose_tick == key.baseline_pose_tick && variant.prior_pose_tick == key.prior_pose_tick &&
        variant.older_pose_tick == key.older_pose_tick && variant.baseline_age == key.baseline_age &&
        variant.prior_age == key.prior_age && variant.older_age == key.older_age) {
      out.assign(entity.encoded.begin() + variant.offset, entity.encoded.begin() + variant.offset + variant.size);
      return true;
    }
  }
  // Each reference is used only when the newer ones are (the codec's rule, and the client's).
  protocol::PoseReference reference;
  reference.tick_rate_hz = options.tick_rate_hz;
  if (key.baseline_pose_tick != kNoTick) {
    reference.baseline = entity.pose_at(key.baseline_pose_tick);
    reference.baseline_age = key.baseline_age;
  }
  if (reference.baseline != nullptr && key.prior_pose_tick != kNoTick) {
    reference.prior = entity.pose_at(key.prior_pose_tick);
    reference.prior_age = key.prior_age;
  }
  if (reference.prior != nullptr && key.older_pose_tick != kNoTick) {
    reference.older = entity.pose_at(key.older_pose_tick);
    reference.older_age = key.older_age;
  }
  pose_encodes.fetch_add(1, std::memory_order_relaxed);
  // Recipes are attached only to poses that are exactly their recipe's evaluation
  // (base_layer_recipe, entities.cpp), and such poses are quantised without a reference
  // (observe_pose): their codes are the dictionary's prediction, so the encoder may skip
  // evaluating the clips.
  protocol::PoseEncodeOptions encode_options;
  encode_options.recipe_reproduces_pose = true;
  if (!scratch.encoders[entity.format_index]->encode(entity.current, reference, out, encode_options)) {
    out.clear();
    return false;
  }
  if (entity.variant_count == 0) scratch.encoded_entities.push_back(static_cast<uint32_t>(index));
  if (entity.variant_count < kMaxEncodedVariants) {
    EncodedVariant stored = key;
    stored.offset = static_cast<uint32_t>(entity.encoded.size());
    stored.size = static_cast<uint32_t>(out.size());
    entity.variants[entity.variant_count++] = stored;
    entity.encoded.insert(entity.encoded.end(), out.begin(), out.end());
  }
  return true;
}

void Server::Impl::build_snapshots(void* context, unsigned worker, unsigned /*workers*/) {
  Impl& impl = *static_cast<Impl*>(context);
  // Clients are claimed one at a time from a shared counter, not in fixed halves: a worker
  // whose vCPU is slowed or busy (the host's, or the kernel's network work) takes fewer, and
  // the phase ends when the work does. Which worker builds a client changes no byte.
  for (;;) {
    const std::size_t i = impl.next_due_client.fetch_add(1, std::memory_order_relaxed);
    if (i >= impl.due_clients.size()) return;
    impl.send_snapshot(*impl.due_clients[i], impl.sending_tick, impl.sending_now_us, impl.send_scratch[worker]);
  }
}

void Server::Impl::send_snapshots(uint32_t tick, int64_t now_us) {
  if (!quantize_this_tick) return;
  if (spawn_message_bytes == 0) {
    const protocol::EntitySpawn largest{0xFFFFFFFFu, 0xFFFF, 0xFFFFFFFFu, 0xFFFF, 0xFFFFFFFFu};
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(largest);
    spawn_message_bytes = bytes ? bytes->size() : protocol::kMaxPacketBytes;
  }
  if (!send_pool) {
    send_pool.emplace(options.threads);
    send_scratch.resize(send_pool->size());
    for (SendScratch& scratch : send_scratch) {
      for (std::size_t f = 0; f < formats.size(); ++f) {
        protocol::ClipDictionary* dictionary = nullptr;
        if (options.attach_recipes) {
          const Rig& rig = *format_rig[f];
          scratch.dictionaries.push_back(std::make_unique<protocol::ClipDictionary>(rig.skeleton, rig.clips, *formats[f]));
          dictionary = scratch.dictionaries.back().get();
        }
        scratch.encoders.push_back(std::make_unique<protocol::PoseEncoder>(*formats[f], dictionary));
      }
    }
  }
  if (entity_lock_count < entities.size()) {
    entity_lock_count = entities.size() + entities.size() / 2 + 64;
    entity_locks = std::make_unique<std::atomic<bool>[]>(entity_lock_count);
  }
  due_clients.clear();
  for (auto& client : clients) {
    if (due(*client, tick)) due_clients.push_back(client.get());
  }
  // Build every due client's datagrams in parallel (each client's state is its own; entities
  // are read, and their encoding caches are locked), then send them here, in client order.
  sending_tick = tick;
  sending_now_us = now_us;
  const auto build_start = std::chrono::steady_clock::now();
  next_due_client.store(0, std::memory_order_relaxed);
  send_pool->run(&Server::Impl::build_snapshots, this);
  const auto send_start = std::chrono::steady_clock::now();
  for (ClientSession* client : due_clients) {
    for (const auto& datagram : client->outbox) send(*client, datagram, now_us);
    client->outbox.clear();
    const ClientSession::Tally& t = client->tally;
    counters.snapshots += t.snapshots;
    counters.snapshot_packets += t.snapshot_packets;
    counters.records += t.records;
    counters.records_from_rest += t.records_from_rest;
    counters.records_deferred += t.records_deferred;
    counters.spawn_messages += t.spawn_messages;
    counters.despawn_messages += t.despawn_messages;
    client->tally = ClientSession::Tally{};
  }
  const auto send_end = std::chrono::steady_clock::now();
  last_build_us = std::chrono::duration_cast<std::chrono::microseconds>(send_start - build_start).count();
  last_send_us = std::chrono::duration_cast<std::chrono::microseconds>(send_end - send_start).count();
}

std::vector<uint8_t> Server::Impl::session_status_for(ClientSession& client, uint32_t tick, int64_t now_us) {
  constexpr uint32_t kRepeatsAfterChange = 3;
  constexpr int64_t kRefreshUs = 1'000'000;
  if (client.status_version != ownership_version) {
    client.status_version = ownership_version;
    std::vector<uint32_t> owned;
    for (const EntityRecord& entity : entities) {  // in id order
      if (entity.owner == client.id && owned.size() < protocol::kMaxOwnedListed) owned.push_back(entity.id);
    }
    if (owned != client.owned_sent) {
      client.owned_sent = std::move(owned);
      client.status_repeats = kRepeatsAfterChange;
    }
  }
  if (client.replay_version_sent != replay_status_version) {
    client.replay_version_sent = replay_status_version;
    client.status_repeats = kRepeatsAfterChange;
  }
  // The first snapshot always carries one (INT64_MIN: none sent yet; no subtraction from it).
  const bool refresh_due = client.last_status_us == INT64_MIN || now_us - client.last_status_us >= kRefreshUs;
  if (client.status_repeats == 0 && !refresh_due) return {};
  if (client.status_repeats > 0) --client.status_repeats;
  client.last_status_us = now_us;
  protocol::SessionStatus status = replay_status;
  status.server_tick = tick;
  status.owned = client.owned_sent;
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(status);
  return bytes ? std::move(bytes).value() : std::vector<uint8_t>{};
}

void Server::Impl::send_snapshot(ClientSession& client, uint32_t tick, int64_t now_us, SendScratch& scratch) {
  auto& candidates = scratch.candidates;
  auto& candidate_entities = scratch.candidate_entities;
  auto& new_known = scratch.new_known;
  auto& records = scratch.records;
  auto& record_from_rest = scratch.record_from_rest;
  auto& record_candidates = scratch.record_candidates;
  auto& view_scratch = scratch.view_scratch;
  ClientSession::Tally& tally = client.tally;
  // ---- References: the three newest acked snapshots within the age limit (baseline, prior,
  // older; docs/session.md).
  const uint64_t max_age_ticks = std::min<uint64_t>(
      static_cast<uint64_t>(options.baseline_max_age_us) * options.tick_rate_hz / 1'000'000,
      protocol::kMaxReferenceAge);
  SentSnapshot* refs[3] = {nullptr, nullptr, nullptr};
  for (SentSnapshot& s : client.ring) {
    if (s.tick == kNoTick || !s.acked || s.tick >= tick || tick - s.tick > max_age_ticks) continue;
    SentSnapshot* candidate = &s;
    for (SentSnapshot*& slot : refs) {
      if (slot == nullptr || candidate->tick > slot->tick) std::swap(slot, candidate);
      if (candidate == nullptr) break;
    }
  }
  SentSnapshot* baseline = refs[0];
  SentSnapshot* prior = refs[1];
  SentSnapshot* older = refs[2];

  // ---- Allowance for this snapshot, in wire bytes.
  // A token bucket (rate = budget, capacity = four snapshots' share, at least one full packet)
  // smooths the budget; the one-second window is the hard limit on top.
  uint64_t allowance = UINT64_MAX;
  if (client.bandwidth_kbit > 0) {
    const uint64_t per_second = uint64_t{client.bandwidth_kbit} * 1000 / 8;
    const double sends_per_second =
        static_cast<double>(options.tick_rate_hz) / static_cast<double>(client.send_interval_ticks);
    const double share = static_cast<double>(per_second) / sends_per_second;
    const double capacity = std::min(static_cast<double>(per_second),
                                     std::max(4.0 * share, static_cast<double>(wire(protocol::kMaxPacketBytes))));
    if (client.budget_tokens < 0) {
      client.budget_tokens = share;
    } else {
      const double elapsed_s = static_cast<double>(now_us - client.budget_refilled_us) / 1e6;
      client.budget_tokens = std::min(capacity, client.budget_tokens + elapsed_s * static_cast<double>(per_second));
    }
    client.budget_refilled_us = now_us;
    const uint64_t used = client.window.bytes_in_window(now_us);
    const uint64_t left = used >= per_second ? 0 : per_second - used;
    allowance = std::min(static_cast<uint64_t>(std::max(0.0, client.budget_tokens)), left);
  }

  // ---- Mandatory traffic: the session status when due, pending despawns and the (empty)
  // first packet.
  std::vector<uint8_t> status_bytes = session_status_for(client, tick, now_us);
  std::vector<std::vector<uint8_t>> despawn_bytes;
  uint64_t cost = wire(protocol::snapshot_packet_overhead(0));
  if (!status_bytes.empty()) cost += wire(status_bytes.size());
  for (const PendingDespawn& d : client.despawns) {
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(d.message);
    if (!bytes) continue;
    cost += wire(bytes->size());
    despawn_bytes.push_back(std::move(bytes).value());
  }
  if (cost > allowance) {
    ++tally.records_deferred;  // not even an empty snapshot fits: wait for the window
    return;
  }

  // ---- Candidates, in id order: subscribed, within the radius, or everything.
  candidate_entities.clear();
  const Interest& interest = client.interest;
  const bool everything = client.subscribed_sorted.empty() && !interest.use_radius;
  if (everything) {
    for (uint32_t i = 0; i < entities.size(); ++i) {
      if (entities[i].current_tick == tick) candidate_entities.push_back(i);
    }
  } else {
    for (sim::EntityId id : client.subscribed_sorted) {
      const std::size_t i = find_entity_index(id);
      if (i < entities.size() && entities[i].current_tick == tick) candidate_entities.push_back(static_cast<uint32_t>(i));
    }
    if (interest.use_radius) {
      const float r2 = interest.radius * interest.radius;
      const std::size_t subscribed = candidate_entities.size();
      for (uint32_t i = 0; i < entities.size(); ++i) {
        const Vec3& p = entities[i].position;
        const float dx = p.x - interest.center.x, dy = p.y - interest.center.y, dz = p.z - interest.center.z;
        if (entities[i].current_tick == tick && dx * dx + dy * dy + dz * dz <= r2) candidate_entities.push_back(i);
      }
      std::inplace_merge(candidate_entities.begin(),
                         candidate_entities.begin() + static_cast<std::ptrdiff_t>(subscribed),
                         candidate_entities.end());
      candidate_entities.erase(std::unique(candidate_entities.begin(), candidate_entities.end()),
                               candidate_entities.end());
    }
  }
  // Entities this client has not met yet join its (id-sorted) table.
  new_known.clear();
  {
    std::size_t k = 0;
    for (uint32_t e : candidate_entities) {
      const EntityRecord& entity = entities[e];
      while (k < client.entities.size() && client.entities[k].id < entity.id) ++k;
      if (k < client.entities.size() && client.entities[k].id == entity.id) {
        if (client.entities[k].generation != entity.generation) {
          client.entities[k] = ClientEntity{entity.id, entity.generation};  // a reused id
        }
        continue;
      }
      new_known.push_back(ClientEntity{entity.id, entity.generation});
    }
    if (!new_known.empty()) {
      const std::size_t old_size = client.entities.size();
      client.entities.insert(client.entities.end(), new_known.begin(), new_known.end());
      std::inplace_merge(client.entities.begin(), client.entities.begin() + static_cast<std::ptrdiff_t>(old_size),
                         client.entities.end(),
                         [](const ClientEntity& a, const ClientEntity& b) { return a.id < b.id; });
    }
  }
  // Priorities accumulate while an entity waits, so nothing starves: subscribed entities gain
  // the most per snapshot, others by nearness to the interest centre.
  candidates.clear();
  {
    std::size_t k = 0, s = 0;
    for (uint32_t e : candidate_entities) {
      const EntityRecord& entity = entities[e];
      while (client.entities[k].id < entity.id) ++k;
      while (s < client.subscribed_sorted.size() && client.subscribed_sorted[s] < entity.id) ++s;
      const bool subscribed = s < client.subscribed_sorted.size() && client.subscribed_sorted[s] == entity.id;
      float gain = kSubscribedPriority;
      if (!subscribed) {
        const Vec3& p = entity.position;
        const float dx = p.x - interest.center.x, dy = p.y - interest.center.y, dz = p.z - interest.center.z;
        gain = 1.0f / (1.0f + std::sqrt(dx * dx + dy * dy + dz * dz) / kDistanceScale);
      }
      ClientEntity& known = client.entities[k];
      known.priority += gain;
      candidates.push_back(Candidate{known.priority, e, static_cast<uint32_t>(k)});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return entities[a.entity].id < entities[b.entity].id;
  });

  // ---- Selection within the allowance. Packet grouping mirrors encode_snapshot_packets (greedy
  // fill by snapshot_packet_overhead, an upper bound), so `cost` bounds the real bytes.
  const uint32_t baseline_tick = baseline != nullptr ? baseline->tick : kNoTick;
  const uint32_t prior_tick = prior != nullptr ? prior->tick : kNoTick;
  const uint32_t older_tick = older != nullptr ? older->tick : kNoTick;
  std::size_t packet_records = 0, packet_pose_bytes = 0, records_used = 0, new_entities = 0;
  record_candidates.clear();
  record_from_rest.clear();
  std::size_t deferred = 0;
  for (uint32_t c = 0; c < candidates.size(); ++c) {
    EntityRecord& entity = entities[candidates[c].entity];
    const ClientEntity& known = client.entities[candidates[c].known];
    if (!known.spawn_confirmed && new_entities >= kMaxNewEntitiesPerSnapshot) {
      ++deferred;
      continue;
    }
    const ViewEntry* base_entry = find_view_entry(baseline, entity.id);
    if (base_entry != nullptr && base_entry->generation != entity.generation) base_entry = nullptr;
    const ViewEntry* prior_entry = base_entry != nullptr ? find_view_entry(prior, entity.id) : nullptr;
    if (prior_entry != nullptr && prior_entry->generation != entity.generation) prior_entry = nullptr;
    const ViewEntry* older_entry = prior_entry != nullptr ? find_view_entry(older, entity.id) : nullptr;
    if (older_entry != nullptr && older_entry->generation != entity.generation) older_entry = nullptr;
    EncodedVariant key;
    key.baseline_pose_tick = base_entry != nullptr ? base_entry->pose_tick : kNoTick;
    key.baseline_age = base_entry != nullptr ? tick - baseline_tick : 0;
    key.prior_pose_tick = prior_entry != nullptr ? prior_entry->pose_tick : kNoTick;
    key.prior_age = prior_entry != nullptr ? baseline_tick - prior_tick : 0;
    key.older_pose_tick = older_entry != nullptr ? older_entry->pose_tick : kNoTick;
    key.older_age = older_entry != nullptr ? prior_tick - older_tick : 0;
    const uint32_t base_pose = key.baseline_pose_tick;
    if (records.size() <= records_used) records.emplace_back();
    std::vector<uint8_t>& pose = records[records_used].pose;
    if (!encode_record(candidates[c].entity, key, scratch, pose)) continue;
    const uint64_t spawn_cost = known.spawn_confirmed ? 0 : wire(spawn_message_bytes);
    uint64_t delta;
    bool new_packet = false;
    if (protocol::snapshot_packet_overhead(packet_records + 1) + packet_pose_bytes + pose.size() <=
        protocol::kMaxPacketBytes) {
      delta = protocol::snapshot_packet_overhead(packet_records + 1) - protocol::snapshot_packet_overhead(packet_records) +
              pose.size();
    } else {
      new_packet = true;
      delta = wire(protocol::snapshot_packet_overhead(1) + pose.size());
    }
    if (cost + delta + spawn_cost > allowance) {
      deferred += candidates.size() - c;
      break;
    }
    cost += delta + spawn_cost;
    if (new_packet) {
      packet_records = 0;
      packet_pose_bytes = 0;
    }
    ++packet_records;
    packet_pose_bytes += pose.size();
    protocol::EntityPose& record = records[records_used++];
    record.entity_id = entity.id;
    record.generation = entity.generation;
    record_candidates.push_back(c);
    record_from_rest.push_back(base_pose == kNoTick || entity.pose_at(base_pose) == nullptr);
    if (!known.spawn_confirmed) ++new_entities;
  }
  tally.records_deferred += deferred;

  // ---- Encode; the bound above makes the real size smaller or equal. Should it ever not be,
  // records are dropped from the end until it fits: the budget is never exceeded.
  protocol::SnapshotHeader header{tick, baseline_tick, prior_tick, older_tick};
  if (client.ack_echo_us != 0) {
    header.ack_echo_us = client.ack_echo_us;
    header.ack_hold_us = static_cast<uint32_t>(
        std::clamp<int64_t>(now_us - client.ack_echo_taken_us, 0, std::numeric_limits<uint32_t>::max()));
    client.ack_echo_us = 0;  // once per Ack
  }
  std::vector<std::vector<uint8_t>> packets;
  std::vector<std::vector<uint8_t>> spawn_bytes;
  for (;;) {
    Result<std::vector<std::vector<uint8_t>>> encoded = protocol::encode_snapshot_packets(
        header, std::span<const protocol::EntityPose>(records.data(), records_used));
    if (!encoded) {
      spdlog::error("client {} snapshot {}: {}", client.id, tick, encoded.error().message);
      return;
    }
    packets = std::move(encoded).value();
    spawn_bytes.clear();
    uint64_t real = 0;
    for (const auto& bytes : despawn_bytes) real += wire(bytes.size());
    for (const auto& packet : packets) real += wire(packet.size());
    for (std::size_t r = 0; r < records_used; ++r) {
      const ClientEntity& known = client.entities[candidates[record_candidates[r]].known];
      if (known.spawn_confirmed) continue;
      const EntityRecord& entity = entities[candidates[record_candidates[r]].entity];
      Result<std::vector<uint8_t>> bytes = protocol::encode_message(
          protocol::EntitySpawn{entity.id, entity.generation, entity.model, entity.rig, entity.spawn_tick});
      if (!bytes) continue;
      real += wire(bytes->size());
      spawn_bytes.push_back(std::move(bytes).value());
    }
    if (real <= allowance || records_used == 0) break;
    spdlog::warn("client {} snapshot {}: size bound exceeded ({} > {} bytes); dropping a record",
                 client.id, tick, real, allowance);
    --records_used;
    record_candidates.pop_back();
    record_from_rest.pop_back();
  }

  // ---- Queue for sending (send_snapshots sends): despawns, spawns (before the records that
  // need them), then the parts.
  for (PendingDespawn& d : client.despawns) d.carrier_ticks.push_back(tick);
  uint64_t spent = 0;
  if (!status_bytes.empty()) {
    spent += wire(status_bytes.size());
    client.outbox.push_back(std::move(status_bytes));
  }
  for (auto* group : {&despawn_bytes, &spawn_bytes, &packets}) {
    for (auto& datagram : *group) {
      spent += wire(datagram.size());
      client.outbox.push_back(std::move(datagram));
    }
  }
  if (client.bandwidth_kbit > 0) client.budget_tokens -= static_cast<double>(spent);
  tally.despawn_messages += despawn_bytes.size();
  tally.spawn_messages += spawn_bytes.size();
  ++tally.snapshots;
  tally.snapshot_packets += packets.size();
  tally.records += records_used;

  // ---- The client's view of this tick: the records sent, plus what it carries from the
  // baseline view (entities still alive, same generation, not re-sent).
  view_scratch.clear();
  for (std::size_t r = 0; r < records_used; ++r) {
    const Candidate& cand = candidates[record_candidates[r]];
    EntityRecord& entity = entities[cand.entity];
    ClientEntity& known = client.entities[cand.known];
    known.priority = 0;
    known.spawn_sent = true;
    // Several workers may mark the same entity: a relaxed atomic store of the same value.
    std::atomic_ref<bool>(entity.sent_this_tick).store(true, std::memory_order_relaxed);
    if (record_from_rest[r]) ++tally.records_from_rest;
    view_scratch.push_back(ViewEntry{entity.id, entity.generation, tick});
  }
  std::sort(view_scratch.begin(), view_scratch.end(),
            [](const ViewEntry& a, const ViewEntry& b) { return a.id < b.id; });
  const std::size_t sent_count = view_scratch.size();
  if (baseline != nullptr) {
    std::size_t k = 0, r = 0;
    for (const ViewEntry& carried : baseline->view) {
      while (r < sent_count && view_scratch[r].id < carried.id) ++r;
      if (r < sent_count && view_scratch[r].id == carried.id) continue;
      while (k < client.entities.size() && client.entities[k].id < carried.id) ++k;
      if (k < client.entities.size() && client.entities[k].id == carried.id &&
          client.entities[k].generation == carried.generation) {
        view_scratch.push_back(carried);
      }
    }
    std::inplace_merge(view_scratch.begin(), view_scratch.begin() + static_cast<std::ptrdiff_t>(sent_count),
                       view_scratch.end(), [](const ViewEntry& a, const ViewEntry& b) { return a.id < b.id; });
  }
  SentSnapshot& slot = client.ring[client.snapshots_sent % client.ring.size()];
  slot.tick = tick;
  slot.baseline_tick = baseline_tick;
  slot.acked = false;
  slot.view.swap(view_scratch);
  slot.min_pose_tick = kNoTick;
  for (const ViewEntry& e : slot.view) slot.min_pose_tick = std::min(slot.min_pose_tick, e.pose_tick);
  ++client.snapshots_sent;
  client.newest_sent = tick;
}

}  // namespace posecast::server
