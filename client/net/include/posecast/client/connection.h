#pragma once
// Connection: a client's link to a server (docs/session.md), no presentation. It owns the UDP
// socket (optionally behind a NetworkSimulator), runs the handshake, binds the Welcome's
// manifest to local models, acks snapshots and measures the round trip, sends keep-alives,
// commands, replay controls and hit queries (hit_shots.h), and detects timeouts. What the
// server sends for display (snapshots, spawns, despawns) goes to a Presenter (presenter.h),
// which the connection also asks for the acks to send. Time is passed in; no clock, no blocking.
//
// Handshake: a hello padded to at least the size of a ServerChallenge (no amplification),
// resent every hello_resend_us; the challenge response likewise until the Welcome; the
// Welcome's manifest is bound to local models by content hash (a mismatch sends
// Disconnect{kAssetMismatch} three times and fails with a message naming the model).
// Datagrams from any address but the server's, oversized, malformed, or unexpected in the
// current state are dropped and counted.

#include <asio/io_context.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posecast/client/asset_library.h"
#include "posecast/client/command_sender.h"
#include "posecast/client/hit_shots.h"
#include "posecast/client/presenter.h"
#include "posecast/client/rate_meter.h"
#include "posecast/hit_geometry.h"
#include "posecast/net/network_simulator.h"
#include "posecast/net/udp_transport.h"
#include "posecast/protocol/messages.h"
#include "posecast/result.h"

namespace posecast::client {

struct ConnectionOptions {
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

// The connection's share of a client's statistics (docs/client.md says how each is made); the
// hit query counters are HitShotStats'.
struct ConnectionStats : HitShotStats {
  double rtt_ms = -1.0;            // -1 until measured
  double bytes_in_per_s = 0.0;     // wire bytes (payload + 28 IPv4/UDP header bytes)
  double bytes_out_per_s = 0.0;

  // Counters since construction.
  uint64_t datagrams_in = 0, datagrams_out = 0, bytes_in = 0, bytes_out = 0, send_failures = 0;
  uint64_t acks_sent = 0, command_datagrams = 0, hellos_sent = 0, responses_sent = 0;
  uint64_t dropped_oversized = 0, dropped_malformed = 0, dropped_foreign = 0;
  uint64_t dropped_unexpected = 0;  // a valid message the current state does not take
};

class Connection {
 public:
  // Keeps references to `io` and `presenter`, which must outlive the connection. Does not touch
  // the network.
  Connection(asio::io_context& io, ConnectionOptions options, Presenter& presenter);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Loads the model sources, opens the socket, clears the presenter and sends the first hello.
  // Fails (state kFailed) with a message naming the model or address. Calling it again after a
  // disconnect starts a fresh connection on the same socket.
  Status connect(int64_t now_us);

  // Receives and handles every waiting datagram (the presenter's go to it), sends acks,
  // keep-alives, resends and commands, and detects timeouts. Does not present.
  void update(int64_t now_us);

  // Sends Disconnect{kClientLeft} three times and stops (state kDisconnected).
  void disconnect(int64_t now_us);

  // Queues a command for an entity this client owns (the server refuses others). Returns its
  // sequence number, or 0 when not connected or too many are in flight. With prediction on
  // (PredictionSettings::enabled) and the entity owned, a command whose apply_tick is 0 is
  // stamped with prediction_tick() and applied to the presenter's prediction at once
  // (docs/client.md, "Prediction"); a nonzero apply_tick is sent (and predicted) as given.
  uint32_t send_command(const protocol::ClientCommand& command, int64_t now_us);

  // The server time a command sent at `now_us` is expected to reach the server at: the playout
  // clock's newest server time plus the round trip, the arrival jitter and
  // PredictionSettings::margin_us. The owned entities are shown at this time. -1 until the
  // round trip and the playout clock are known.
  int64_t prediction_time_us(int64_t now_us) const;
  // The tick a command sent at `now_us` is stamped with (Predictor::stamp_tick of
  // prediction_time_us); 0 while that is unknown.
  uint32_t prediction_tick(int64_t now_us) const;
  // The smallest of the last 16 round-trip samples; -1 until one is measured.
  int64_t rtt_us() const;

  // Sends a replay control (pause, resume, step, seek, speed) to a replay server, now and again
  // with the next two updates (the server drops the duplicates by sequence). Returns its
  // sequence number, or 0 when not connected.
  uint32_t send_replay_control(protocol::ReplayControl control, int64_t now_us);

  // Fires a lag-compensated hit query (docs/hit-queries.md): sends a HitQuery for `ray` at
  // `view_us` once (never resent) and returns its sequence (1, 2, 3, ... per connection), which
  // the server's HitResult carries back; 0 when not connected. `view_us` is the moment the
  // shooter saw, on the server's tick clock (server microseconds, sim::tick_start_us): the render
  // time the client presented the frame the shot was aimed at (Presenter::render_time_us(), the
  // NetClient's render_time_us() after that frame's update()). The server rewinds each entity
  // to that time as this client derived it (between the ticks it was sent) and clamps it into
  // the history it holds (HitResult::clamped). The ray is sent as given, NaN included: the
  // server judges it (a bad ray, a client without the right, a rate over the server's limit
  // come back refused).
  uint32_t fire_hit_query(const HitRay& ray, int64_t view_us, int64_t now_us);
  // Moves the HitResults received since the last call, in arrival order, to the end of `out`.
  // At most HitShots::kMaxWaiting wait; older ones are dropped (counted: hit_answers_dropped).
  void take_hit_results(std::vector<protocol::HitResult>& out) { hits_.take(out); }

  // The newest SessionStatus received (docs/session.md): the entities this client owns and,
  // in a replay session, the playback position. Default (nothing owned, live) until one arrives.
  const protocol::SessionStatus& session_status() const { return session_status_; }
  bool owns(uint32_t entity_id) const;

  ConnectionState state() const { return state_; }
  bool connected() const { return state_ == ConnectionState::kConnected; }
  // Why the connection failed or ended, or the latest snapshot decoding problem (for logs).
  const std::string& error() const { return error_; }
  protocol::DisconnectReason disconnect_reason() const { return disconnect_reason_; }
  uint32_t client_id() const { return welcome_.client_id; }
  const protocol::Welcome& welcome() const { return welcome_; }  // valid once connected
  net::Endpoint local_endpoint() const;
  const std::shared_ptr<AssetLibrary>& assets() const { return options_.assets; }

  ConnectionStats stats(int64_t now_us) const;
  net::DatagramChannel& channel() { return *channel_; }
  const net::NetworkSimulator* simulator() const { return simulator_.get(); }

 private:
  Status open_socket();
  // Forgets the last connection's session state.
  void reset_session();
  // Encodes the hello once per connect (padded, see the header comment).
  Status build_hello();
  // `arrival_us`: when the datagram arrived (update()'s now_us, or earlier by the channel's
  // wait with channel_arrival_times), for the playout clock and the RTT.
  void handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from, int64_t now_us,
                       int64_t arrival_us);
  // A valid message, routed by type.
  void dispatch(const protocol::Message& message, int64_t now_us, int64_t arrival_us);
  // Spawns, despawns and session status: taken only while connected.
  template <class Message>
  void on_connected_message(const Message& m, int64_t now_us);
  void on_challenge(const protocol::ServerChallenge& m, int64_t now_us);
  void on_welcome(const protocol::Welcome& m, int64_t now_us);
  void on_snapshot(const protocol::Snapshot& m, int64_t now_us, int64_t arrival_us);
  void on_disconnect(const protocol::Disconnect& m);
  void on_hit_result(const protocol::HitResult& m, int64_t now_us);
  // RTT samples from a snapshot: the server's echo of an ack, or the first snapshot coded
  // against a newer baseline.
  void measure_rtt(const protocol::Snapshot& m, const PartResult& result, int64_t arrival_us);
  // Handshake resends and the connect timeout.
  void update_handshake(int64_t now_us);
  // The timeout, acks, keep-alives, commands and replay controls.
  void update_connected(int64_t now_us);
  void send(const protocol::Message& message, int64_t now_us);
  void send_hello(int64_t now_us);
  void send_ack(int64_t now_us);
  void fail(std::string message);
  void record_rtt(int64_t sample_us);

  asio::io_context& io_;
  ConnectionOptions options_;
  Presenter& presenter_;
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

  CommandSender commands_;
  HitShots hits_;
  protocol::SessionStatus session_status_;
  bool session_status_seen_ = false;
  uint32_t next_replay_sequence_ = 1;
  struct PendingControl {
    protocol::ReplayControl control;
    int sends_left = 0;
  };
  std::vector<PendingControl> pending_controls_;

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
  ConnectionStats counters_;
  std::array<std::byte, net::kReceiveBufferBytes> receive_buffer_{};
  std::vector<uint8_t> hello_bytes_;
};

}  // namespace posecast::client
