#pragma once
// Connections: the server's session layer (docs/session.md). It owns every connected client's
// ClientConnection and, over any net::DatagramChannel, runs the stateless handshake (cookie
// challenge, Welcome and its resends), the per-source datagram allowances, the filtering of
// stale command and replay-control sequences, disconnects (sent and received), timeouts, and
// the byte accounting of every datagram sent to a client (its send window).
//
// What a verified message means beyond the session -- an Ack's baselines, a command's
// authority, a replay control -- goes up through ConnectionEvents. Inbound bytes are hostile:
// every rejected datagram is counted in ServerMetrics::drops under one DropReason, never a
// crash. Tick thread only; no clock: every call takes the caller's `now_us`.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posecast/net/datagram_channel.h"
#include "posecast/protocol/messages.h"
#include "posecast/server/challenge_cookie.h"
#include "posecast/server/server_options.h"
#include "posecast/server/server_types.h"
#include "send_window.h"

namespace posecast::server {

// One connected client, as the session layer knows it. Owned by Connections; the address is
// stable until the client is disconnected (ConnectionEvents::on_disconnected is the last use).
struct ClientConnection {
  uint32_t id = 0;  // 1, 2, ... in connection order; never reused
  net::Endpoint endpoint;
  std::string name;
  uint64_t nonce = 0;
  int64_t connected_us = 0;
  int64_t last_receive_us = 0;
  int64_t last_send_us = 0;
  int64_t last_welcome_us = 0;
  std::vector<uint8_t> welcome;  // encoded, for resends

  // Sequences at or below the newest seen are duplicates (replay controls) or stale (commands).
  bool any_replay_control = false;
  uint32_t newest_replay_sequence = 0;
  bool any_command = false;
  uint32_t newest_command_sequence = 0;

  // Per-second allowances for inbound traffic.
  int64_t rate_second = -1;
  uint32_t datagrams_this_second = 0;
  uint32_t malformed_this_second = 0;

  SendWindow window;        // wire bytes sent over the last second (bandwidth budgets read it)
  uint64_t bytes_sent = 0;  // wire bytes, payload + UDP/IP header per datagram
};

// What the session layer hands up. Called on the tick thread, from inside Connections' calls.
class ConnectionEvents {
 public:
  virtual ~ConnectionEvents() = default;
  // A client was accepted; its Welcome has been sent.
  virtual void on_connected(ClientConnection& client, int64_t now_us) = 0;
  // A client is going away; `client` is still valid during the call, then destroyed.
  virtual void on_disconnected(const ClientConnection& client, protocol::DisconnectReason reason) = 0;
  // An Ack from a connected client. False: it names a tick never sent (dropped as kBadAck).
  virtual bool on_ack(ClientConnection& client, const protocol::Ack& ack, int64_t now_us) = 0;
  // A command whose sequence is new. The reason to drop it, or nullopt when it was taken.
  virtual std::optional<DropReason> on_command(ClientConnection& client,
                                               const protocol::ClientCommand& command) = 0;
  // Whether replay controls are taken at all (a live server drops them as kUnexpected).
  virtual bool accepts_replay_control() const = 0;
  // A replay control whose sequence is new (only when accepts_replay_control()).
  virtual void on_replay_control(ClientConnection& client, const protocol::ReplayControl& control) = 0;
  // A shot (HitQuery): the answer to send back (refusals included).
  virtual protocol::HitResult on_hit_query(ClientConnection& client, const protocol::HitQuery& query,
                                           int64_t now_us) = 0;
};

class Connections {
 public:
  // `options`, `channel`, `events` and `counters` must outlive this object. `manifest` is the
  // asset list every Welcome carries (it must fit one datagram: Server::create checks).
  Connections(const ServerOptions& options, net::DatagramChannel& channel, ConnectionEvents& events,
              ServerMetrics& counters, std::vector<protocol::AssetInfo> manifest);

  // Reads and handles every waiting datagram (at most a bounded number per call). A Welcome
  // sent now names `server_tick` as the session tick its snapshots continue from.
  void poll(int64_t now_us, uint32_t server_tick);
  // One datagram from `from` (public for tests: no channel needed to exercise the rules).
  void handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from, int64_t now_us,
                       uint32_t server_tick);

  // Sends `bytes` to `client`, counting them in its window and the metrics whether or not the
  // channel took them (a budget is about what was put on the link). False when it did not.
  bool send(ClientConnection& client, std::span<const uint8_t> bytes, int64_t now_us);
  // Ends the session of clients()[index]: a Disconnect (three times) when `notify_peer`,
  // then ConnectionEvents::on_disconnected, then the connection is destroyed.
  void disconnect(std::size_t index, protocol::DisconnectReason reason, const std::string& message,
                  int64_t now_us, bool notify_peer);
  // Disconnects (kTimeout) every client silent for longer than ServerOptions::timeout_us.
  void check_timeouts(int64_t now_us);

  const std::vector<std::unique_ptr<ClientConnection>>& clients() const { return clients_; }
  ClientConnection* find(uint32_t id);
  ClientConnection* find(const net::Endpoint& endpoint);
  std::size_t index_of(const ClientConnection& client) const;  // clients().size() when absent
  // The encoded size of the largest ServerChallenge: a Hello must be at least this large.
  std::size_t challenge_bytes() const { return challenge_bytes_; }
  // Admission: while `refusal` is set, a Hello or ChallengeResponse from an address that is
  // not connected is answered with it (fitted to the request, as every unverified reply) and
  // counted as DropReason::kRefused; connected clients go on. nullopt: new clients welcome.
  void set_refusal(std::optional<protocol::Disconnect> refusal) { refusal_ = std::move(refusal); }

 private:
  void drop(DropReason reason) { ++counters_.drops[static_cast<std::size_t>(reason)]; }
  // Counts a malformed datagram; a connected source over its allowance is disconnected.
  void count_malformed(ClientConnection* client, DropReason reason, int64_t now_us);
  // False when the source is over its per-second allowance (the datagram is dropped).
  bool within_rate(ClientConnection& client, int64_t now_us);
  void handle_connected(ClientConnection& client, protocol::Message& message,
                        const net::Endpoint& from, int64_t now_us);
  void handle_hello(const protocol::ClientHello& hello, std::size_t size, const net::Endpoint& from,
                    int64_t now_us);
  void handle_response(const protocol::ChallengeResponse& response, std::size_t size,
                       const net::Endpoint& from, int64_t now_us, uint32_t server_tick);
  void accept(const protocol::ChallengeResponse& response, const net::Endpoint& from,
              int64_t now_us, uint32_t server_tick);
  void handle_command(ClientConnection& client, const protocol::ClientCommand& command);
  void handle_replay_control(ClientConnection& client, const protocol::ReplayControl& control);
  // A reply to an unverified source: never larger than the datagram that caused it.
  void reply_unverified(const protocol::Message& message, std::size_t request_bytes,
                        const net::Endpoint& to);
  bool send_raw(std::span<const uint8_t> bytes, const net::Endpoint& to);
  // True (and answered) when new clients are refused and `from` is not connected.
  bool refuse_new(std::size_t request_bytes, const net::Endpoint& from);

  const ServerOptions& options_;
  net::DatagramChannel& channel_;
  ConnectionEvents& events_;
  ServerMetrics& counters_;
  std::vector<protocol::AssetInfo> manifest_;
  ChallengeCookie cookie_;
  std::size_t challenge_bytes_ = 0;
  std::optional<protocol::Disconnect> refusal_;
  std::vector<std::byte> receive_buffer_;
  std::vector<std::unique_ptr<ClientConnection>> clients_;  // in connection order
  uint32_t next_client_id_ = 1;
};

// Ticks between two snapshots for a send rate (clamped to 1..tick rate): rounded, so every
// 20 Hz client at 60 Hz shares the ticks divisible by 3.
uint32_t send_interval_ticks(uint32_t tick_rate_hz, uint32_t send_rate_hz);

}  // namespace posecast::server
