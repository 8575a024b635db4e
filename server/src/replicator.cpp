#include "replicator.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace posecast::server {
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

const ViewEntry* SentSnapshot::find(sim::EntityId id) const {
  const auto it = std::lower_bound(view.begin(), view.end(), id,
                                   [](const ViewEntry& e, sim::EntityId v) { return e.id < v; });
  return it != view.end() && it->id == id ? &*it : nullptr;
}

SentSnapshot* ClientReplica::find_sent(uint32_t tick) {
  for (SentSnapshot& s : ring) {
    if (s.tick == tick) return &s;
  }
  return nullptr;
}

ClientEntity* ClientReplica::find_entity(sim::EntityId entity_id) {
  const auto it = std::lower_bound(entities.begin(), entities.end(), entity_id,
                                   [](const ClientEntity& e, sim::EntityId v) { return e.id < v; });
  return it != entities.end() && it->id == entity_id ? &*it : nullptr;
}

Replicator::Replicator(const ServerOptions& options, const PoseFormats& formats, PoseMirror& mirror,
                       ServerMetrics& counters)
    : options_(options), formats_(formats), mirror_(mirror), counters_(counters) {}

// ---- Clients --------------------------------------------------------------------------------

ClientReplica& Replicator::add(ClientConnection& connection) {
  auto replica = std::make_unique<ClientReplica>();
  ClientReplica& client = *replica;
  client.connection = &connection;
  client.id = connection.id;
  client.send_interval_ticks = send_interval_ticks(options_.tick_rate_hz, options_.send_rate_hz);
  client.send_rate_hz = std::max<uint32_t>(1, options_.tick_rate_hz / client.send_interval_ticks);
  client.send_phase = options_.spread_send_phases ? client.id % client.send_interval_ticks : 0;
  client.bandwidth_kbit = options_.bandwidth_kbit;
  // The ring holds every snapshot that may still serve as a baseline (baseline_max_age), plus
  // a few in flight.
  const uint64_t age_ticks =
      static_cast<uint64_t>(options_.baseline_max_age_us) * options_.tick_rate_hz / 1'000'000;
  client.ring.resize(std::clamp<std::size_t>(age_ticks / client.send_interval_ticks + 4, 8, 1024));
  clients_.push_back(std::move(replica));
  return client;
}

void Replicator::remove(uint32_t client_id) {
  std::erase_if(clients_, [&](const std::unique_ptr<ClientReplica>& c) { return c->id == client_id; });
}

ClientReplica* Replicator::find(uint32_t client_id) {
  for (auto& client : clients_) {
    if (client->id == client_id) return client.get();
  }
  return nullptr;
}

void Replicator::set_interest(ClientReplica& client, Interest interest) {
  if (interest.subscribed.size() > kMaxSubscribed) interest.subscribed.resize(kMaxSubscribed);
  if (!(interest.radius >= 0)) interest.radius = 0;  // also NaN
  client.subscribed_sorted = interest.subscribed;
  std::sort(client.subscribed_sorted.begin(), client.subscribed_sorted.end());
  client.subscribed_sorted.erase(
      std::unique(client.subscribed_sorted.begin(), client.subscribed_sorted.end()),
      client.subscribed_sorted.end());
  client.interest = std::move(interest);
}

void Replicator::set_send_rate(ClientReplica& client, uint32_t hz) {
  client.send_interval_ticks = send_interval_ticks(options_.tick_rate_hz, hz);
  client.send_phase = options_.spread_send_phases ? client.id % client.send_interval_ticks : 0;
  client.send_rate_hz = std::max<uint32_t>(1, options_.tick_rate_hz / client.send_interval_ticks);
}

bool Replicator::handle_ack(ClientReplica& client, const protocol::Ack& ack, int64_t now_us) {
  if (ack.newest_tick != kNoTick &&
      (client.newest_sent == kNoTick || ack.newest_tick > client.newest_sent)) {
    return false;
  }
  // Animation events: everything up to events_received arrived. A count past what was queued
  // is a confused or hostile client: taken as far as what exists.
  if (ack.events_received > client.events_acked) {
    const uint64_t done = std::min<uint64_t>(ack.events_received - client.events_acked, client.pending_events.size());
    client.pending_events.erase(client.pending_events.begin(),
                                client.pending_events.begin() + static_cast<std::ptrdiff_t>(done));
    client.events_acked += static_cast<uint32_t>(done);
  }
  if (ack.echo_us != 0) {  // keep-alives before anything completed carry one too
    client.ack_echo_us = ack.echo_us;
    client.ack_echo_taken_us = now_us;
  }
  if (ack.newest_tick == kNoTick) return true;  // the client holds no complete snapshot yet
  for (int i = -1; i < 32; ++i) {
    uint32_t tick;
    if (i < 0) {
      tick = ack.newest_tick;
    } else {
      if (((ack.previous_mask >> i) & 1u) == 0) continue;
      if (ack.newest_tick < static_cast<uint32_t>(i) + 1) break;
      tick = ack.newest_tick - 1 - static_cast<uint32_t>(i);
    }
    SentSnapshot* sent = client.find_sent(tick);
    if (sent == nullptr || sent->acked) continue;
    sent->acked = true;
    if (client.newest_acked == kNoTick || tick > client.newest_acked) client.newest_acked = tick;
    // Every entity in an acked view is known to the client: its spawn arrived.
    for (const ViewEntry& entry : sent->view) {
      ClientEntity* known = client.find_entity(entry.id);
      if (known != nullptr && known->generation == entry.generation) known->spawn_confirmed = true;
    }
    for (PendingDespawn& despawn : client.despawns) {
      auto it = std::find(despawn.carrier_ticks.begin(), despawn.carrier_ticks.end(), tick);
      if (it != despawn.carrier_ticks.end()) {
        despawn.carrier_ticks.erase(it);
        ++despawn.acked_carriers;
      }
    }
  }
  std::erase_if(client.despawns, [](const PendingDespawn& d) { return d.acked_carriers >= kDespawnAckedCarriers; });
  return true;
}

void Replicator::queue_events(std::span<const sim::AnimationEvent> events, uint32_t tick) {
  if (events.empty() || clients_.empty()) return;
  counters_.events_emitted += events.size();
  const std::vector<EntityRecord>& records = mirror_.records();
  for (const sim::AnimationEvent& event : events) {
    const std::size_t index = mirror_.find(event.entity);
    if (index >= records.size()) continue;  // not replicated (cannot happen: the mirror has every entity)
    const EntityRecord& entity = records[index];
    protocol::WireEvent wire_event;
    wire_event.tick = tick;
    wire_event.entity_id = event.entity;
    wire_event.generation = entity.generation;
    wire_event.clip = event.clip;
    wire_event.marker = event.marker;
    wire_event.layer = event.layer;
    wire_event.weight_q8 = static_cast<uint8_t>(std::lround(std::clamp(event.weight, 0.0f, 1.0f) * 255.0f));
    wire_event.x = event.x;
    wire_event.z = event.z;
    for (auto& client : clients_) {
      if (!in_interest(*client, entity)) continue;
      if (client->pending_events.size() >= kMaxPendingEvents) {
        ++counters_.events_dropped;  // a client that does not acknowledge: bounded, counted
        continue;
      }
      client->pending_events.push_back(wire_event);
      ++counters_.events_queued;
    }
  }
}

bool Replicator::in_interest(const ClientReplica& client, const EntityRecord& entity) const {
  const Interest& interest = client.interest;
  if (client.subscribed_sorted.empty() && !interest.use_radius) return true;
  if (std::binary_search(client.subscribed_sorted.begin(), client.subscribed_sorted.end(), entity.id)) return true;
  if (!interest.use_radius) return false;
  const Vec3& p = entity.position;
  const float dx = p.x - interest.center.x, dy = p.y - interest.center.y, dz = p.z - interest.center.z;
  return dx * dx + dy * dy + dz * dz <= interest.radius * interest.radius;
}

void Replicator::retire(std::span<const RetiredEntity> retired, uint32_t tick) {
  for (const RetiredEntity& gone : retired) {
    for (auto& client : clients_) {
      ClientEntity* known = client->find_entity(gone.id);
      if (known == nullptr) continue;
      if (known->generation == gone.generation && known->spawn_sent) {
        PendingDespawn despawn;
        despawn.message = protocol::EntityDespawn{gone.id, gone.generation, tick};
        client->despawns.push_back(std::move(despawn));
      }
      client->entities.erase(client->entities.begin() + (known - client->entities.data()));
    }
  }
}

void Replicator::set_replay_status(uint32_t first_tick, uint32_t last_tick, uint32_t tick, int32_t speed_q16) {
  protocol::SessionStatus& status = replay_status_;
  // A change of position or speed goes out with the next snapshots, like an ownership change.
  // Playing moves the tick by at most ceil(speed) per tick: a move otherwise (a seek, a step
  // while paused) is a change too.
  const uint32_t playing_advance = static_cast<uint32_t>((static_cast<int64_t>(speed_q16) + 0xFFFF) >> 16);
  const bool jumped = tick != status.replay_tick &&
                      (speed_q16 <= 0 || tick < status.replay_tick || tick - status.replay_tick > playing_advance);
  if (status.replay_first_tick != first_tick || status.replay_last_tick != last_tick ||
      status.replay_speed_q16 != speed_q16 || jumped) {
    ++replay_status_version_;
  }
  status.replay_first_tick = first_tick;
  status.replay_last_tick = last_tick;
  status.replay_tick = tick;
  status.replay_speed_q16 = speed_q16;
}

// ---- One tick -------------------------------------------------------------------------------

bool Replicator::choose_poses(uint32_t tick) {
  bool any_due = false;
  for (const auto& client : clients_) any_due |= client->due(tick);
  if (!any_due) {
    mirror_.skip_next_tick();
    return false;
  }
  mirror_.clear_wanted();
  bool everything = false;
  for (const auto& client : clients_) {
    if (!client->due(tick)) continue;
    const Interest& interest = client->interest;
    if (client->subscribed_sorted.empty() && !interest.use_radius) {
      everything = true;  // a client without subscription or radius may be sent any entity
      break;
    }
    for (sim::EntityId id : client->subscribed_sorted) mirror_.want(id);
    if (interest.use_radius) mirror_.want_within(interest.center, interest.radius);
  }
  if (everything) mirror_.want_all();
  mirror_.observe_next_tick();
  return true;
}

void Replicator::start_pool() {
  send_pool_.emplace(options_.threads);
  send_scratch_.resize(send_pool_->size());
  for (SendScratch& scratch : send_scratch_) {
    for (std::size_t f = 0; f < formats_.formats.size(); ++f) {
      protocol::ClipDictionary* dictionary = nullptr;
      if (options_.attach_recipes) {
        const Rig& rig = *formats_.rig_of[f];
        scratch.dictionaries.push_back(
            std::make_unique<protocol::ClipDictionary>(rig.skeleton, rig.clips, *formats_.formats[f]));
        dictionary = scratch.dictionaries.back().get();
      }
      scratch.encoders.push_back(std::make_unique<protocol::PoseEncoder>(*formats_.formats[f], dictionary));
    }
  }
}

void Replicator::build_snapshots(void* context, unsigned worker, unsigned /*workers*/) {
  Replicator& self = *static_cast<Replicator*>(context);
  // Clients are claimed one at a time from a shared counter, not in fixed halves: a worker
  // that is slowed or busy (other processes, the kernel's network work) takes fewer, and the
  // phase ends when the work does.
  for (;;) {
    const std::size_t i = self.next_due_client_.fetch_add(1, std::memory_order_relaxed);
    if (i >= self.due_clients_.size()) return;
    self.send_snapshot(*self.due_clients_[i], self.sending_tick_, self.sending_now_us_,
                       self.send_scratch_[worker]);
  }
}

void Replicator::send_snapshots(uint32_t tick, int64_t now_us, Connections& connections) {
  if (!mirror_.quantizing()) return;
  if (spawn_message_bytes_ == 0) {
    const protocol::EntitySpawn largest{0xFFFFFFFFu, 0xFFFF, 0xFFFFFFFFu, 0xFFFF, 0xFFFFFFFFu};
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(largest);
    spawn_message_bytes_ = bytes ? bytes->size() : protocol::kMaxPacketBytes;
  }
  if (!send_pool_) start_pool();
  const std::size_t entities = mirror_.records().size();
  if (entity_lock_count_ < entities) {
    entity_lock_count_ = entities + entities / 2 + 64;
    entity_locks_ = std::make_unique<std::atomic<bool>[]>(entity_lock_count_);
  }
  due_clients_.clear();
  for (auto& client : clients_) {
    if (client->due(tick)) due_clients_.push_back(client.get());
  }
  // Build every due client's datagrams in parallel, then send them here, in client order.
  sending_tick_ = tick;
  sending_now_us_ = now_us;
  const auto build_start = std::chrono::steady_clock::now();
  next_due_client_.store(0, std::memory_order_relaxed);
  send_pool_->run(&Replicator::build_snapshots, this);
  const auto send_start = std::chrono::steady_clock::now();
  for (ClientReplica* client : due_clients_) {
    for (const auto& datagram : client->outbox) connections.send(*client->connection, datagram, now_us);
    client->outbox.clear();
    const ClientReplica::Tally& t = client->tally;
    counters_.snapshots += t.snapshots;
    counters_.snapshot_packets += t.snapshot_packets;
    counters_.records += t.records;
    counters_.records_from_rest += t.records_from_rest;
    counters_.records_deferred += t.records_deferred;
    counters_.spawn_messages += t.spawn_messages;
    counters_.despawn_messages += t.despawn_messages;
    counters_.event_messages += t.event_messages;
    counters_.events_sent += t.events_sent;
    client->tally = ClientReplica::Tally{};
  }
  const auto send_end = std::chrono::steady_clock::now();
  last_build_us_ = std::chrono::duration_cast<std::chrono::microseconds>(send_start - build_start).count();
  last_send_us_ = std::chrono::duration_cast<std::chrono::microseconds>(send_end - send_start).count();
}

void Replicator::take_phase_times(int64_t& build_us, int64_t& send_us) {
  build_us = last_build_us_;
  send_us = last_send_us_;
  last_build_us_ = last_send_us_ = 0;
}

bool Replicator::encode_record(std::size_t index, const EncodedVariant& key, SendScratch& scratch,
                               std::vector<uint8_t>& out, uint8_t& root_size) {
  EntityRecord& entity = mirror_.records()[index];
  out.clear();
  SpinLock lock(entity_locks_[index]);
  for (std::size_t v = 0; v < entity.variant_count; ++v) {
    const EncodedVariant& variant = entity.variants[v];
    if (variant.same_key(key)) {
      out.assign(entity.encoded.begin() + variant.offset, entity.encoded.begin() + variant.offset + variant.size);
      root_size = variant.root_size;
      return true;
    }
  }
  // Each reference is used only when the newer ones are (the codec's rule, and the client's).
  protocol::PoseReference reference;
  reference.tick_rate_hz = options_.tick_rate_hz;
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
  pose_encodes_.fetch_add(1, std::memory_order_relaxed);
  // Recipes are attached only to poses that are exactly their recipe's evaluation
  // (base_layer_recipe), and such poses are quantised without a reference (PoseMirror::
  // observe_pose): their codes are the dictionary's prediction, so the encoder may skip
  // evaluating the clips.
  protocol::PoseEncodeOptions encode_options;
  encode_options.recipe_reproduces_pose = true;
  // The root first (nothing when the client predicts it), then the pose.
  root_size = static_cast<uint8_t>(
      protocol::encode_root(entity.current.root,
                             protocol::root_reference(reference, protocol::reference_count(reference)), out));
  if (!scratch.encoders[entity.format_index]->encode(entity.current, reference, out, encode_options)) {
    out.clear();
    return false;
  }
  if (entity.variant_count == 0) scratch.encoded_entities.push_back(static_cast<uint32_t>(index));
  if (entity.variant_count < kMaxEncodedVariants) {
    EncodedVariant stored = key;
    stored.offset = static_cast<uint32_t>(entity.encoded.size());
    stored.size = static_cast<uint32_t>(out.size());
    stored.root_size = root_size;
    entity.variants[entity.variant_count++] = stored;
    entity.encoded.insert(entity.encoded.end(), out.begin(), out.end());
  }
  return true;
}

uint32_t Replicator::oldest_needed(uint32_t tick) const {
  uint32_t oldest = tick;
  for (const auto& client : clients_) {
    // References now: the newest acked snapshot and the two acked before it; after a newer ack
    // they move up by one. So nothing older than the third newest acked is needed; with fewer
    // acks, any snapshot still in the ring may become a reference.
    uint32_t acked[3] = {kNoTick, kNoTick, kNoTick};  // newest first
    for (const SentSnapshot& s : client->ring) {
      if (s.tick == kNoTick || !s.acked) continue;
      uint32_t t = s.tick;
      for (uint32_t& slot : acked) {
        if (slot == kNoTick || t > slot) std::swap(slot, t);
        if (t == kNoTick) break;
      }
    }
    const uint32_t cut = acked[2] != kNoTick ? acked[2] : 0;
    for (const SentSnapshot& s : client->ring) {
      if (s.tick == kNoTick || s.tick < cut) continue;
      oldest = std::min(oldest, s.min_pose_tick);
    }
  }
  return oldest;
}

void Replicator::commit(uint32_t tick) {
  if (!mirror_.quantizing()) return;
  const uint32_t oldest = oldest_needed(tick);
  // The records encoded this tick (the records sent to anyone are among them); the others'
  // caches are empty and their flags clear. (On the send pool this was no faster on 2 cores:
  // the work is cache misses, about 0.4 us a record, and waking the pool costs as much.)
  for (SendScratch& scratch : send_scratch_) mirror_.commit_sent(scratch.encoded_entities, tick, oldest);
  // Entities no longer sent keep history until the sweep reaches them.
  mirror_.sweep_history(oldest);
}

}  // namespace posecast::server
