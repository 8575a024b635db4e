#pragma once
// Internal: the Server's state, shared by server.cpp (lifecycle, API, tick), inbound.cpp
// (datagrams, handshake, acks, commands), entities.cpp (world sync, quantisation, history)
// and snapshots.cpp (per-client snapshot building).

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <asio/steady_timer.hpp>

#include "posecast/net/network_simulator.h"
#include "posecast/net/udp_transport.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/snapshot_packets.h"
#include "posecast/server/challenge_cookie.h"
#include "posecast/server/server.h"
#include "posecast/sim/command_queue.h"
#include "posecast/sim/worker_pool.h"
#include "send_window.h"
#include "tick_stats.h"

namespace posecast::server {

using protocol::kNoTick;

// Submitter ids for World::submit (sim/command_queue.h: one id per source, used in one order).
inline constexpr uint32_t kApiSubmitter = 1;
inline constexpr uint32_t kClientSubmitterBase = 1000;
inline constexpr sim::EntityId kFirstApiEntityId = 1'000'000;

// ---- Entities ------------------------------------------------------------------------------

// One quantised pose an entity was sent with, kept while some client may still reference it.
struct HistoryEntry {
  uint32_t tick = kNoTick;
  protocol::QuantizedPose pose;
};

// One cached encoding of this tick's pose against one (baseline, prior) reference.
struct EncodedVariant {
  uint32_t baseline_pose_tick = kNoTick;  // kNoTick: rest
  uint32_t prior_pose_tick = kNoTick;
  uint32_t older_pose_tick = kNoTick;
  uint32_t baseline_age = 0;
  uint32_t prior_age = 0;
  uint32_t older_age = 0;
  uint32_t offset = 0;  // into EntityRecord::encoded
  uint32_t size = 0;
};
inline constexpr std::size_t kMaxEncodedVariants = 6;

struct EntityRecord {
  sim::EntityId id = 0;
  uint16_t generation = 0;
  sim::ModelId model = 0;
  uint16_t rig = 0;
  uint32_t spawn_tick = 0;
  uint32_t changed_tick = kNoTick;  // last tick a command addressed it (PoseRecipe::steady_us)
  uint32_t format_index = 0;  // into Impl::formats
  Vec3 position;
  uint32_t owner = 0;  // client id; 0 = none

  // This tick's quantised pose (valid when current_tick == the tick being sent). After the
  // tick that sent it, commit_history moves it into the history (current_in_history; the
  // history's newest entry then stays until the next pose arrives): last_quantized().
  protocol::QuantizedPose current;
  uint32_t current_tick = kNoTick;
  bool current_in_history = false;
  bool sent_this_tick = false;   // some client got a record: commit `current` to history
  // Poses this entity was sent with: a ring of history.size() slots holding history_size
  // entries, oldest at history_head; bounded (kMaxHistory), pruned by age and by what clients
  // can still reference. A ring so that dropping the oldest moves nothing (a HistoryEntry is
  // about 300 bytes); slots keep their capacity (no allocation when steady).
  std::vector<HistoryEntry> history;
  std::size_t history_head = 0;
  std::size_t history_size = 0;
  // This tick's encodings (cleared each send tick).
  std::array<EncodedVariant, kMaxEncodedVariants> variants{};
  std::size_t variant_count = 0;
  std::vector<uint8_t> encoded;

  const protocol::QuantizedPose* pose_at(uint32_t tick) const;
  // The pose quantised at current_tick (current_tick != kNoTick): `current`, or the newest
  // history entry once committed.
  const protocol::QuantizedPose& last_quantized() const;
  // The k-th oldest history entry, k < history_size.
  HistoryEntry& history_entry(std::size_t k);
  const HistoryEntry& history_entry(std::size_t k) const;
  // Drops the oldest history entry (history_size > 0).
  void drop_oldest_history();
  // A slot for a new newest entry (history_size < kMaxHistory), growing the ring when full.
  HistoryEntry& push_history();
};
inline constexpr std::size_t kMaxHistory = 64;

// ---- Clients -------------------------------------------------------------------------------

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
};

struct ClientSession {
  uint32_t id = 0;
  net::Endpoint endpoint;
  std::string name;
  uint64_t nonce = 0;
  int64_t connected_us = 0;
  int64_t last_receive_us = 0;
  int64_t last_send_us = 0;
  int64_t last_welcome_us = 0;
  std::vector<uint8_t> welcome;  // encoded, for resends

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

  // What this tick's snapshot building produced, sent and counted afterwards on the ticking
  // thread (building runs in parallel; the socket and the counters are not shared).
  std::vector<std::vector<uint8_t>> outbox;
  struct Tally {
    uint64_t snapshots = 0, snapshot_packets = 0, records = 0, records_from_rest = 0;
    uint64_t records_deferred = 0, spawn_messages = 0, despawn_messages = 0;
  } tally;

  SendWindow window;
  // Token bucket smoothing the budget: refills at the budget rate, holds a few snapshots'
  // worth, so a record larger than one snapshot's share (a rest-coded pose) still goes out.
  double budget_tokens = -1;  // < 0: not started
  int64_t budget_refilled_us = 0;
  uint64_t bytes_sent = 0;  // wire bytes

  // SessionStatus (docs/session.md): the owned list last sent, the ownership_version it was
  // computed at, how many snapshots still carry it after a change, and when it last went out.
  std::vector<uint32_t> owned_sent;
  uint64_t status_version = UINT64_MAX;         // ownership_version the list was built at
  uint64_t replay_version_sent = 0;             // replay_status_version last announced
  uint32_t status_repeats = 0;
  int64_t last_status_us = INT64_MIN;

  // Replay controls: sequences at or below the newest seen are duplicates.
  bool any_replay_control = false;
  uint32_t newest_replay_sequence = 0;

  // Commands: sequences at or below the newest seen are stale.
  bool any_command = false;
  uint32_t newest_command_sequence = 0;

  // Per-second allowances for inbound traffic.
  int64_t rate_second = -1;
  uint32_t datagrams_this_second = 0;
  uint32_t malformed_this_second = 0;

  SentSnapshot* find_sent(uint32_t tick);
  ClientEntity* find_entity(sim::EntityId entity_id);
  ClientInfo info() const;
};

// ---- API calls queued from any thread -------------------------------------------------------

struct OpSetPosition { sim::EntityId id; Vec3 position; };
struct OpGrant { uint32_t client; sim::EntityId id; };
struct OpRevoke { sim::EntityId id; };
// (Held by pointer: gcc 12 reports a false maybe-uninitialized when it inlines the move of an
// Interest into the variant.)
struct OpInterest { uint32_t client; std::shared_ptr<Interest> interest; };
struct OpBandwidth { uint32_t client; uint32_t kbit; };
struct OpSendRate { uint32_t client; uint32_t hz; };
struct OpKick { uint32_t client; std::string reason; };
using ApiOp = std::variant<sim::Command, OpSetPosition, OpGrant, OpRevoke, OpInterest,
                           OpBandwidth, OpSendRate, OpKick>;

// ---- The server ------------------------------------------------------------------------------

struct Server::Impl {
  Impl(asio::io_context& io_context, const ServerOptions& opts);

  asio::io_context& io;
  ServerOptions options;
  std::unique_ptr<sim::World> world;
  std::vector<std::shared_ptr<const Model>> models;
  // Pose formats, one per (model, rig), and the index of each: format_of[model][rig].
  std::vector<std::shared_ptr<const protocol::PoseFormat>> formats;
  std::vector<std::vector<uint32_t>> format_of;
  std::vector<const Rig*> format_rig;  // [format]: the rig it was built from
  std::vector<protocol::AssetInfo> manifest;

  net::UdpTransport transport;
  std::unique_ptr<net::NetworkSimulator> simulator;
  net::DatagramChannel* channel = nullptr;
  ChallengeCookie cookie;
  std::size_t challenge_bytes = 0;  // the largest ServerChallenge we send

  // Entities in id order, mirroring the World after every tick.
  std::vector<EntityRecord> entities;
  // entities[i].id for every i, packed: find_entity_index searches these 4-byte ids instead
  // of touching a record of several hundred bytes per probe (each a cache miss at 10,000
  // entities). Rebuilt with `entities` (sync_entities).
  std::vector<sim::EntityId> entity_ids;
  // record_wanted[i] != 0: quantise entities[i] on this tick (some due client may send it).
  // Packed beside the records, as entity_ids, for the World's evaluation threads to read.
  std::vector<uint8_t> record_wanted;
  std::vector<uint32_t> wanted_indices;  // where prepare_quantization set it (cleared by the next)
  // commit_history prunes every entity's history at least once per this many send ticks (the
  // entities sent in a tick are pruned then; the others by this sweep), so a tick touches the
  // records it sent and a slice, not all of them.
  static constexpr std::size_t kHistorySweepTicks = 16;
  std::size_t history_sweep_next = 0;  // the next record the sweep prunes
  std::map<sim::EntityId, uint16_t> last_generation;  // every id ever used (ordered: deterministic)
  std::atomic<sim::EntityId> next_api_id{kFirstApiEntityId};
  std::vector<sim::EntityId> respawned, despawned_now;  // sync scratch

  // Quantisation inside the World's evaluation pass: poses are staged by world index, with a
  // quantizer per (worker, format).
  struct Staged {
    protocol::QuantizedPose pose;
    sim::EntityId id = 0;
    bool valid = false;
  };
  std::vector<Staged> staged;
  // The world indices each World worker staged this tick ([worker]); sync_entities takes the
  // staged poses from these instead of scanning every entry.
  std::vector<std::vector<uint32_t>> staged_indices;
  std::vector<uint32_t> staged_order;  // sync scratch: staged_indices merged, sorted
  uint64_t synced_membership_version = ~uint64_t{0};  // the World's at the last sync
  std::vector<std::vector<std::unique_ptr<protocol::PoseQuantizer>>> quantizers;  // [worker][format]
  bool quantize_this_tick = false;
  bool quantize_unknown = false;  // entities without a record yet (spawned this tick)
  std::atomic<uint64_t> staged_overflow{0};

  std::vector<std::unique_ptr<ClientSession>> clients;  // in connection order
  uint32_t next_client_id = 1;

  std::mutex api_mutex;
  std::vector<ApiOp> api_ops;
  std::vector<ApiOp> api_ops_taken;  // swapped in at the tick boundary

  // Snapshot building runs in parallel over the due clients (send_pool); each worker has its
  // own scratch (kept between ticks: no steady-state allocation) and pose encoders. On cache
  // lines of its own: side by side in `send_scratch`, one worker's last vector headers and the
  // next one's first would share a line that both write on every push_back (the World's
  // EvalScratch, sim/src/evaluator.h, measured what such sharing costs).
  struct Candidate {
    float priority = 0;
    uint32_t entity = 0;  // index into entities
    uint32_t known = 0;   // index into the client's entities
  };
  struct alignas(64) SendScratch {
    std::vector<Candidate> candidates;
    std::vector<uint32_t> candidate_entities;
    std::vector<ClientEntity> new_known;
    std::vector<protocol::EntityPose> records;
    std::vector<bool> record_from_rest;
    std::vector<uint32_t> record_candidates;  // candidate index of each record
    std::vector<ViewEntry> view_scratch;
    // Records this worker encoded first this tick (their variant cache went from empty to
    // one): commit_history's list of records to commit and reset.
    std::vector<uint32_t> encoded_entities;
    std::vector<std::unique_ptr<protocol::ClipDictionary>> dictionaries;  // [format]
    std::vector<std::unique_ptr<protocol::PoseEncoder>> encoders;         // [format]
  };
  std::vector<SendScratch> send_scratch;  // [worker]
  std::optional<sim::WorkerPool> send_pool;
  std::vector<ClientSession*> due_clients;
  std::atomic<std::size_t> next_due_client{0};  // build_snapshots' claim counter
  uint32_t sending_tick = 0;
  int64_t sending_now_us = 0;
  // One spin lock per entity guarding its encoding cache while clients are built in parallel.
  std::unique_ptr<std::atomic<bool>[]> entity_locks;
  std::atomic<uint64_t> pose_encodes{0};
  int64_t last_build_us = 0, last_send_us = 0;  // this tick's snapshot phases (metrics)
  std::size_t entity_lock_count = 0;
  std::vector<std::byte> receive_buffer;
  std::size_t spawn_message_bytes = 0;  // an EntitySpawn datagram at its largest
  // Bumped whenever an owner changes: a grant, a revoke, a client leaving, an owned entity
  // retired (tick thread). Clients whose status was built at an older version rebuild their
  // owned list, so entity churn without owners costs no scan.
  uint64_t ownership_version = 0;
  // Replay fields every SessionStatus carries (kNoTick first tick: a live session); set by
  // Server::set_replay_status on the tick thread.
  protocol::SessionStatus replay_status;
  uint64_t replay_status_version = 0;  // bumped on a change other than the tick advancing

  uint64_t tick_count = 0;   // ticks run by this server
  // The session tick (snapshot ticks, history, acks) is the World's tick index plus this
  // offset. It is 0 unless the embedder moves the World between ticks (posecast-server
  // --replay restores checkpoints, repeats a tick while paused, fast-forwards): clients refuse
  // snapshot ticks that go backwards, so the session tick then simply continues by one.
  int64_t session_tick_offset = 0;
  uint64_t expected_world_tick = 0;  // the World's tick index if nobody moved it (tick_count > 0)
  uint32_t last_session_tick = 0;    // the session tick of the last tick() (tick_count > 0)
  bool world_moved = false;          // this tick: the World was moved since the last tick()
  int64_t last_now_us = 0;
  bool closed = false;
  bool loop_running = false;
  std::unique_ptr<asio::steady_timer> timer;
  std::function<void(uint64_t)> before_tick;
  std::chrono::steady_clock::time_point loop_start;
  uint64_t loop_ticks = 0;
  uint64_t ticks_skipped = 0;

  std::function<void(const ClientInfo&)> connected_callback;
  std::function<void(const ClientInfo&, protocol::DisconnectReason)> disconnected_callback;
  std::function<void(uint32_t, sim::EntityId, uint16_t, const protocol::QuantizedPose&)> pose_callback;
  std::function<void(const ClientInfo&, const protocol::ReplayControl&)> replay_control_callback;

  ServerMetrics counters;  // live, tick thread
  TickStats tick_stats;
  TickStats interval_stats;
  mutable std::mutex published_mutex;
  ServerMetrics published;
  std::vector<ClientInfo> published_clients;

  Server* self = nullptr;

  // server.cpp
  void apply_api_ops(int64_t now_us);
  void apply_entity_ops(int64_t now_us);
  void arm_readable();
  void publish();
  void loop_step();
  // The session tick the next tick() will use (see session_tick_offset).
  uint32_t next_session_tick() const;
  // inbound.cpp
  void poll(int64_t now_us);
  void handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from, int64_t now_us);
  void drop(DropReason reason) { ++counters.drops[static_cast<std::size_t>(reason)]; }
  ClientSession* find_client(const net::Endpoint& endpoint);
  ClientSession* find_client(uint32_t id);
  void reply_unverified(const protocol::Message& message, std::size_t request_bytes,
                        const net::Endpoint& to);
  void handle_hello(const protocol::ClientHello& hello, std::size_t size, const net::Endpoint& from,
                    int64_t now_us);
  void handle_response(const protocol::ChallengeResponse& response, std::size_t size,
                       const net::Endpoint& from, int64_t now_us);
  void handle_ack(ClientSession& client, const protocol::Ack& ack, int64_t now_us);
  void handle_command(ClientSession& client, const protocol::ClientCommand& command);
  bool send(ClientSession& client, std::span<const uint8_t> bytes, int64_t now_us);
  bool send_raw(std::span<const uint8_t> bytes, const net::Endpoint& to);
  void disconnect(std::size_t client_index, protocol::DisconnectReason reason,
                  const std::string& message, int64_t now_us, bool notify_peer);
  void check_timeouts(int64_t now_us);
  // entities.cpp
  void prepare_quantization(uint32_t tick);
  static void observe_pose(void* context, std::size_t index, sim::EntityId id,
                           std::span<const Transform> pose, unsigned worker);
  // The World's PoseInterest: whether this tick needs the pose of the World's entity `index`
  // (a wanted record, or an entity spawned this tick). Evaluation threads; reads only.
  static bool pose_wanted(void* context, std::size_t index, sim::EntityId id);
  // The record of the World's entity `index` with `id`, or entities.size().
  std::size_t record_of(std::size_t index, sim::EntityId id) const;
  void sync_entities(uint32_t tick);
  void commit_history(uint32_t tick);
  // commit_history's per-record work for the records in scratch.encoded_entities, which it
  // empties: a sent pose moves into the history, old entries go, the encoding cache resets.
  void commit_encoded(SendScratch& scratch, uint32_t tick, uint32_t oldest_needed);
  std::size_t find_entity_index(sim::EntityId id) const;  // entities.size() when absent
  // snapshots.cpp
  bool due(const ClientSession& client, uint32_t tick) const;
  // The SessionStatus datagram this client's snapshot carries now, or empty when none is due:
  // three snapshots after a change of its owned list, else one a second. Worker-safe: reads
  // entities, writes only the client.
  std::vector<uint8_t> session_status_for(ClientSession& client, uint32_t tick, int64_t now_us);
  void send_snapshots(uint32_t tick, int64_t now_us);
  void send_snapshot(ClientSession& client, uint32_t tick, int64_t now_us, SendScratch& scratch);
  // This tick's pose of entities[index] coded against what the client holds (`key`: the pose
  // ticks of its baseline/prior/older references, kNoTick for none, and their ages) into `out`,
  // through a per-entity cache so clients with the same references share one encoding.
  // Thread-safe across workers. False on an encoder failure.
  bool encode_record(std::size_t index, const EncodedVariant& key, SendScratch& scratch,
                     std::vector<uint8_t>& out);
  static void build_snapshots(void* context, unsigned worker, unsigned workers);
};

// Ticks between two snapshots for a send rate: rounded, so every 20 Hz client at 60 Hz shares
// the ticks divisible by 3.
uint32_t send_interval_ticks(uint32_t tick_rate_hz, uint32_t send_rate_hz);

// command_translation.cpp: a client's command as an animator command, or why not.
Result<sim::Command> translate_client_command(const protocol::ClientCommand& command,
                                              const sim::World& world, uint64_t tick);

}  // namespace posecast::server
