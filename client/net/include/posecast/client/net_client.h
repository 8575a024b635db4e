#pragma once
// NetClient: the posecast network client (docs/client.md). Headless, no GL: it connects to a
// server, acks and decodes snapshots into a SnapshotBuffer, and every update() produces each
// entity's palette at the current render time (interpolated, or briefly extrapolated and then
// converged without a pop). Time is passed in (microseconds on any monotonic clock); nothing
// here reads a clock or blocks. One thread drives a client; several clients may share that
// thread, the io_context and an AssetLibrary.
//
//   posecast::client::NetClient client(io, options);
//   if (auto s = client.connect(now); !s) ...;         // opens the socket, sends the hello
//   every frame:  client.update(now);  for (auto& e : client.entities()) draw(e.palette);
//   client.disconnect(now);
//
// Connection (docs/session.md): a hello padded to at least the size of a ServerChallenge (no
// amplification), resent every hello_resend_us; the challenge response likewise until the
// Welcome; the Welcome's manifest is bound to local models by content hash (a mismatch sends
// Disconnect{kAssetMismatch} three times and fails with a message naming the model).
// Datagrams from any address but the server's, oversized, malformed, or unexpected in the
// current state are dropped and counted.

#include <asio/io_context.hpp>
#include <glm/mat4x4.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posecast/client/asset_library.h"
#include "posecast/client/command_sender.h"
#include "posecast/client/entity_registry.h"
#include "posecast/client/playout_clock.h"
#include "posecast/client/pose_track.h"
#include "posecast/client/rate_meter.h"
#include "posecast/client/snapshot_buffer.h"
#include "posecast/net/network_simulator.h"
#include "posecast/net/udp_transport.h"
#include "posecast/protocol/messages.h"
#include "posecast/result.h"

namespace posecast::client {

struct NetClientOptions {
  net::Endpoint server;                 // where to connect
  std::optional<net::Endpoint> local;   // bind address; default: any address, ephemeral port
  std::string name = "posecast-client";
  // Models to check the manifest against. Null: a private library. `model_sources` ("path",
  // "gen-rig:N") are loaded into it by connect(); with load_missing_assets, manifest entries
  // no local model matches are loaded from their source ("gen-rig:N", or the file name under
  // one of asset_dirs) before failing.
  std::shared_ptr<AssetLibrary> assets;
  std::vector<std::string> model_sources;
  std::vector<std::string> asset_dirs;
  bool load_missing_assets = true;
  // Put the socket behind a NetworkSimulator (both directions as configured).
  std::optional<net::SimulatorConfig> simulator;
  uint64_t nonce = 0;                   // 0: drawn from std::random_device

  int64_t hello_resend_us = 250'000;
  int64_t connect_timeout_us = 5'000'000;
  int64_t timeout_us = 5'000'000;       // connected, nothing heard from the server
  int64_t keepalive_us = 250'000;       // an ack at least this often while connected
  // Date each snapshot part by when the channel took it in (the socket's kernel timestamp,
  // or the simulator's delivery time: DatagramChannel::last_receive_wait_us) rather than by
  // update()'s now_us. A frame that stalls (a model upload, a shader compile) then does not
  // read as network jitter and raise the interpolation delay, and frame-rate polling does
  // not add up to a frame of jitter (docs/client.md, "Arrival times"). The socket's
  // timestamps are real time: a caller that passes simulated time to update() over a plain
  // socket (tests, posecast-soak, benchmarks) turns this off.
  bool channel_arrival_times = true;

  SnapshotBufferSettings buffer;
  PlayoutSettings playout;
  PresentSettings present;
  CommandSettings commands;
};

enum class ConnectionState : uint8_t {
  kIdle,             // before connect()
  kSendingHello,
  kSendingResponse,  // challenge answered, waiting for the Welcome
  kConnected,
  kDisconnected,     // left, refused, kicked or timed out: see disconnect_reason()
  kFailed,           // could not connect (socket, models, assets, no answer): see error()
};
const char* to_string(ConnectionState state);

struct ClientStats {
  // Measurements (docs/client.md says how each is made).
  double rtt_ms = -1.0;            // -1 until measured
  double loss_percent = 0.0;       // snapshots lost, over the last 2 s
  double jitter_ms = 0.0;          // 95th percentile arrival spread, last 2 s
  double delay_ms = 0.0;           // newest server time - render time, now
  double target_delay_ms = 0.0;    // what the delay is steering to
  int loss_cover = 0;              // consecutive lost snapshots the delay rides out
  std::size_t buffer_depth = 0;    // buffered snapshot ticks after the render time
  double bytes_in_per_s = 0.0;     // wire bytes (payload + 28 IPv4/UDP header bytes)
  double bytes_out_per_s = 0.0;

  // Counters since construction.
  uint64_t datagrams_in = 0, datagrams_out = 0, bytes_in = 0, bytes_out = 0, send_failures = 0;
  uint64_t snapshot_parts = 0, snapshot_ticks = 0, snapshots_complete = 0, records_decoded = 0;
  uint64_t acks_sent = 0, command_datagrams = 0, hellos_sent = 0, responses_sent = 0;
  uint64_t decode_errors = 0, missing_reference = 0, unknown_entity = 0, stale_records = 0;
  uint64_t duplicate_parts = 0, inconsistent_parts = 0, too_old_parts = 0, duplicate_records = 0;
  uint64_t dropped_oversized = 0, dropped_malformed = 0, dropped_foreign = 0;
  uint64_t dropped_unexpected = 0;  // a valid message the current state does not take
  uint64_t spawns = 0, despawns = 0, unknown_model_spawns = 0;
  uint64_t corrections = 0;         // converging fades started
  std::size_t extrapolating = 0;    // entities extrapolating (or stalled) at the last update
  std::size_t from_recipes = 0;     // entities shown from a render-time recipe at the last update
  // Presented entities whose derived frame (interpolated, extrapolated) could not use a recipe,
  // indexed by RecipeMiss (no recipe, unverified, not derivable; index 0 counts presented
  // entities with no miss).
  uint64_t recipe_misses[4] = {0, 0, 0, 0};
};

// One entity as shown at the last update's render time. Spans stay valid until the next
// update() or until the entity is removed.
struct PresentedEntity {
  uint32_t id = 0;
  uint16_t generation = 0;
  uint32_t model_id = 0;
  uint16_t rig_index = 0;
  const Model* model = nullptr;
  const Skeleton* skeleton = nullptr;
  PresentMode mode = PresentMode::kNone;
  bool correcting = false;
  bool from_recipe = false;  // the server's clips evaluated at the render time (pose_track.h)
  std::span<const Transform> locals;
  std::span<const glm::mat4> palette;  // skeleton->joint_count() matrices
  RecipeMiss recipe_miss = RecipeMiss::kNone;  // why a derived frame was not from a recipe
};

class NetClient {
 public:
  // Keeps a reference to `io`, which must outlive the client. Does not touch the network.
  NetClient(asio::io_context& io, NetClientOptions options);
  ~NetClient();
  NetClient(const NetClient&) = delete;
  NetClient& operator=(const NetClient&) = delete;

  // Loads the model sources, opens the socket and sends the first hello. Fails (state
  // kFailed) with a message naming the model or address. Calling it again after a disconnect
  // starts a fresh connection on the same socket.
  Status connect(int64_t now_us);

  // Receives and handles every waiting datagram, sends acks, keep-alives, resends and
  // commands, detects timeouts, advances the render time and presents every entity.
  void update(int64_t now_us);

  // Sends Disconnect{kClientLeft} three times and stops (state kDisconnected).
  void disconnect(int64_t now_us);

  // Queues a command for an entity this client owns (the server refuses others). Returns its
  // sequence number, or 0 when not connected or too many are in flight.
  uint32_t send_command(const protocol::ClientCommand& command, int64_t now_us);

  // Sends a replay control (pause, resume, step, seek, speed) to a replay server, now and again
  // with the next two updates (the server drops the duplicates by sequence). Returns its
  // sequence number, or 0 when not connected.
  uint32_t send_replay_control(protocol::ReplayControl control, int64_t now_us);

  // The newest SessionStatus received (docs/session.md): the entities this client owns and,
  // in a replay session, the playback position. Default (nothing owned, live) until one arrives.
  const protocol::SessionStatus& session_status() const { return session_status_; }
  bool owns(uint32_t entity_id) const;

  ConnectionState state() const { return state_; }
  bool connected() const { return state_ == ConnectionState::kConnected; }
  const std::string& error() const { return error_; }
  protocol::DisconnectReason disconnect_reason() const { return disconnect_reason_; }
  uint32_t client_id() const { return welcome_.client_id; }
  const protocol::Welcome& welcome() const { return welcome_; }  // valid once connected
  net::Endpoint local_endpoint() const;

  // After update(): the render time (server us) and what each entity shows at it, by id.
  int64_t render_time_us() const { return playout_.render_time_us(); }
  std::span<const PresentedEntity> entities() const { return presented_; }
  const PresentedEntity* find(uint32_t entity_id) const;

  // The palette of an entity at any render time from the buffer alone (interpolation or
  // bounded extrapolation, no correction fade). kNone when there is nothing to show.
  // `palette` must have the entity's joint count.
  PresentMode evaluate_at(uint32_t entity_id, int64_t render_us, std::span<glm::mat4> palette);

  ClientStats stats(int64_t now_us) const;
  const SnapshotBuffer& buffer() const { return buffer_; }
  const EntityRegistry& registry() const { return registry_; }
  const PlayoutClock& playout() const { return playout_; }
  net::DatagramChannel& channel() { return *channel_; }
  const net::NetworkSimulator* simulator() const { return simulator_.get(); }

 private:
  // `arrival_us`: when the datagram arrived (update()'s now_us, or earlier by the channel's
  // wait with channel_arrival_times), for the playout clock and the RTT.
  void handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from, int64_t now_us,
                       int64_t arrival_us);
  void on_challenge(const protocol::ServerChallenge& m, int64_t now_us);
  void on_welcome(const protocol::Welcome& m, int64_t now_us);
  void on_snapshot(const protocol::Snapshot& m, int64_t now_us, int64_t arrival_us);
  void on_disconnect(const protocol::Disconnect& m);
  void send(const protocol::Message& message, int64_t now_us);
  void send_hello(int64_t now_us);
  void send_ack(int64_t now_us);
  void fail(std::string message);
  void present(int64_t now_us);
  void record_rtt(int64_t sample_us);

  asio::io_context& io_;
  NetClientOptions options_;
  std::unique_ptr<net::UdpTransport> transport_;
  std::unique_ptr<net::NetworkSimulator> simulator_;
  net::DatagramChannel* channel_ = nullptr;

  ConnectionState state_ = ConnectionState::kIdle;
  std::string error_;
  protocol::DisconnectReason disconnect_reason_ = protocol::DisconnectReason::kUnspecified;
  uint64_t nonce_ = 0;
  uint64_t token_ = 0;
  int64_t connect_start_us_ = 0;
  int64_t last_handshake_send_us_ = 0;
  int handshake_sends_ = 0;
  int64_t last_receive_us_ = 0;
  int64_t last_ack_us_ = 0;
  bool ack_due_ = false;
  protocol::Welcome welcome_;
  AssetBinding binding_;

  EntityRegistry registry_;
  SnapshotBuffer buffer_;
  PlayoutClock playout_;
  CommandSender commands_;
  protocol::SessionStatus session_status_;
  bool session_status_seen_ = false;
  uint32_t next_replay_sequence_ = 1;
  struct PendingControl {
    protocol::ReplayControl control;
    int sends_left = 0;
  };
  std::vector<PendingControl> pending_controls_;
  std::vector<PresentedEntity> presented_;
  PoseTrack scratch_track_;
  PresentScratch scratch_;  // shared by every entity's PoseTrack in present()
  // present(): registry indices of the entities presented this frame, in order, and of those
  // whose palette is still to compute; PaletteBatchJob's world-matrix scratch.
  std::vector<std::size_t> shown_indices_;
  std::vector<std::size_t> palette_indices_;
  std::vector<float> batch_scratch_;
  void compute_pending_palettes(std::span<ClientEntity> entities);

  // RTT from ack timing: when each complete tick was first acked, and the newest baseline
  // seen in a snapshot header.
  struct AckTime {
    uint32_t tick = protocol::kNoTick;
    int64_t sent_us = 0;
  };
  std::array<AckTime, 64> ack_times_{};
  std::size_t ack_head_ = 0;
  uint32_t newest_baseline_seen_ = protocol::kNoTick;
  bool echo_seen_ = false;  // the server echoes acks: RTT samples from echoes only
  std::array<int64_t, 16> rtt_samples_{};
  std::size_t rtt_count_ = 0;
  std::size_t rtt_head_ = 0;

  RateMeter in_rate_;
  RateMeter out_rate_;
  ClientStats counters_;
  std::array<std::byte, net::kReceiveBufferBytes> receive_buffer_{};
  std::vector<uint8_t> hello_bytes_;
};

}  // namespace posecast::client
