// Connections alone (server/src/connections.h): the handshake, Welcome resends, allowances,
// sequence filtering, ack forwarding, timeouts and send accounting, over a channel that only
// records what was sent -- no socket, no World, no clock.

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <vector>

#include "connections.h"

namespace posecast::server {
namespace {

// A DatagramChannel holding inbound datagrams in a queue and recording outbound ones.
class RecordingChannel final : public net::DatagramChannel {
 public:
  struct Sent {
    std::vector<uint8_t> bytes;
    net::Endpoint to;
  };
  bool send_to(std::span<const std::byte> payload, const net::Endpoint& to) override {
    const auto* data = reinterpret_cast<const uint8_t*>(payload.data());
    sent.push_back(Sent{std::vector<uint8_t>(data, data + payload.size()), to});
    return true;
  }
  std::size_t receive_from(std::span<std::byte> buffer, net::Endpoint& from) override {
    if (inbound.empty()) return 0;
    const Sent next = inbound.front();
    inbound.pop_front();
    const std::size_t size = std::min(buffer.size(), next.bytes.size());
    std::copy_n(reinterpret_cast<const std::byte*>(next.bytes.data()), size, buffer.data());
    from = next.to;
    return size;
  }
  void pump(net::MicrosTime /*now*/) override {}
  const net::ChannelCounters& counters() const override { return counters_; }

  std::vector<Sent> sent;
  std::deque<Sent> inbound;  // `to` holds the source

 private:
  net::ChannelCounters counters_;
};

// Records the events; answers acks and commands as told.
class RecordingEvents final : public ConnectionEvents {
 public:
  void on_connected(ClientConnection& client, int64_t /*now_us*/) override { connected.push_back(client.id); }
  void on_disconnected(const ClientConnection& client, protocol::DisconnectReason reason) override {
    disconnected.emplace_back(client.id, reason);
  }
  bool on_ack(ClientConnection& /*client*/, const protocol::Ack& ack, int64_t /*now_us*/) override {
    acks.push_back(ack.newest_tick);
    return ack_valid;
  }
  std::optional<DropReason> on_command(ClientConnection& /*client*/,
                                       const protocol::ClientCommand& command) override {
    commands.push_back(command.sequence);
    return command_refusal;
  }
  bool accepts_replay_control() const override { return replay_controls; }
  void on_replay_control(ClientConnection& /*client*/, const protocol::ReplayControl& control) override {
    controls.push_back(control.sequence);
  }
  protocol::HitResult on_hit_query(ClientConnection& /*client*/, const protocol::HitQuery& query,
                                   int64_t /*now_us*/) override {
    return protocol::HitResult{query.sequence};
  }

  std::vector<uint32_t> connected;
  std::vector<std::pair<uint32_t, protocol::DisconnectReason>> disconnected;
  std::vector<uint32_t> acks, commands, controls;
  bool ack_valid = true;
  std::optional<DropReason> command_refusal;
  bool replay_controls = false;
};

std::vector<uint8_t> encode(const protocol::Message& message, std::size_t pad_to = 0) {
  std::vector<uint8_t> bytes = protocol::encode_message(message).value();
  if (bytes.size() < pad_to) bytes.resize(pad_to, 0);
  return bytes;
}

template <typename T>
std::optional<T> decode_as(const std::vector<uint8_t>& bytes) {
  Result<protocol::Message> message = protocol::decode_message(bytes);
  if (!message) return std::nullopt;
  if (const T* typed = std::get_if<T>(&message.value())) return *typed;
  return std::nullopt;
}

class ConnectionsAlone : public ::testing::Test {
 protected:
  ConnectionsAlone() {
    options.cookie_key = std::array<uint8_t, 16>{1, 2, 3};
    options.timeout_us = 5'000'000;
    options.max_clients = 2;
    options.max_datagrams_per_client_per_second = 50;
  }
  Connections& connections() {
    if (!connections_) {
      protocol::AssetInfo asset;
      asset.content_hash = 0xABCD;
      asset.source = "gen-rig:24";
      connections_.emplace(options, channel, events, counters, std::vector<protocol::AssetInfo>{asset});
    }
    return *connections_;
  }
  void receive(const protocol::Message& message, const net::Endpoint& from, int64_t now_us, std::size_t pad = 0) {
    connections().handle_datagram(encode(message, pad), from, now_us, /*server_tick=*/700);
  }
  // Hello, challenge, response: the client's id, with every datagram it was sent cleared.
  uint32_t connect(const net::Endpoint& from, uint64_t nonce, int64_t now_us) {
    receive(protocol::ClientHello{protocol::kProtocolVersion, nonce, ""}, from, now_us, 128);
    EXPECT_EQ(channel.sent.size(), 1u);
    const auto challenge = decode_as<protocol::ServerChallenge>(channel.sent.back().bytes);
    EXPECT_TRUE(challenge.has_value());
    receive(protocol::ChallengeResponse{nonce, challenge ? challenge->challenge_token : 0}, from, now_us);
    const auto welcome = decode_as<protocol::Welcome>(channel.sent.back().bytes);
    EXPECT_TRUE(welcome.has_value());
    channel.sent.clear();
    return welcome ? welcome->client_id : 0;
  }
  uint64_t drops(DropReason reason) const { return counters.drops[static_cast<std::size_t>(reason)]; }

  ServerOptions options;
  RecordingChannel channel;
  RecordingEvents events;
  ServerMetrics counters;
  const net::Endpoint alice{asio::ip::make_address("10.0.0.1"), 4000};
  const net::Endpoint bob{asio::ip::make_address("10.0.0.2"), 4000};

 private:
  std::optional<Connections> connections_;
};

TEST_F(ConnectionsAlone, HandshakeSendsAChallengeThenAWelcomeAndRaisesOnConnected) {
  receive(protocol::ClientHello{protocol::kProtocolVersion, 9, ""}, alice, 1'000, 128);
  ASSERT_EQ(channel.sent.size(), 1u);
  EXPECT_EQ(channel.sent[0].to, alice);
  EXPECT_TRUE(connections().clients().empty()) << "no state before the response";
  const auto challenge = decode_as<protocol::ServerChallenge>(channel.sent[0].bytes);
  ASSERT_TRUE(challenge.has_value());
  receive(protocol::ChallengeResponse{9, challenge->challenge_token}, alice, 2'000);
  ASSERT_EQ(channel.sent.size(), 2u);
  const auto welcome = decode_as<protocol::Welcome>(channel.sent[1].bytes);
  ASSERT_TRUE(welcome.has_value());
  EXPECT_EQ(welcome->server_tick, 700u);
  ASSERT_EQ(welcome->assets.size(), 1u);
  EXPECT_EQ(welcome->assets[0].content_hash, 0xABCDu);
  ASSERT_EQ(events.connected, std::vector<uint32_t>{welcome->client_id});
  ASSERT_EQ(connections().clients().size(), 1u);
  const ClientConnection& client = *connections().clients()[0];
  // The Welcome is counted against the client's window, with its UDP/IP header.
  EXPECT_EQ(client.bytes_sent, channel.sent[1].bytes.size() + net::kUdpIpv4HeaderBytes);
  EXPECT_EQ(counters.connections, 1u);
}

TEST_F(ConnectionsAlone, AResponseWithAForgedTokenIsDroppedAndNothingIsKept) {
  receive(protocol::ChallengeResponse{9, 12345}, alice, 1'000);
  EXPECT_TRUE(channel.sent.empty());
  EXPECT_TRUE(connections().clients().empty());
  EXPECT_EQ(drops(DropReason::kBadChallenge), 1u);
}

TEST_F(ConnectionsAlone, ARepeatedResponseResendsTheWelcomeAtMostEvery100Ms) {
  receive(protocol::ClientHello{protocol::kProtocolVersion, 5, ""}, alice, 0, 128);
  const auto challenge = decode_as<protocol::ServerChallenge>(channel.sent.back().bytes).value();
  const protocol::ChallengeResponse response{5, challenge.challenge_token};
  receive(response, alice, 1'000);
  const std::size_t after_welcome = channel.sent.size();
  receive(response, alice, 50'000);
  EXPECT_EQ(channel.sent.size(), after_welcome) << "within 100 ms of the Welcome";
  receive(response, alice, 101'000);
  ASSERT_EQ(channel.sent.size(), after_welcome + 1);
  EXPECT_TRUE(decode_as<protocol::Welcome>(channel.sent.back().bytes).has_value());
  EXPECT_EQ(events.connected.size(), 1u);
}

TEST_F(ConnectionsAlone, ASilentClientTimesOutWithThreeDisconnects) {
  const uint32_t id = connect(alice, 1, 0);
  connections().check_timeouts(options.timeout_us);
  EXPECT_TRUE(events.disconnected.empty()) << "exactly the timeout is not past it";
  connections().check_timeouts(options.timeout_us + 1);
  ASSERT_EQ(events.disconnected.size(), 1u);
  EXPECT_EQ(events.disconnected[0].first, id);
  EXPECT_EQ(events.disconnected[0].second, protocol::DisconnectReason::kTimeout);
  EXPECT_TRUE(connections().clients().empty());
  ASSERT_EQ(channel.sent.size(), 3u);
  for (const auto& sent : channel.sent) {
    const auto bye = decode_as<protocol::Disconnect>(sent.bytes);
    ASSERT_TRUE(bye.has_value());
    EXPECT_EQ(bye->reason, protocol::DisconnectReason::kTimeout);
  }
  EXPECT_EQ(counters.timeouts, 1u);
}

TEST_F(ConnectionsAlone, AnyDatagramFromAClientKeepsItAlive) {
  connect(alice, 1, 0);
  receive(protocol::Ack{}, alice, 4'000'000);
  connections().check_timeouts(options.timeout_us + 1);
  EXPECT_TRUE(events.disconnected.empty());
  EXPECT_EQ(connections().clients().size(), 1u);
}

TEST_F(ConnectionsAlone, AcksGoUpAndARefusedOneCountsAsBadAck) {
  connect(alice, 1, 0);
  protocol::Ack ack;
  ack.newest_tick = 30;
  receive(ack, alice, 10);
  events.ack_valid = false;
  receive(ack, alice, 20);
  EXPECT_EQ(events.acks, (std::vector<uint32_t>{30, 30}));
  EXPECT_EQ(drops(DropReason::kBadAck), 1u);
  receive(ack, bob, 30);  // not connected
  EXPECT_EQ(events.acks.size(), 2u);
  EXPECT_EQ(drops(DropReason::kUnknownSource), 1u);
}

TEST_F(ConnectionsAlone, CommandsWithOldSequencesAreDroppedBeforeTheyGoUp) {
  connect(alice, 1, 0);
  protocol::ClientCommand command;
  command.sequence = 5;
  receive(command, alice, 10);
  receive(command, alice, 20);  // repeated
  command.sequence = 4;
  receive(command, alice, 30);  // older
  command.sequence = 6;
  events.command_refusal = DropReason::kUnownedCommand;
  receive(command, alice, 40);
  EXPECT_EQ(events.commands, (std::vector<uint32_t>{5, 6}));
  EXPECT_EQ(drops(DropReason::kStaleCommand), 2u);
  EXPECT_EQ(drops(DropReason::kUnownedCommand), 1u);
}

TEST_F(ConnectionsAlone, ReplayControlsAreUnexpectedUnlessAccepted) {
  connect(alice, 1, 0);
  protocol::ReplayControl control;
  control.sequence = 1;
  receive(control, alice, 10);
  EXPECT_EQ(drops(DropReason::kUnexpected), 1u);
  events.replay_controls = true;
  receive(control, alice, 20);
  receive(control, alice, 30);
  EXPECT_EQ(events.controls, std::vector<uint32_t>{1});
  EXPECT_EQ(drops(DropReason::kStaleCommand), 1u);
}

TEST_F(ConnectionsAlone, ASourceOverItsAllowanceIsRateLimitedUntilTheNextSecond) {
  connect(alice, 1, 0);
  for (uint32_t i = 0; i < options.max_datagrams_per_client_per_second + 10; ++i) {
    receive(protocol::Ack{}, alice, 1'000'000 + i);
  }
  EXPECT_EQ(drops(DropReason::kRateLimited), 10u);
  EXPECT_EQ(events.acks.size(), options.max_datagrams_per_client_per_second);
  receive(protocol::Ack{}, alice, 2'000'000);
  EXPECT_EQ(events.acks.size(), options.max_datagrams_per_client_per_second + 1);
}

TEST_F(ConnectionsAlone, AFullServerRefusesAHelloWithADisconnect) {
  connect(alice, 1, 0);
  connect(bob, 2, 0);
  const net::Endpoint carol{asio::ip::make_address("10.0.0.3"), 4000};
  receive(protocol::ClientHello{protocol::kProtocolVersion, 3, ""}, carol, 10, 128);
  ASSERT_EQ(channel.sent.size(), 1u);
  const auto refusal = decode_as<protocol::Disconnect>(channel.sent[0].bytes);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->reason, protocol::DisconnectReason::kServerFull);
  EXPECT_EQ(drops(DropReason::kServerFull), 1u);
}

TEST_F(ConnectionsAlone, SendsAreCountedInTheWindowWithTheirHeaders) {
  connect(alice, 1, 0);
  ClientConnection& client = *connections().clients()[0];
  const uint64_t before = client.bytes_sent;
  const std::vector<uint8_t> payload(100, 7);
  ASSERT_TRUE(connections().send(client, payload, 500'000));
  EXPECT_EQ(client.bytes_sent - before, 100u + net::kUdpIpv4HeaderBytes);
  EXPECT_EQ(client.window.bytes_in_window(500'000), client.bytes_sent);
  EXPECT_EQ(client.window.bytes_in_window(1'500'001), 0u) << "a second later the window is empty";
}

}  // namespace
}  // namespace posecast::server
