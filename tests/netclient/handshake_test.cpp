// NetClient against a scripted peer on a real loopback socket: the hello is padded, the
// handshake follows docs/session.md, acks flow, and bad traffic is dropped and counted.

#include <chrono>
#include <thread>

#include "netclient_support.h"
#include "posecast/client/net_client.h"

namespace posecast::client {
namespace {

using protocol::Message;

// Waits (wall clock, bounded) for the next datagram at `peer`; nullopt when none came.
std::optional<std::pair<std::vector<uint8_t>, net::Endpoint>> receive(net::UdpTransport& peer) {
  std::array<std::byte, net::kReceiveBufferBytes> buffer;
  net::Endpoint from;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < give_up) {
    const std::size_t n = peer.receive_from(buffer, from);
    if (n > 0) {
      const auto* p = reinterpret_cast<const uint8_t*>(buffer.data());
      return std::make_pair(std::vector<uint8_t>(p, p + n), from);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return std::nullopt;
}

template <class T>
std::optional<T> receive_as(net::UdpTransport& peer, std::size_t* size = nullptr) {
  auto d = receive(peer);
  if (!d) return std::nullopt;
  if (size != nullptr) *size = d->first.size();
  Result<Message> m = protocol::decode_message(d->first);
  if (!m || !std::holds_alternative<T>(m.value())) return std::nullopt;
  return std::get<T>(m.value());
}

void send_to(net::UdpTransport& from, const Message& m, const net::Endpoint& to) {
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(m);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(from.send_to({reinterpret_cast<const std::byte*>(bytes->data()), bytes->size()}, to));
}

// Updates the client until `done` or the wall-clock bound (loopback delivery is quick but not
// synchronous); client time advances by 1 ms per step from `now`.
template <class Done>
bool update_until(NetClient& client, int64_t& now, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    now += 1000;
    client.update(now);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

class HandshakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(peer.open(net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)).ok());
    options.server = peer.local_endpoint();
    options.local = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    options.assets = rig.library;
    options.nonce = 77;
    options.load_missing_assets = false;
    options.channel_arrival_times = false;  // simulated time over a plain socket
  }

  protocol::Welcome welcome(uint64_t hash) const {
    protocol::Welcome w;
    w.client_id = 5;
    w.server_tick = 600;
    w.assets.push_back(protocol::AssetInfo{0, hash, 24, "gen-rig:24"});
    return w;
  }

  // Hello -> challenge -> response -> welcome; leaves the client connected.
  void handshake(NetClient& client) {
    ASSERT_TRUE(client.connect(now).ok());
    auto hello = receive_as<protocol::ClientHello>(peer);
    ASSERT_TRUE(hello);
    send_to(peer, protocol::ServerChallenge{hello->client_nonce, 999}, client.local_endpoint());
    ASSERT_TRUE(update_until(client, now, [&] { return client.state() == ConnectionState::kSendingResponse; }));
    auto response = receive_as<protocol::ChallengeResponse>(peer);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->challenge_token, 999u);
    send_to(peer, welcome(rig.model->model->content_hash), client.local_endpoint());
    ASSERT_TRUE(update_until(client, now, [&] { return client.connected(); }));
  }

  asio::io_context io;
  net::UdpTransport peer{io};
  testing::TestRig rig = testing::load_test_rig();
  NetClientOptions options;
  int64_t now = 1'000'000;
};

TEST_F(HandshakeTest, HelloIsPaddedToAtLeastTheChallengeSizeAndStillDecodes) {
  NetClient client(io, options);
  ASSERT_TRUE(client.connect(now).ok());
  std::size_t size = 0;
  auto hello = receive_as<protocol::ClientHello>(peer, &size);
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->client_nonce, 77u);
  EXPECT_EQ(hello->protocol_version, protocol::kProtocolVersion);
  const Result<std::vector<uint8_t>> challenge =
      protocol::encode_message(protocol::ServerChallenge{~uint64_t{0}, ~uint64_t{0}});
  EXPECT_GE(size, challenge->size());
}

TEST_F(HandshakeTest, ConnectsAndAcksSnapshotsWithTheNewestTick) {
  NetClient client(io, options);
  handshake(client);
  EXPECT_EQ(client.client_id(), 5u);
  EXPECT_EQ(client.welcome().server_tick, 600u);

  // One entity, one rest-coded snapshot.
  send_to(peer, protocol::EntitySpawn{1'000'000, 1, 0, 0, 500}, client.local_endpoint());
  testing::PoseSource source(rig, 1);
  const protocol::QuantizedPose q = source.quantized(603, nullptr);
  protocol::Snapshot s;
  s.server_tick = 603;
  s.entities.push_back(protocol::EntityPose{1'000'000, 1, source.encode(q, {})});
  // Spawn and snapshot may be read in either order: deliver the spawn first.
  ASSERT_TRUE(update_until(client, now, [&] { return client.registry().size() == 1; }));
  send_to(peer, s, client.local_endpoint());
  ASSERT_TRUE(update_until(client, now, [&] { return client.buffer().newest_complete_tick() == 603u; }));
  std::optional<protocol::Ack> ack;
  for (int i = 0; i < 10 && !(ack && ack->newest_tick == 603u); ++i) ack = receive_as<protocol::Ack>(peer);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->newest_tick, 603u);
  EXPECT_EQ(ack->previous_mask, 0u);
  // The entity is presented with the decoded palette (render time before the only sample).
  client.update(now += 1000);
  const PresentedEntity* e = client.find(1'000'000);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(testing::same_bits(e->palette, source.palette(q)));

  // Round-trip echo: the ack carried the client's clock; a snapshot echoing it with the
  // server's hold time gives RTT = arrival - stamp - hold. The peer claims to have held it for
  // all the client time since, up to the next update: the sample is exactly 0, below the
  // handshake's (at least one 1 ms update step), so rtt_ms shows the echo was used.
  ASSERT_NE(ack->echo_us, 0u);
  EXPECT_GT(client.stats(now).rtt_ms, 0.0);
  protocol::Snapshot echoed;
  echoed.server_tick = 606;
  echoed.entities.push_back(protocol::EntityPose{1'000'000, 1, source.encode(source.quantized(606, nullptr), {})});
  echoed.ack_echo_us = ack->echo_us;
  echoed.ack_hold_us = static_cast<uint32_t>(now + 1000) - ack->echo_us;
  send_to(peer, echoed, client.local_endpoint());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // loopback: in the socket by now
  client.update(now += 1000);
  EXPECT_EQ(client.buffer().newest_complete_tick(), 606u);
  EXPECT_EQ(client.stats(now).rtt_ms, 0.0);
}

TEST_F(HandshakeTest, AssetMismatchDisconnectsThreeTimesAndNamesTheModel) {
  NetClient client(io, options);
  ASSERT_TRUE(client.connect(now).ok());
  auto hello = receive_as<protocol::ClientHello>(peer);
  ASSERT_TRUE(hello);
  send_to(peer, protocol::ServerChallenge{hello->client_nonce, 1}, client.local_endpoint());
  ASSERT_TRUE(update_until(client, now, [&] { return client.state() == ConnectionState::kSendingResponse; }));
  ASSERT_TRUE(receive_as<protocol::ChallengeResponse>(peer));
  send_to(peer, welcome(0xBAD), client.local_endpoint());
  ASSERT_TRUE(update_until(client, now, [&] { return client.state() == ConnectionState::kFailed; }));
  EXPECT_NE(client.error().find("server model 0 'gen-rig:24'"), std::string::npos) << client.error();
  for (int i = 0; i < 3; ++i) {
    auto bye = receive_as<protocol::Disconnect>(peer);
    ASSERT_TRUE(bye) << "copy " << i;
    EXPECT_EQ(bye->reason, protocol::DisconnectReason::kAssetMismatch);
  }
}

TEST_F(HandshakeTest, HelloIsResentUntilAnsweredThenConnectTimesOut) {
  NetClient client(io, options);
  ASSERT_TRUE(client.connect(now).ok());
  ASSERT_TRUE(receive_as<protocol::ClientHello>(peer));
  client.update(now + 100'000);
  client.update(now + 250'000);
  EXPECT_TRUE(receive_as<protocol::ClientHello>(peer));
  EXPECT_EQ(client.stats(now).hellos_sent, 2u);
  client.update(now + 5'000'000);
  EXPECT_EQ(client.state(), ConnectionState::kFailed);
  EXPECT_NE(client.error().find("no answer"), std::string::npos) << client.error();
}

TEST_F(HandshakeTest, ForeignMalformedAndUnexpectedDatagramsAreDroppedAndCounted) {
  NetClient client(io, options);
  handshake(client);
  net::UdpTransport stranger(io);
  ASSERT_TRUE(stranger.open(net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)).ok());
  send_to(stranger, protocol::Disconnect{protocol::DisconnectReason::kKicked, "spoof"}, client.local_endpoint());
  const std::array<std::byte, 5> junk{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{5}};
  ASSERT_TRUE(peer.send_to(junk, client.local_endpoint()));
  send_to(peer, protocol::ClientHello{}, client.local_endpoint());
  ASSERT_TRUE(update_until(client, now, [&] {
    const ClientStats s = client.stats(now);
    return s.dropped_foreign == 1 && s.dropped_malformed == 1 && s.dropped_unexpected == 1;
  }));
  EXPECT_TRUE(client.connected());
}

TEST_F(HandshakeTest, ServerDisconnectAndSilenceEndTheConnection) {
  {
    NetClient client(io, options);
    handshake(client);
    send_to(peer, protocol::Disconnect{protocol::DisconnectReason::kKicked, "bye"}, client.local_endpoint());
    ASSERT_TRUE(update_until(client, now, [&] { return !client.connected(); }));
    EXPECT_EQ(client.state(), ConnectionState::kDisconnected);
    EXPECT_EQ(client.disconnect_reason(), protocol::DisconnectReason::kKicked);
    EXPECT_NE(client.error().find("bye"), std::string::npos);
  }
  {
    NetClient client(io, options);
    handshake(client);
    client.update(now + 5'000'000);
    EXPECT_EQ(client.state(), ConnectionState::kDisconnected);
    EXPECT_EQ(client.disconnect_reason(), protocol::DisconnectReason::kTimeout);
  }
}

TEST_F(HandshakeTest, ConnectedClientSendsKeepAliveAcksAndLeavesCleanly) {
  NetClient client(io, options);
  handshake(client);
  while (receive(peer)) {
  }  // drain
  client.update(now + 300'000);
  auto ack = receive_as<protocol::Ack>(peer);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->newest_tick, protocol::kNoTick);
  client.disconnect(now + 300'000);
  for (int i = 0; i < 3; ++i) {
    auto bye = receive_as<protocol::Disconnect>(peer);
    ASSERT_TRUE(bye);
    EXPECT_EQ(bye->reason, protocol::DisconnectReason::kClientLeft);
  }
  EXPECT_EQ(client.state(), ConnectionState::kDisconnected);
}

}  // namespace
}  // namespace posecast::client
