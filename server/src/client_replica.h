#pragma once
// ClientReplica: what the Replicator keeps per connected client -- its send schedule and
// bandwidth budget, its interest, the entities it knows, the snapshots sent to it (with the
// view each gave it, for baselines and acks), the despawns it is owed, and the SessionStatus
// last sent to it.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "connections.h"
#include "entity_record.h"
#include "posecast/protocol/messages.h"
#include "posecast/server/server_types.h"

namespace posecast::server {

// An entity as one client knows it.
struct ClientEntity {
  sim::EntityId id = 0;
  uint16_t generation = 0;
  float priority = 0;             // accumulated while waiting; reset when sent
  bool spawn_sent = false;        // an EntitySpawn went out (a despawn is then owed)
  bool spawn_confirmed = false;   // an acked view contained it
};
// New (unconfirmed) entities per snapshot: a late joiner's first snapshots stay small enough to
// arrive whole under loss, and the rest follow as their spawns are confirmed.
inline constexpr std::size_t kMaxNewEntitiesPerSnapshot = 64;

// A despawn being repeated until three snapshots that carried it were acked.
struct PendingDespawn {
  protocol::EntityDespawn message;
  uint32_t acked_carriers = 0;
  std::vector<uint32_t> carrier_ticks;  // snapshot ticks it was sent with, not yet acked
};
inline constexpr uint32_t kDespawnAckedCarriers = 3;

// Animation events (docs/events.md) held for one client until it acknowledges them: beyond
// this many unacknowledged, new events for that client are dropped (and counted), so a client
// that never acknowledges costs bounded memory.
inline constexpr std::size_t kMaxPendingEvents = 256;

// One entity in a client's view of a sent snapshot: the pose tick it holds there.
struct ViewEntry {
  sim::EntityId id = 0;
  uint16_t generation = 0;
  uint32_t pose_tick = kNoTick;
};

struct SentSnapshot {
  uint32_t tick = kNoTick;  // kNoTick: unused slot
  uint32_t baseline_tick = kNoTick;
  bool acked = false;
  uint32_t min_pose_tick = kNoTick;  // smallest pose_tick in the view
  std::vector<ViewEntry> view;       // sorted by id: the client's full view of this tick

  // The view's entry for `id`, or nullptr.
  const ViewEntry* find(sim::EntityId id) const;
};

struct ClientReplica {
  ClientConnection* connection = nullptr;  // its session (owned by Connections; outlives this)
  uint32_t id = 0;                         // connection->id

  uint32_t send_rate_hz = 20;
  uint32_t send_interval_ticks = 3;
  uint32_t send_phase = 0;  // sends on ticks with (tick + send_phase) % interval == 0
  uint32_t bandwidth_kbit = 0;
  Interest interest;
  std::vector<sim::EntityId> subscribed_sorted;  // interest.subscribed, sorted, unique

  std::vector<SentSnapshot> ring;  // indexed by (snapshot number % size)
  uint64_t snapshots_sent = 0;
  uint32_t newest_acked = kNoTick;
  uint32_t newest_sent = kNoTick;
  // The newest Ack's echo_us (0 = none pending) and when it was taken: echoed once, with the
  // time held, in the next snapshot's part 0 (docs/session.md, "Round-trip time").
  uint32_t ack_echo_us = 0;
  int64_t ack_echo_taken_us = 0;

  std::vector<ClientEntity> entities;  // sorted by id
  std::vector<PendingDespawn> despawns;

  // Animation events not yet acknowledged: sequences events_acked + 1, + 2, ... (numbered for
  // this client from 1, no gaps); every snapshot repeats a prefix of them until an Ack's
  // events_received covers it.
  std::deque<protocol::WireEvent> pending_events;
  uint32_t events_acked = 0;

  // What this tick's snapshot building produced, sent and counted afterwards on the ticking
  // thread (building runs in parallel; the socket and the counters are not shared).
  std::vector<std::vector<uint8_t>> outbox;
  struct Tally {
    uint64_t snapshots = 0, snapshot_packets = 0, records = 0, records_from_rest = 0;
    uint64_t records_deferred = 0, spawn_messages = 0, despawn_messages = 0;
    uint64_t event_messages = 0, events_sent = 0;
  } tally;

  // Token bucket smoothing the budget: refills at the budget rate, holds a few snapshots'
  // worth, so a record larger than one snapshot's share (a rest-coded pose) still goes out.
  double budget_tokens = -1;  // < 0: not started
  int64_t budget_refilled_us = 0;

  // SessionStatus (docs/session.md): the owned list last sent, the ownership_version it was
  // computed at, how many snapshots still carry it after a change, and when it last went out.
  std::vector<uint32_t> owned_sent;
  uint64_t status_version = UINT64_MAX;  // PoseMirror::ownership_version the list was built at
  uint64_t replay_version_sent = 0;      // replay status version last announced
  uint32_t status_repeats = 0;
  int64_t last_status_us = INT64_MIN;

  bool due(uint32_t tick) const { return (tick + send_phase) % send_interval_ticks == 0; }
  SentSnapshot* find_sent(uint32_t tick);
  ClientEntity* find_entity(sim::EntityId entity_id);
};

}  // namespace posecast::server
