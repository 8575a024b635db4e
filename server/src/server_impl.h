#pragma once
// Internal: Server::Impl, the server assembled from its stages:
//   Connections  (connections.h)  session layer: handshake, allowances, timeouts, sends;
//   PoseMirror   (pose_mirror.h)  the World's entities as records, poses quantised in its pass;
//   Replicator   (replicator.h)   per client: interest, budget, references, snapshot contents;
// plus the embedding API's queue (server_api.cpp) and the tick, loop and metrics (server.cpp).
// Impl owns the World, the socket and the stages, and routes the session layer's events.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <asio/steady_timer.hpp>

#include "connections.h"
#include "hit_history.h"
#include "hit_query.h"
#include "pose_formats.h"
#include "pose_mirror.h"
#include "posecast/net/network_simulator.h"
#include "posecast/net/udp_transport.h"
#include "posecast/server/server.h"
#include "replicator.h"
#include "tick_stats.h"

namespace posecast::server {

// Submitter ids for World::submit (sim/command_queue.h: one id per source, used in one order).
inline constexpr uint32_t kApiSubmitter = 1;
inline constexpr uint32_t kClientSubmitterBase = 1000;
inline constexpr sim::EntityId kFirstApiEntityId = 1'000'000;

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
struct OpAdmission { std::optional<protocol::Disconnect> refusal; };  // nullopt: accept
struct OpHitRight { uint32_t client; bool allowed; };
using ApiOp = std::variant<sim::Command, OpSetPosition, OpGrant, OpRevoke, OpInterest,
                           OpBandwidth, OpSendRate, OpKick, OpAdmission, OpHitRight>;

// A client's right to fire hit queries and its rate window.
struct HitShooter {
  std::optional<bool> allowed;  // Server::allow_hit_queries' word; unset: ServerOptions::hit_right
  int64_t window_start_us = 0;
  uint32_t fired = 0;  // queries in the window
};

// ---- The server ------------------------------------------------------------------------------

struct Server::Impl final : ConnectionEvents {
  Impl(asio::io_context& io_context, const ServerOptions& opts);
  ~Impl() override;

  asio::io_context& io;
  ServerOptions options;
  std::unique_ptr<sim::World> world;
  std::vector<std::shared_ptr<const Model>> models;
  PoseFormats formats;
  std::vector<protocol::AssetInfo> manifest;

  net::UdpTransport transport;
  std::unique_ptr<net::NetworkSimulator> simulator;
  net::DatagramChannel* channel = nullptr;

  ServerMetrics counters;  // live, tick thread
  // The stages (made by Server::create once the World, formats and socket exist).
  std::unique_ptr<Connections> connections;
  std::unique_ptr<PoseMirror> mirror;
  std::unique_ptr<Replicator> replicator;
  std::vector<RetiredEntity> retired;  // sync scratch
  // Hit queries (server_hits.cpp): null when hit_history_us is 0.
  std::unique_ptr<HitHistory> hit_history;
  std::unique_ptr<HitQuery> hit_query;
  std::map<uint32_t, HitShooter> shooters;  // by client id

  // Owners' commands (owner_commands.cpp): waiting for their World tick, in arrival order;
  // and per client the newest sequence processed (applied or refused) by the ticks run.
  struct WaitingCommand {
    uint32_t client = 0;
    uint64_t world_tick = 0;  // applied (or refused) just before this World tick runs
    protocol::ClientCommand command;
    std::optional<DropReason> refused;  // refused on arrival: only its sequence is processed
  };
  std::vector<WaitingCommand> waiting_commands;
  std::map<uint32_t, uint32_t> processed_sequences;  // by client id

  std::atomic<sim::EntityId> next_api_id{kFirstApiEntityId};
  std::mutex api_mutex;
  std::vector<ApiOp> api_ops;
  std::vector<ApiOp> api_ops_taken;  // swapped in at the tick boundary

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
  std::function<void(const ClientInfo&, const protocol::ReplayControl&)> replay_control_callback;

  TickStats interval_stats;
  mutable std::mutex published_mutex;
  ServerMetrics published;
  std::vector<ClientInfo> published_clients;

  Server* self = nullptr;

  // server.cpp
  // Builds the formats, manifest and World models; fails as Server::create documents.
  Status add_models(std::vector<std::shared_ptr<const Model>> given);
  // Opens the socket (behind the simulator when configured) and makes the stages.
  Status open(const ServerOptions& opts);
  void poll(int64_t now_us);
  // Advances the session tick for this tick() and returns it (see session_tick_offset).
  uint32_t begin_session_tick();
  // The session tick the next tick() will use (see session_tick_offset).
  uint32_t next_session_tick() const;
  void record_phases(int64_t started, int64_t polled, int64_t world_start, int64_t world_end);
  void arm_readable();
  // Copies the live counters to what metrics() and clients() return. `may_skip` (the tick
  // path): skipped when a reader holds the lock; the next publication carries the values.
  void publish(bool may_skip = false);
  void loop_step();
  ClientInfo info(const ClientConnection& connection, const ClientReplica* replica) const;
  // server_hits.cpp
  Status open_hits();
  HitResult answer_hit(HitRay ray, int64_t view_us, uint32_t as_client);
  // A client's query: its right and rate first (now_us: the tick's time).
  HitResult client_hit(uint32_t client, HitRay ray, int64_t view_us, int64_t now_us);
  bool may_fire(uint32_t client, const HitShooter& shooter) const;
  // server_api.cpp
  void apply_api_ops();
  void apply_entity_ops(int64_t now_us);
  void queue(ApiOp op);

  // ConnectionEvents (server.cpp)
  void on_connected(ClientConnection& client, int64_t now_us) override;
  void on_disconnected(const ClientConnection& client, protocol::DisconnectReason reason) override;
  bool on_ack(ClientConnection& client, const protocol::Ack& ack, int64_t now_us) override;
  std::optional<DropReason> on_command(ClientConnection& client, const protocol::ClientCommand& command) override;
  // Translates and submits the waiting commands due at the World's next tick (at that tick's
  // state, as a predicting client does), in arrival order.
  void apply_client_commands();
  // Sends each client due a snapshot this tick an OwnerState per entity it owns.
  void send_owner_states(uint32_t tick, int64_t now_us);
  void forget_client_commands(uint32_t client);
  bool accepts_replay_control() const override { return static_cast<bool>(replay_control_callback); }
  void on_replay_control(ClientConnection& client, const protocol::ReplayControl& control) override;
  protocol::HitResult on_hit_query(ClientConnection& client, const protocol::HitQuery& query, int64_t now_us) override;
};


}  // namespace posecast::server
