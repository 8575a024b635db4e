#pragma once
// Server: the authoritative animation server (docs/server.md, docs/session.md).
//
// It owns a sim::World, a UDP socket on an asio::io_context the caller gives it, and one session
// per connected client. Each tick(now) it reads every waiting datagram, runs one World tick,
// and sends each client whose send phase falls on this tick a snapshot: the quantised poses of
// the entities its interest and bandwidth budget select, delta-coded against the newest
// snapshot that client acked (the Quake 3 model). Nothing reads a clock: `now_us` is the
// caller's monotonic time in microseconds and only drives timeouts, keep-alives, cookies and
// budgets; simulation time is the tick count.
//
// Threads: the embedding API (spawn ... kick, set_*) may be called from any thread; calls are
// queued and take effect at the next tick boundary, in call order per thread. tick(),
// poll_network(), start_loop(), shutdown() and the "tick thread only" accessors belong to one
// thread at a time (the one running the io_context when start_loop is used).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <asio/io_context.hpp>

#include "posecast/hit_geometry.h"
#include "posecast/model.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/result.h"
#include "posecast/server/server_options.h"
#include "posecast/server/server_types.h"
#include "posecast/sim/commands.h"
#include "posecast/sim/world.h"

namespace posecast::server {

class Server {
 public:
  // Builds the world (models registered in order: model id = index), the pose formats, and
  // binds the socket. Errors: an invalid option (named), a model the World or the pose codec
  // refuses, a manifest that does not fit one Welcome datagram, or the socket (address + OS
  // reason). `io` must outlive the server.
  static Result<std::unique_ptr<Server>> create(asio::io_context& io, const ServerOptions& options,
                                                std::vector<std::shared_ptr<const Model>> models);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  net::Endpoint local_endpoint() const;  // the bound address (the real port when 0 was asked)
  const ServerOptions& options() const;

  // ---- Embedding API: any thread; applied at the next tick boundary --------------------------
  // Spawns an entity of `model`/`rig` standing at `position` on the ground (x, z; y is not kept:
  // the World's ground plane), facing +Z, and returns its id (ids count up from
  // 1,000,000 so they never collide with scenario ids below that). An invalid model or rig is
  // rejected by the World at the tick (counted in world().stats()).
  sim::EntityId spawn(sim::ModelId model, uint16_t rig = 0, Vec3 position = {});
  void despawn(sim::EntityId id);
  // Cuts layer `layer` to `motion` / fades it over `duration_us` (sim/commands.h).
  void play(sim::EntityId id, uint8_t layer, const sim::MotionSpec& motion);
  void crossfade(sim::EntityId id, uint8_t layer, const sim::MotionSpec& motion,
                 int64_t duration_us, bool sync_phase = false);
  void set_layer_weight(sim::EntityId id, uint8_t layer, float weight);
  void set_blend_weights(sim::EntityId id, uint8_t layer, std::span<const float> weights);
  void set_speed(sim::EntityId id, uint8_t layer, sim::SpeedQ16 speed);
  // Any other animator command (its tick is replaced by the next tick). A SpawnCommand here
  // uses command.entity as the id: the caller keeps scenario ids and spawn() ids apart.
  void submit(sim::Command command);
  // Teleports the entity to `position` on the ground (x, z), keeping its facing: a
  // sim::TeleportCommand at the next tick (refused and counted for an unknown id or a place
  // outside sim::kWorldHalfExtent). Interest (set_interest's radius) follows the World's roots.
  void set_position(sim::EntityId id, Vec3 position);
  // Ownership: a client may command only the entities it owns (one owner per entity).
  void grant_ownership(uint32_t client_id, sim::EntityId id);
  void revoke_ownership(sim::EntityId id);
  void set_interest(uint32_t client_id, Interest interest);
  void set_client_bandwidth(uint32_t client_id, uint32_t kbit);  // 0 = unlimited
  void set_client_send_rate(uint32_t client_id, uint32_t hz);    // clamped to 1..tick rate
  void kick(uint32_t client_id, std::string reason);
  // Admission of new clients (a draining server, a game server not yet allocated): from the
  // next tick on, a Hello or ChallengeResponse from an address that is not connected gets
  // Disconnect{reason, message} (shortened to fit the request) and is counted as
  // DropReason::kRefused; connected clients are served as before. accept_new_clients() undoes it.
  void refuse_new_clients(protocol::DisconnectReason reason, std::string message);
  void accept_new_clients();

  // Called on the tick thread when a client connects (after its Welcome) or goes away.
  void on_client_connected(std::function<void(const ClientInfo&)> callback);
  void on_client_disconnected(std::function<void(const ClientInfo&, protocol::DisconnectReason)> callback);

  // Replay sessions (posecast-server --replay): a ReplayControl from a connected client is
  // handed to this callback on the tick thread (duplicates, by sequence, are dropped first).
  // Without a callback the server is live and counts them as kUnexpected drops.
  void on_replay_control(std::function<void(const ClientInfo&, const protocol::ReplayControl&)> callback);
  // Tick thread only: the replay position every SessionStatus carries from now on
  // (first_tick == protocol::kNoTick: a live session, the default).
  void set_replay_status(uint32_t first_tick, uint32_t last_tick, uint32_t tick, int32_t speed_q16);

  // ---- Lag-compensated hit queries (docs/hit-queries.md) ----------------------------------
  // Tick thread only. `ray` (origin, direction, length; world units) against every entity's
  // per-joint capsules as it stood at server time `view_us` (sim::tick_start_us of session
  // ticks: a client's render time, its interpolation delay included), re-evaluated from the
  // history; a view time outside the history is clamped to it (counted). A bad ray is refused
  // (HitRefusal::kBadRay, counted). The embedder's own queries need no right and no rate.
  // `as_client`: a connected client's id to answer as that client saw it (each pose derived
  // between the ticks it was sent snapshots on, as it derived it; HitQuery messages do this);
  // 0 (or unknown): between consecutive ticks.
  HitResult hit_query(HitRay ray, int64_t view_us, uint32_t as_client = 0);
  // Any thread, applied at the next tick: whether `client_id` may fire HitQuery messages,
  // overriding ServerOptions::hit_right for that client (by default none may until allowed;
  // refused ones are answered kNoRight and counted).
  void allow_hit_queries(uint32_t client_id, bool allowed);
  // The capsules of (model, rig), for tests and tools; nullptr when unknown or hits are off.
  const HitRig* hit_rig(sim::ModelId model, uint16_t rig) const;

  // ---- Driving: one thread ---------------------------------------------------------------
  // One fixed tick: read the network, apply queued API calls, run the World tick, send the
  // due snapshots, time out silent clients. `now_us` must not go backwards.
  // Snapshot ticks (what clients see, sent_pose, on_pose_quantized) are the World's tick
  // index, unless the caller moved the World between two tick() calls (restore, extra ticks:
  // a replay): they then go on by one per tick() regardless, and entities whose model or rig
  // changed under their id become new generations.
  void tick(int64_t now_us);
  // Reads and handles every waiting datagram (tick() does this first; a loop may call it more
  // often for quicker handshakes). Commands still wait for the next tick.
  void poll_network(int64_t now_us);
  // Drives tick() on `io` at the tick rate from the steady clock (deadlines from the start, so
  // no drift; when more than 5 ticks behind, it skips ahead and counts it). Also handles
  // datagrams as they arrive. `before_tick(tick_index)` runs before each tick (scenario
  // drivers submit there). The caller runs io.run(); shutdown() ends the loop.
  void start_loop(std::function<void(uint64_t)> before_tick = {});
  // Sends Disconnect{kServerShutdown} (three times) to every client, stops the loop and closes
  // the socket. Safe to call more than once.
  void shutdown(int64_t now_us);
  bool running() const;

  // ---- Observation ---------------------------------------------------------------------------
  // Thread-safe copies, updated at the end of every tick.
  ServerMetrics metrics() const;
  std::vector<ClientInfo> clients() const;
  // Metrics with tick p50/p99 over the ticks since the previous call (then reset).
  ServerMetrics take_interval_metrics();

  // Tick thread only.
  sim::World& world();
  const protocol::PoseFormat* pose_format(sim::ModelId model, uint16_t rig) const;
  // The quantised pose the server sent for `id` at snapshot tick `tick`, while it is still in
  // the entity's history (about 1 s). False otherwise.
  bool sent_pose(sim::EntityId id, uint32_t tick, protocol::QuantizedPose& out) const;
  // Called on the tick thread for every pose quantised (only on ticks where a snapshot is due):
  // what clients decode, bit for bit. For tests and recording.
  void on_pose_quantized(std::function<void(uint32_t tick, sim::EntityId, uint16_t generation,
                                            const protocol::QuantizedPose&)> callback);

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace posecast::server
