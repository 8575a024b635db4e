// Hostile datagrams (docs/session.md: every inbound byte is hostile): dropped, counted, and
// without effect on what another client receives. Each test runs the same session twice,
// with and without an attacker, and compares the victim's stream byte for byte.

#include <random>

#include "server_fixture.h"

namespace posecast::test {
namespace {

using server::DropReason;

class Hostile : public ServerFixture {
 protected:
  // A deterministic session: 4 entities, one client acking; `attack(tick)` may send datagrams
  // from other sockets at every tick. Returns the client's datagrams after the handshake.
  std::vector<std::vector<uint8_t>> session(const std::function<void(int)>& attack) {
    start();
    for (int i = 0; i < 4; ++i) {
      const sim::EntityId id = server->spawn(0, 0, server::Vec3{static_cast<float>(i), 0, 0});
      server->play(id, 0, clip_motion(static_cast<uint16_t>(i % 3)));
    }
    RawClient& client = add_client();
    use_formats(client);
    client.auto_ack = true;
    EXPECT_NE(connect(client, 77).client_id, 0u);
    const std::size_t start_index = client.received().size();
    for (int t = 0; t < 90; ++t) {
      attack(t);
      step();
    }
    EXPECT_EQ(client.decode_failures, 0u) << client.first_failure;
    std::vector<std::vector<uint8_t>> stream;
    for (std::size_t i = start_index; i < client.received().size(); ++i) stream.push_back(client.received()[i].bytes);
    victim_response = client.all<protocol::ServerChallenge>().at(0).challenge_token;
    victim = client.endpoint();
    return stream;
  }

  void restart() {
    server.reset();
    owned.clear();
    clients.clear();
    now_us = 1'000'000'000;
  }

  uint64_t victim_response = 0;
  net::Endpoint victim;
};

TEST_F(Hostile, GarbageTruncatedOversizedAndForgedDatagramsChangeNothingForAnotherClient) {
  const auto clean = session([](int) {});
  ASSERT_GT(clean.size(), 30u);
  restart();

  std::mt19937 random(12345);
  RawClient* attacker = nullptr;
  RawClient* second = nullptr;
  const std::vector<uint8_t> valid_snapshot_like = encode(protocol::Ack{5, 0xFFFF});
  const auto attacked = session([&](int t) {
    if (attacker == nullptr) {
      attacker = &add_client();
      second = &add_client();
    }
    // Random bytes of random lengths.
    std::vector<uint8_t> noise(1 + random() % 1200);
    for (auto& b : noise) b = static_cast<uint8_t>(random());
    attacker->send_bytes(noise, address);
    // A truncated valid message.
    std::vector<uint8_t> hello = encode(protocol::ClientHello{protocol::kProtocolVersion, 5, "x"});
    hello.resize(hello.size() / 2);
    attacker->send_bytes(hello, address);
    // Oversized.
    attacker->send_bytes(std::vector<uint8_t>(1500, 0xAB), address);
    // Forged connected-only messages from an unconnected address (a client id is an address).
    attacker->send_bytes(valid_snapshot_like, address);
    protocol::ClientCommand forged;
    forged.sequence = static_cast<uint32_t>(t + 1);
    forged.entity_id = 1'000'000;
    forged.generation = 1;
    attacker->send(forged, address);
    // Server-only messages sent to the server.
    attacker->send(protocol::Welcome{}, address);
    attacker->send(protocol::Snapshot{}, address);
    // Wrong version, and a replayed handshake of the victim from another address.
    second->send(protocol::ClientHello{static_cast<uint16_t>(protocol::kProtocolVersion + 1), 9, ""}, address, 300);
    if (t > 0) second->send(protocol::ChallengeResponse{77, victim_response}, address);
  });
  EXPECT_EQ(attacked, clean) << "the victim's stream is unchanged";
  const server::ServerMetrics m = server->metrics();
  EXPECT_GE(m.drops[static_cast<std::size_t>(DropReason::kMalformed)], 90u);
  EXPECT_EQ(m.drops[static_cast<std::size_t>(DropReason::kOversized)], 90u);
  EXPECT_EQ(m.drops[static_cast<std::size_t>(DropReason::kUnknownSource)], 180u);
  EXPECT_EQ(m.drops[static_cast<std::size_t>(DropReason::kUnexpected)], 180u);
  EXPECT_EQ(m.drops[static_cast<std::size_t>(DropReason::kProtocolMismatch)], 90u);
  EXPECT_EQ(m.drops[static_cast<std::size_t>(DropReason::kBadChallenge)], 89u);
  EXPECT_EQ(m.clients, 1u);
}

TEST_F(Hostile, ReplayedHelloOfAConnectedClientChangesNothing) {
  const auto clean = session([](int) {});
  restart();
  RawClient* replayer = nullptr;
  const auto attacked = session([&](int t) {
    if (replayer == nullptr) replayer = &add_client();
    if (t % 10 == 0) {
      replayer->send(protocol::ClientHello{protocol::kProtocolVersion, 77, "test"}, address, kHelloPad);
    }
  });
  EXPECT_EQ(attacked, clean);
  EXPECT_EQ(server->metrics().clients, 1u);
}

TEST_F(Hostile, FloodFromAConnectedClientIsRateLimitedThenDisconnected) {
  server::ServerOptions options;
  options.malformed_limit_per_second = 50;
  start(options);
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  for (int i = 0; i < 60; ++i) client.send_bytes(std::vector<uint8_t>{1, 2, 3}, address);
  step(2);
  EXPECT_EQ(server->metrics().clients, 0u);
  auto byes = client.all<protocol::Disconnect>();
  ASSERT_FALSE(byes.empty());
  EXPECT_EQ(byes.back().reason, protocol::DisconnectReason::kMalformedTraffic);
}

}  // namespace
}  // namespace posecast::test
