#pragma once
// NetClient: the posecast network client (docs/client.md), a Connection (connection.h: socket,
// handshake, acks, round trip, commands) feeding a Presenter (presenter.h: snapshot buffer,
// playout clock, pose tracks, render-time recipes). Headless, no GL. Time is passed in
// (microseconds on any monotonic clock); nothing here reads a clock or blocks. One thread
// drives a client; several clients may share that thread, the io_context and an AssetLibrary.
// A game with a transport of its own uses a Presenter alone.
//
//   posecast::client::NetClient client(io, options);
//   if (auto s = client.connect(now); !s) ...;         // opens the socket, sends the hello
//   every frame:  client.update(now);  for (auto& e : client.entities()) draw(e.palette);
//   client.disconnect(now);

#include <asio/io_context.hpp>
#include <glm/mat4x4.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "posecast/client/connection.h"
#include "posecast/client/presenter.h"
#include "posecast/result.h"

namespace posecast::client {

struct NetClientOptions : ConnectionOptions, PresenterSettings {};

// PredictionStats: the owned entities' prediction (docs/client.md, "Prediction").
struct ClientStats : ConnectionStats, PresenterStats, PredictionStats {};

class NetClient {
 public:
  // Keeps a reference to `io`, which must outlive the client. Does not touch the network.
  NetClient(asio::io_context& io, NetClientOptions options);
  NetClient(const NetClient&) = delete;
  NetClient& operator=(const NetClient&) = delete;

  // Connection::connect.
  Status connect(int64_t now_us) { return connection_.connect(now_us); }
  // Connection::update, then, while connected, Presenter::present at `now_us` and the owned
  // entities' prediction at Connection::prediction_tick (Presenter::present_predicted).
  void update(int64_t now_us);
  void disconnect(int64_t now_us) { connection_.disconnect(now_us); }
  uint32_t send_command(const protocol::ClientCommand& command, int64_t now_us) {
    return connection_.send_command(command, now_us);
  }
  uint32_t send_replay_control(protocol::ReplayControl control, int64_t now_us) {
    return connection_.send_replay_control(control, now_us);
  }

  // Connection::fire_hit_query: `view_us` is render_time_us() of the frame the shot was aimed
  // at (the time that frame presented, on the server's tick clock).
  uint32_t fire_hit_query(const HitRay& ray, int64_t view_us, int64_t now_us) {
    return connection_.fire_hit_query(ray, view_us, now_us);
  }
  // The answers received since the last call, in arrival order (at most
  // HitShots::kMaxWaiting; older ones dropped and counted).
  std::vector<protocol::HitResult> take_hit_results() {
    std::vector<protocol::HitResult> out;
    connection_.take_hit_results(out);
    return out;
  }

  const protocol::SessionStatus& session_status() const { return connection_.session_status(); }
  bool owns(uint32_t entity_id) const { return connection_.owns(entity_id); }
  ConnectionState state() const { return connection_.state(); }
  bool connected() const { return connection_.connected(); }
  const std::string& error() const { return connection_.error(); }
  protocol::DisconnectReason disconnect_reason() const { return connection_.disconnect_reason(); }
  uint32_t client_id() const { return connection_.client_id(); }
  const protocol::Welcome& welcome() const { return connection_.welcome(); }
  net::Endpoint local_endpoint() const { return connection_.local_endpoint(); }

  int64_t render_time_us() const { return presenter_.render_time_us(); }
  std::span<const PresentedEntity> entities() const { return presenter_.entities(); }
  // Animation events fired by the last update (Presenter::fired_events).
  std::span<const FiredEvent> fired_events() const { return presenter_.fired_events(); }
  const PresentedEntity* find(uint32_t entity_id) const { return presenter_.find(entity_id); }
  PresentMode evaluate_at(uint32_t entity_id, int64_t render_us, std::span<glm::mat4> palette) {
    return presenter_.evaluate_at(entity_id, render_us, palette);
  }

  // Both parts' statistics at `now_us`.
  ClientStats stats(int64_t now_us) const;
  const SnapshotBuffer& buffer() const { return presenter_.buffer(); }
  const EntityRegistry& registry() const { return presenter_.registry(); }
  const PlayoutClock& playout() const { return presenter_.playout(); }
  net::DatagramChannel& channel() { return connection_.channel(); }
  const net::NetworkSimulator* simulator() const { return connection_.simulator(); }

  Presenter& presenter() { return presenter_; }
  const Presenter& presenter() const { return presenter_; }
  Connection& connection() { return connection_; }
  const Connection& connection() const { return connection_; }

 private:
  Presenter presenter_;    // before connection_, which keeps a reference to it
  Connection connection_;
};

}  // namespace posecast::client
