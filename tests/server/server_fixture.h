#pragma once
// A Server on 127.0.0.1 (ephemeral port) driven tick by tick with a fake clock, plus raw test
// clients. Every step is bounded: no test waits on wall time except the loopback delivery.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"
#include "raw_client.h"

namespace posecast::test {

inline std::shared_ptr<const Model> generated_rig(int joints = 24) {
  static std::map<int, std::shared_ptr<const Model>> cache;
  auto& model = cache[joints];
  if (!model) {
    Result<Model> loaded = rig::load_model_source("gen-rig:" + std::to_string(joints));
    EXPECT_TRUE(loaded.ok());
    model = std::make_shared<const Model>(std::move(loaded).value());
  }
  return model;
}

class ServerFixture : public ::testing::Test {
 protected:
  // `models`: the server's models (default: the 24-joint generated rig).
  void start(server::ServerOptions options = {}, std::vector<std::shared_ptr<const Model>> models = {}) {
    options.listen = net::Endpoint(asio::ip::make_address("127.0.0.1"), 0);
    options.cookie_key = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    options.threads = 2;
    if (models.empty()) models.push_back(generated_rig());
    Result<std::unique_ptr<server::Server>> created = server::Server::create(io, options, models);
    ASSERT_TRUE(created.ok()) << created.error().message;
    server = std::move(created).value();
    address = server->local_endpoint();
  }

  // Runs `ticks` server ticks of 1/60 s fake time. Loopback delivery is not synchronous on a
  // loaded machine, so each tick first waits (bounded) until the server has read every datagram
  // the test clients sent, and afterwards until the clients have read every datagram the
  // server sent: the tests see the same sequence however slow the machine is.
  void step(int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      now_us += 16'667;
      deliver_to_server();
      server->tick(now_us);
      deliver_to_clients();
    }
  }

  void deliver_to_server() {
    uint64_t sent = 0;
    for (RawClient* c : clients) sent += c->datagrams_sent();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (server->metrics().datagrams_in < sent && std::chrono::steady_clock::now() < deadline) {
      server->poll_network(now_us);
      if (server->metrics().datagrams_in < sent) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void deliver_to_clients() {
    const uint64_t sent = server->metrics().socket_datagrams_out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (;;) {
      uint64_t received = 0;
      for (RawClient* c : clients) {
        c->drain();
        received += c->datagrams_received();
      }
      if (received >= sent || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  RawClient& add_client() {
    owned.push_back(std::make_unique<RawClient>(io));
    clients.push_back(owned.back().get());
    owned.back()->server = address;
    return *owned.back();
  }

  static constexpr std::size_t kHelloPad = 128;  // larger than any challenge

  // Full handshake; returns the Welcome (client id 0 when it failed).
  protocol::Welcome connect(RawClient& client, uint64_t nonce) {
    client.send(protocol::ClientHello{protocol::kProtocolVersion, nonce, "test"}, address, kHelloPad);
    step();
    auto challenges = client.all<protocol::ServerChallenge>();
    if (challenges.empty()) return {};
    client.send(protocol::ChallengeResponse{nonce, challenges.back().challenge_token}, address);
    step();
    auto welcomes = client.all<protocol::Welcome>();
    return welcomes.empty() ? protocol::Welcome{} : welcomes.back();
  }

  void use_formats(RawClient& client) {
    client.set_formats({server->pose_format(0, 0)}, {&generated_rig()->rigs[0]}, server->options().tick_rate_hz);
  }

  uint64_t drops(server::DropReason reason) {
    return server->metrics().drops[static_cast<std::size_t>(reason)];
  }

  asio::io_context io;
  std::unique_ptr<server::Server> server;
  net::Endpoint address;
  int64_t now_us = 1'000'000'000;
  std::vector<std::unique_ptr<RawClient>> owned;
  std::vector<RawClient*> clients;
};

// A motion of one clip of the generated rig.
inline sim::MotionSpec clip_motion(uint16_t clip) {
  sim::MotionSpec motion;
  motion.clips[0] = sim::ClipWeight{clip, 1.0f};
  motion.count = 1;
  return motion;
}

}  // namespace posecast::test
