#pragma once
// Replicator: decides, per client, what each snapshot carries and writes it (docs/session.md,
// "Snapshots and acks"; docs/server.md, "Interest and budget"). For each client due on a tick
// it chooses the references (the three newest acked snapshots within the age limit), the
// allowance (token bucket and one-second window), the candidates (interest), their order
// (accumulated priority), the records that fit, each pose coded against what the client holds
// (through a per-entity cache shared by clients with the same references), and it records the
// client's resulting view. Acks move the references; retired entities become despawns.
//
// Snapshots of the due clients are built in parallel on a pool of ServerOptions::threads
// workers (each client's state is its own; entity encoding caches are locked per entity),
// then sent in client order on the ticking thread: which worker builds a client changes no
// byte. Everything else runs on the tick thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "client_replica.h"
#include "connections.h"
#include "pose_formats.h"
#include "pose_mirror.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/snapshot_writer.h"
#include "posecast/server/server_options.h"
#include "posecast/sim/animation_event.h"
#include "posecast/sim/worker_pool.h"

namespace posecast::server {

class Replicator {
 public:
  // Every reference must outlive the replicator.
  Replicator(const ServerOptions& options, const PoseFormats& formats, PoseMirror& mirror,
             ServerMetrics& counters);

  // ---- Clients, in connection order.
  ClientReplica& add(ClientConnection& connection);
  void remove(uint32_t client_id);
  ClientReplica* find(uint32_t client_id);
  const std::vector<std::unique_ptr<ClientReplica>>& clients() const { return clients_; }
  void set_interest(ClientReplica& client, Interest interest);
  void set_send_rate(ClientReplica& client, uint32_t hz);  // clamped to 1..tick rate
  // An Ack: its echo is kept for the next snapshot, the snapshots it names become references,
  // their entities' spawns confirmed, despawns they carried counted. False when it names a
  // tick never sent (nothing changes).
  bool handle_ack(ClientReplica& client, const protocol::Ack& ack, int64_t now_us);
  // The World tick's animation events, stamped with session tick `tick`: each queued for the
  // clients whose interest holds its entity (kMaxPendingEvents each; the rest dropped and
  // counted). Clients that joined after the tick get none of them.
  void queue_events(std::span<const sim::AnimationEvent> events, uint32_t tick);
  // Entities the mirror retired at `tick`: dropped from every client's table, and a despawn
  // owed to the clients that were sent them.
  void retire(std::span<const RetiredEntity> retired, uint32_t tick);
  // The replay position every SessionStatus carries (Server::set_replay_status).
  void set_replay_status(uint32_t first_tick, uint32_t last_tick, uint32_t tick, int32_t speed_q16);

  // ---- One tick.
  // Tells the mirror which poses the coming World tick quantises: those some client due at
  // `tick` may be sent. False (nothing observed) when no client is due.
  bool choose_poses(uint32_t tick);
  // Builds and sends the snapshots of the clients due at `tick` (a quantising tick only).
  void send_snapshots(uint32_t tick, int64_t now_us, Connections& connections);
  // Keeps the poses sent at `tick` as history and forgets those no client can reference.
  void commit(uint32_t tick);

  uint64_t pose_encodes() const { return pose_encodes_.load(std::memory_order_relaxed); }
  // This tick's snapshot phases, microseconds (metrics); take_phase_times resets them.
  void take_phase_times(int64_t& build_us, int64_t& send_us);

 private:
  struct Candidate {
    float priority = 0;
    uint32_t entity = 0;  // index into the mirror's records
    uint32_t known = 0;   // index into the client's entities
  };
  // The references a snapshot is coded against: the three newest acked snapshots within the
  // age limit, newest first (nullptr: none).
  struct References {
    SentSnapshot* baseline = nullptr;
    SentSnapshot* prior = nullptr;
    SentSnapshot* older = nullptr;
    uint32_t baseline_tick() const { return baseline != nullptr ? baseline->tick : kNoTick; }
    uint32_t prior_tick() const { return prior != nullptr ? prior->tick : kNoTick; }
    uint32_t older_tick() const { return older != nullptr ? older->tick : kNoTick; }
  };
  // Traffic a snapshot carries whatever fits: the session status when due, pending despawns.
  struct Mandatory {
    std::vector<uint8_t> status;
    std::vector<std::vector<uint8_t>> despawns;
    std::vector<uint8_t> events;  // an AnimationEvents datagram, or empty
    uint32_t event_count = 0;
    uint64_t wire_bytes = 0;  // of them all, UDP/IP headers included
  };
  // One worker's scratch (kept between ticks: no steady-state allocation) and pose encoders.
  // On cache lines of its own: side by side, one worker's last vector headers and the next
  // one's first would share a line that both write on every push_back.
  struct alignas(64) SendScratch {
    std::vector<Candidate> candidates;
    std::vector<uint32_t> candidate_entities;
    std::vector<ClientEntity> new_known;
    protocol::SnapshotWriter writer{protocol::kMaxPacketBytes, net::kUdpIpv4HeaderBytes};
    std::vector<bool> record_from_rest;
    std::vector<uint32_t> record_candidates;  // candidate index of each record
    std::vector<ViewEntry> view_scratch;
    // Records this worker encoded first this tick (their variant cache went from empty to
    // one): commit's list of records to commit and reset.
    std::vector<uint32_t> encoded_entities;
    std::vector<std::unique_ptr<protocol::ClipDictionary>> dictionaries;  // [format]
    std::vector<std::unique_ptr<protocol::PoseEncoder>> encoders;         // [format]
  };

  void start_pool();
  static void build_snapshots(void* context, unsigned worker, unsigned workers);
  // ---- One client's snapshot (replicator_snapshot.cpp), in order.
  void send_snapshot(ClientReplica& client, uint32_t tick, int64_t now_us, SendScratch& scratch);
  References choose_references(ClientReplica& client, uint32_t tick) const;
  // Wire bytes this snapshot may use (UINT64_MAX without a budget); refills the bucket.
  uint64_t allowance(ClientReplica& client, int64_t now_us) const;
  // `budget`: the snapshot's allowance; events take at most a quarter of it.
  Mandatory mandatory_traffic(ClientReplica& client, uint32_t tick, int64_t now_us, uint64_t budget);
  // The SessionStatus datagram this client's snapshot carries now, or empty when none is due:
  // three snapshots after a change of its owned list, else one a second.
  std::vector<uint8_t> session_status_for(ClientReplica& client, uint32_t tick, int64_t now_us);
  void gather_candidates(ClientReplica& client, uint32_t tick, SendScratch& scratch) const;
  // Whether the client's interest holds the entity (as gather_candidates chooses).
  bool in_interest(const ClientReplica& client, const EntityRecord& entity) const;
  void meet_new_entities(ClientReplica& client, SendScratch& scratch) const;
  void rank_candidates(ClientReplica& client, SendScratch& scratch) const;
  // Appends to scratch.writer the candidates that fit `allowance` beside `extra_bytes`.
  void select_records(ClientReplica& client, uint32_t tick, const References& refs, uint64_t allowance,
                      uint64_t extra_bytes, SendScratch& scratch);
  EncodedVariant reference_key(const EntityRecord& entity, uint32_t tick, const References& refs) const;
  // The packets and the spawns their records need, dropping records from the end should the
  // real bytes exceed `allowance`. False on an encoding failure (logged; nothing is sent).
  bool write_packets(ClientReplica& client, uint32_t tick, uint64_t allowance, const Mandatory& mandatory,
                     SendScratch& scratch, std::vector<std::vector<uint8_t>>& packets,
                     std::vector<std::vector<uint8_t>>& spawns);
  void queue_datagrams(ClientReplica& client, uint32_t tick, Mandatory& mandatory,
                       std::vector<std::vector<uint8_t>>& spawns, std::vector<std::vector<uint8_t>>& packets,
                       std::size_t records);
  // The client's view of this tick: the records sent, plus what it carries from the baseline
  // view (entities still alive, same generation, not re-sent).
  void record_view(ClientReplica& client, uint32_t tick, const References& refs, SendScratch& scratch);
  // This tick's root and pose of record `index` coded against `key`'s references into `out`
  // (root bytes first, `root_size` of them), through the record's cache. Thread-safe across
  // workers. False on an encoder failure.
  bool encode_record(std::size_t index, const EncodedVariant& key, SendScratch& scratch,
                     std::vector<uint8_t>& out, uint8_t& root_size);
  // The oldest pose tick any client may still code against (commit).
  uint32_t oldest_needed(uint32_t tick) const;

  const ServerOptions& options_;
  const PoseFormats& formats_;
  PoseMirror& mirror_;
  ServerMetrics& counters_;
  std::vector<std::unique_ptr<ClientReplica>> clients_;  // in connection order

  std::vector<SendScratch> send_scratch_;  // [worker]
  std::optional<sim::WorkerPool> send_pool_;
  std::vector<ClientReplica*> due_clients_;
  std::atomic<std::size_t> next_due_client_{0};  // build_snapshots' claim counter
  uint32_t sending_tick_ = 0;
  int64_t sending_now_us_ = 0;
  // One spin lock per entity guarding its encoding cache while clients are built in parallel.
  std::unique_ptr<std::atomic<bool>[]> entity_locks_;
  std::size_t entity_lock_count_ = 0;
  std::atomic<uint64_t> pose_encodes_{0};
  int64_t last_build_us_ = 0, last_send_us_ = 0;
  std::size_t spawn_message_bytes_ = 0;  // an EntitySpawn datagram at its largest

  // Replay fields every SessionStatus carries (kNoTick first tick: a live session).
  protocol::SessionStatus replay_status_;
  uint64_t replay_status_version_ = 0;  // bumped on a change other than the tick advancing
};

}  // namespace posecast::server
