// One client's snapshot, step by step (Replicator::send_snapshot): references, allowance,
// mandatory traffic, candidates, selection within the allowance -- the bytes counted exactly
// as they will leave, with 28 bytes of UDP/IP header per datagram -- packets, queueing, and
// the client's resulting view of this tick.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include <spdlog/spdlog.h>

#include "replicator.h"

namespace posecast::server {
namespace {

constexpr float kSubscribedPriority = 1000.0f;
constexpr float kDistanceScale = 10.0f;  // world units at which priority halves

uint64_t wire(std::size_t payload) { return payload + net::kUdpIpv4HeaderBytes; }

// The view entry of `id` in `snapshot` when it holds the same generation, else nullptr.
const ViewEntry* same_entity(const SentSnapshot* snapshot, const EntityRecord& entity) {
  if (snapshot == nullptr) return nullptr;
  const ViewEntry* entry = snapshot->find(entity.id);
  return entry != nullptr && entry->generation == entity.generation ? entry : nullptr;
}

bool by_id(const ViewEntry& a, const ViewEntry& b) { return a.id < b.id; }

}  // namespace

void Replicator::send_snapshot(ClientReplica& client, uint32_t tick, int64_t now_us, SendScratch& scratch) {
  const References refs = choose_references(client, tick);
  const uint64_t budget = allowance(client, now_us);
  Mandatory mandatory = mandatory_traffic(client, tick, now_us, budget);
  // An empty snapshot (one packet) goes with the mandatory traffic, or nothing does.
  const uint64_t empty_snapshot = wire(protocol::snapshot_packet_overhead(0));
  if (mandatory.wire_bytes + empty_snapshot > budget) {
    ++client.tally.records_deferred;  // not even an empty snapshot fits: wait for the window
    return;
  }
  gather_candidates(client, tick, scratch);
  meet_new_entities(client, scratch);
  rank_candidates(client, scratch);

  protocol::SnapshotHeader header{tick, refs.baseline_tick(), refs.prior_tick(), refs.older_tick()};
  if (client.ack_echo_us != 0) {
    header.ack_echo_us = client.ack_echo_us;
    header.ack_hold_us = static_cast<uint32_t>(
        std::clamp<int64_t>(now_us - client.ack_echo_taken_us, 0, std::numeric_limits<uint32_t>::max()));
    client.ack_echo_us = 0;  // once per Ack
  }
  scratch.writer.begin(header);
  select_records(client, tick, refs, budget, mandatory.wire_bytes, scratch);

  std::vector<std::vector<uint8_t>> packets, spawns;
  if (!write_packets(client, tick, budget, mandatory, scratch, packets, spawns)) return;
  queue_datagrams(client, tick, mandatory, spawns, packets, scratch.writer.record_count());
  record_view(client, tick, refs, scratch);
}

Replicator::References Replicator::choose_references(ClientReplica& client, uint32_t tick) const {
  const uint64_t max_age_ticks = std::min<uint64_t>(
      static_cast<uint64_t>(options_.baseline_max_age_us) * options_.tick_rate_hz / 1'000'000,
      protocol::kMaxReferenceAge);
  SentSnapshot* refs[3] = {nullptr, nullptr, nullptr};  // newest first
  for (SentSnapshot& s : client.ring) {
    if (s.tick == kNoTick || !s.acked || s.tick >= tick || tick - s.tick > max_age_ticks) continue;
    SentSnapshot* candidate = &s;
    for (SentSnapshot*& slot : refs) {
      if (slot == nullptr || candidate->tick > slot->tick) std::swap(slot, candidate);
      if (candidate == nullptr) break;
    }
  }
  return References{refs[0], refs[1], refs[2]};
}

// A token bucket (rate = budget, capacity = four snapshots' share, at least one full packet)
// smooths the budget; the one-second window is the hard limit on top.
uint64_t Replicator::allowance(ClientReplica& client, int64_t now_us) const {
  if (client.bandwidth_kbit == 0) return UINT64_MAX;
  const uint64_t per_second = uint64_t{client.bandwidth_kbit} * 1000 / 8;
  const double sends_per_second =
      static_cast<double>(options_.tick_rate_hz) / static_cast<double>(client.send_interval_ticks);
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
  const uint64_t used = client.connection->window.bytes_in_window(now_us);
  const uint64_t left = used >= per_second ? 0 : per_second - used;
  return std::min(static_cast<uint64_t>(std::max(0.0, client.budget_tokens)), left);
}

Replicator::Mandatory Replicator::mandatory_traffic(ClientReplica& client, uint32_t tick, int64_t now_us,
                                                    uint64_t budget) {
  Mandatory out;
  // Unacknowledged animation events, oldest first, as many as one datagram holds within a
  // quarter of the budget (at least one; docs/events.md): repeated with every snapshot until
  // acked.
  if (!client.pending_events.empty()) {
    constexpr uint64_t kEventBytes = 24;    // one AnimationEventRecord
    constexpr uint64_t kMessageBytes = 64;  // envelope and table, generously
    const uint64_t quarter = budget == UINT64_MAX ? UINT64_MAX : budget / 4;
    uint64_t fits = protocol::kMaxEventsPerMessage;
    if (quarter != UINT64_MAX) {
      fits = quarter > wire(kMessageBytes) ? (quarter - wire(kMessageBytes)) / kEventBytes : 0;
    }
    // At least one, so that a small budget slows events down rather than starving them.
    const std::size_t count = static_cast<std::size_t>(
        std::min<uint64_t>({std::max<uint64_t>(fits, 1), protocol::kMaxEventsPerMessage, client.pending_events.size()}));
    if (count > 0) {
      protocol::AnimationEvents message;
      message.first_sequence = client.events_acked + 1;
      message.events.assign(client.pending_events.begin(),
                            client.pending_events.begin() + static_cast<std::ptrdiff_t>(count));
      Result<std::vector<uint8_t>> bytes = protocol::encode_message(message);
      if (bytes) {
        out.wire_bytes += wire(bytes->size());
        out.events = std::move(bytes).value();
        out.event_count = static_cast<uint32_t>(count);
      }
    }
  }
  out.status = session_status_for(client, tick, now_us);
  if (!out.status.empty()) out.wire_bytes += wire(out.status.size());
  for (const PendingDespawn& d : client.despawns) {
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(d.message);
    if (!bytes) continue;
    out.wire_bytes += wire(bytes->size());
    out.despawns.push_back(std::move(bytes).value());
  }
  return out;
}

// Worker-safe: reads the records, writes only the client.
std::vector<uint8_t> Replicator::session_status_for(ClientReplica& client, uint32_t tick, int64_t now_us) {
  constexpr uint32_t kRepeatsAfterChange = 3;
  constexpr int64_t kRefreshUs = 1'000'000;
  if (client.status_version != mirror_.ownership_version()) {
    client.status_version = mirror_.ownership_version();
    std::vector<uint32_t> owned;
    for (const EntityRecord& entity : mirror_.records()) {  // in id order
      if (entity.owner == client.id && owned.size() < protocol::kMaxOwnedListed) owned.push_back(entity.id);
    }
    if (owned != client.owned_sent) {
      client.owned_sent = std::move(owned);
      client.status_repeats = kRepeatsAfterChange;
    }
  }
  if (client.replay_version_sent != replay_status_version_) {
    client.replay_version_sent = replay_status_version_;
    client.status_repeats = kRepeatsAfterChange;
  }
  // The first snapshot always carries one (INT64_MIN: none sent yet; no subtraction from it).
  const bool refresh_due = client.last_status_us == INT64_MIN || now_us - client.last_status_us >= kRefreshUs;
  if (client.status_repeats == 0 && !refresh_due) return {};
  if (client.status_repeats > 0) --client.status_repeats;
  client.last_status_us = now_us;
  protocol::SessionStatus status = replay_status_;
  status.server_tick = tick;
  status.owned = client.owned_sent;
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(status);
  return bytes ? std::move(bytes).value() : std::vector<uint8_t>{};
}

// Candidates, in id order, among the entities quantised this tick: subscribed, within the
// radius, or everything.
void Replicator::gather_candidates(ClientReplica& client, uint32_t tick, SendScratch& scratch) const {
  const std::vector<EntityRecord>& entities = mirror_.records();
  std::vector<uint32_t>& out = scratch.candidate_entities;
  out.clear();
  const Interest& interest = client.interest;
  if (client.subscribed_sorted.empty() && !interest.use_radius) {
    for (uint32_t i = 0; i < entities.size(); ++i) {
      if (entities[i].current_tick == tick) out.push_back(i);
    }
    return;
  }
  for (sim::EntityId id : client.subscribed_sorted) {
    const std::size_t i = mirror_.find(id);
    if (i < entities.size() && entities[i].current_tick == tick) out.push_back(static_cast<uint32_t>(i));
  }
  if (!interest.use_radius) return;
  const float r2 = interest.radius * interest.radius;
  const std::size_t subscribed = out.size();
  for (uint32_t i = 0; i < entities.size(); ++i) {
    const Vec3& p = entities[i].position;
    const float dx = p.x - interest.center.x, dy = p.y - interest.center.y, dz = p.z - interest.center.z;
    if (entities[i].current_tick == tick && dx * dx + dy * dy + dz * dz <= r2) out.push_back(i);
  }
  std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(subscribed), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// Candidates this client has not met yet join its (id-sorted) table; a reused id restarts.
void Replicator::meet_new_entities(ClientReplica& client, SendScratch& scratch) const {
  const std::vector<EntityRecord>& entities = mirror_.records();
  std::vector<ClientEntity>& new_known = scratch.new_known;
  new_known.clear();
  std::size_t k = 0;
  for (uint32_t e : scratch.candidate_entities) {
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
  if (new_known.empty()) return;
  const std::size_t old_size = client.entities.size();
  client.entities.insert(client.entities.end(), new_known.begin(), new_known.end());
  std::inplace_merge(client.entities.begin(), client.entities.begin() + static_cast<std::ptrdiff_t>(old_size),
                     client.entities.end(),
                     [](const ClientEntity& a, const ClientEntity& b) { return a.id < b.id; });
}

// Priorities accumulate while an entity waits, so nothing starves: subscribed entities gain
// the most per snapshot, others by nearness to the interest centre. Highest first.
void Replicator::rank_candidates(ClientReplica& client, SendScratch& scratch) const {
  const std::vector<EntityRecord>& entities = mirror_.records();
  const Interest& interest = client.interest;
  std::vector<Candidate>& candidates = scratch.candidates;
  candidates.clear();
  std::size_t k = 0, s = 0;
  for (uint32_t e : scratch.candidate_entities) {
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
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return entities[a.entity].id < entities[b.entity].id;
  });
}

EncodedVariant Replicator::reference_key(const EntityRecord& entity, uint32_t tick, const References& refs) const {
  const ViewEntry* base_entry = same_entity(refs.baseline, entity);
  const ViewEntry* prior_entry = base_entry != nullptr ? same_entity(refs.prior, entity) : nullptr;
  const ViewEntry* older_entry = prior_entry != nullptr ? same_entity(refs.older, entity) : nullptr;
  EncodedVariant key;
  key.baseline_pose_tick = base_entry != nullptr ? base_entry->pose_tick : kNoTick;
  key.baseline_age = base_entry != nullptr ? tick - refs.baseline_tick() : 0;
  key.prior_pose_tick = prior_entry != nullptr ? prior_entry->pose_tick : kNoTick;
  key.prior_age = prior_entry != nullptr ? refs.baseline_tick() - refs.prior_tick() : 0;
  key.older_pose_tick = older_entry != nullptr ? older_entry->pose_tick : kNoTick;
  key.older_age = older_entry != nullptr ? refs.prior_tick() - refs.older_tick() : 0;
  return key;
}

// Records in candidate order while the writer's bound (an upper bound of the real bytes),
// the spawns they need and `extra_bytes` fit the allowance.
void Replicator::select_records(ClientReplica& client, uint32_t tick, const References& refs,
                                uint64_t allowance, uint64_t extra_bytes, SendScratch& scratch) {
  protocol::SnapshotWriter& writer = scratch.writer;
  scratch.record_candidates.clear();
  scratch.record_from_rest.clear();
  std::size_t deferred = 0, new_entities = 0;
  const std::vector<Candidate>& candidates = scratch.candidates;
  for (uint32_t c = 0; c < candidates.size(); ++c) {
    EntityRecord& entity = mirror_.records()[candidates[c].entity];
    const ClientEntity& known = client.entities[candidates[c].known];
    if (!known.spawn_confirmed && new_entities >= kMaxNewEntitiesPerSnapshot) {
      ++deferred;
      continue;
    }
    const EncodedVariant key = reference_key(entity, tick, refs);
    uint8_t root_size = 0;
    if (!encode_record(candidates[c].entity, key, scratch, writer.next_pose(), root_size)) continue;
    const uint64_t spawn_cost = known.spawn_confirmed ? 0 : wire(spawn_message_bytes_);
    if (extra_bytes + writer.bound_bytes() + writer.next_record_cost() + spawn_cost > allowance) {
      deferred += candidates.size() - c;
      break;
    }
    extra_bytes += spawn_cost;
    writer.append(entity.id, entity.generation, root_size);
    scratch.record_candidates.push_back(c);
    scratch.record_from_rest.push_back(key.baseline_pose_tick == kNoTick ||
                                       entity.pose_at(key.baseline_pose_tick) == nullptr);
    if (!known.spawn_confirmed) ++new_entities;
  }
  client.tally.records_deferred += deferred;
}

// The bound makes the real size smaller or equal. Should it ever not be, records are dropped
// from the end until it fits: the budget is never exceeded.
bool Replicator::write_packets(ClientReplica& client, uint32_t tick, uint64_t allowance,
                               const Mandatory& mandatory, SendScratch& scratch,
                               std::vector<std::vector<uint8_t>>& packets,
                               std::vector<std::vector<uint8_t>>& spawns) {
  protocol::SnapshotWriter& writer = scratch.writer;
  for (;;) {
    Result<std::vector<std::vector<uint8_t>>> written = writer.finish();
    if (!written) {
      spdlog::error("client {} snapshot {}: {}", client.id, tick, written.error().message);
      return false;
    }
    packets = std::move(written).value();
    spawns.clear();
    uint64_t real = writer.written_bytes();
    for (const auto& bytes : mandatory.despawns) real += wire(bytes.size());
    if (!mandatory.events.empty()) real += wire(mandatory.events.size());
    for (std::size_t r = 0; r < writer.record_count(); ++r) {
      const Candidate& candidate = scratch.candidates[scratch.record_candidates[r]];
      if (client.entities[candidate.known].spawn_confirmed) continue;
      const EntityRecord& entity = mirror_.records()[candidate.entity];
      Result<std::vector<uint8_t>> bytes = protocol::encode_message(
          protocol::EntitySpawn{entity.id, entity.generation, entity.model, entity.rig, entity.spawn_tick});
      if (!bytes) continue;
      real += wire(bytes->size());
      spawns.push_back(std::move(bytes).value());
    }
    if (real <= allowance || writer.record_count() == 0) return true;
    spdlog::warn("client {} snapshot {}: size bound exceeded ({} > {} bytes); dropping a record",
                 client.id, tick, real, allowance);
    writer.drop_last();
    scratch.record_candidates.pop_back();
    scratch.record_from_rest.pop_back();
  }
}

// Queued for sending (send_snapshots sends): the status, despawns, spawns (before the records
// that need them), then the parts.
void Replicator::queue_datagrams(ClientReplica& client, uint32_t tick, Mandatory& mandatory,
                                 std::vector<std::vector<uint8_t>>& spawns,
                                 std::vector<std::vector<uint8_t>>& packets, std::size_t records) {
  for (PendingDespawn& d : client.despawns) d.carrier_ticks.push_back(tick);
  uint64_t spent = 0;
  if (!mandatory.status.empty()) {
    spent += wire(mandatory.status.size());
    client.outbox.push_back(std::move(mandatory.status));
  }
  if (!mandatory.events.empty()) {
    spent += wire(mandatory.events.size());
    client.outbox.push_back(std::move(mandatory.events));
    ++client.tally.event_messages;
    client.tally.events_sent += mandatory.event_count;
  }
  for (auto* group : {&mandatory.despawns, &spawns, &packets}) {
    for (auto& datagram : *group) {
      spent += wire(datagram.size());
      client.outbox.push_back(std::move(datagram));
    }
  }
  if (client.bandwidth_kbit > 0) client.budget_tokens -= static_cast<double>(spent);
  ClientReplica::Tally& tally = client.tally;
  tally.despawn_messages += mandatory.despawns.size();
  tally.spawn_messages += spawns.size();
  ++tally.snapshots;
  tally.snapshot_packets += packets.size();
  tally.records += records;
}

void Replicator::record_view(ClientReplica& client, uint32_t tick, const References& refs, SendScratch& scratch) {
  std::vector<ViewEntry>& view = scratch.view_scratch;
  view.clear();
  for (std::size_t r = 0; r < scratch.writer.record_count(); ++r) {
    const Candidate& cand = scratch.candidates[scratch.record_candidates[r]];
    EntityRecord& entity = mirror_.records()[cand.entity];
    ClientEntity& known = client.entities[cand.known];
    known.priority = 0;
    known.spawn_sent = true;
    // Several workers may mark the same entity: a relaxed atomic store of the same value.
    std::atomic_ref<bool>(entity.sent_this_tick).store(true, std::memory_order_relaxed);
    if (scratch.record_from_rest[r]) ++client.tally.records_from_rest;
    view.push_back(ViewEntry{entity.id, entity.generation, tick});
  }
  std::sort(view.begin(), view.end(), by_id);
  const std::size_t sent_count = view.size();
  if (refs.baseline != nullptr) {
    std::size_t k = 0, r = 0;
    for (const ViewEntry& carried : refs.baseline->view) {
      while (r < sent_count && view[r].id < carried.id) ++r;
      if (r < sent_count && view[r].id == carried.id) continue;
      while (k < client.entities.size() && client.entities[k].id < carried.id) ++k;
      if (k < client.entities.size() && client.entities[k].id == carried.id &&
          client.entities[k].generation == carried.generation) {
        view.push_back(carried);
      }
    }
    std::inplace_merge(view.begin(), view.begin() + static_cast<std::ptrdiff_t>(sent_count), view.end(), by_id);
  }
  SentSnapshot& slot = client.ring[client.snapshots_sent % client.ring.size()];
  slot.tick = tick;
  slot.baseline_tick = refs.baseline_tick();
  slot.acked = false;
  slot.view.swap(view);
  slot.min_pose_tick = kNoTick;
  for (const ViewEntry& e : slot.view) slot.min_pose_tick = std::min(slot.min_pose_tick, e.pose_tick);
  ++client.snapshots_sent;
  client.newest_sent = tick;
}

}  // namespace posecast::server
