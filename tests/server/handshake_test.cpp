// Connection rules of docs/session.md: handshake, refusals, cookies, amplification, timeouts.

#include "server_fixture.h"

namespace posecast::test {
namespace {

using server::DropReason;

class Handshake : public ServerFixture {};

TEST_F(Handshake, SucceedsAndWelcomeListsTheAssetsAndRates) {
  start();
  RawClient& client = add_client();
  const protocol::Welcome welcome = connect(client, 42);
  ASSERT_NE(welcome.client_id, 0u);
  EXPECT_EQ(welcome.protocol_version, protocol::kProtocolVersion);
  EXPECT_EQ(welcome.tick_rate_hz, 60);
  EXPECT_EQ(welcome.send_rate_hz, 20);
  ASSERT_EQ(welcome.assets.size(), 1u);
  EXPECT_EQ(welcome.assets[0].content_hash, generated_rig()->content_hash);
  EXPECT_EQ(welcome.assets[0].source, "gen-rig:24");
  EXPECT_EQ(server->metrics().clients, 1u);
  ASSERT_EQ(server->clients().size(), 1u);
  EXPECT_EQ(server->clients()[0].endpoint, client.endpoint());
}

TEST_F(Handshake, ChallengeEchoesTheNonceAndIsNoLargerThanTheHello) {
  start();
  RawClient& client = add_client();
  client.send(protocol::ClientHello{protocol::kProtocolVersion, 7, ""}, address, kHelloPad);
  step();
  ASSERT_EQ(client.received().size(), 1u);
  EXPECT_LE(client.received()[0].bytes.size(), kHelloPad);
  auto challenges = client.all<protocol::ServerChallenge>();
  ASSERT_EQ(challenges.size(), 1u);
  EXPECT_EQ(challenges[0].client_nonce, 7u);
  EXPECT_EQ(server->metrics().clients, 0u) << "no state before the response";
}

TEST_F(Handshake, VersionMismatchIsRefusedWithAReasonNamingBothVersions) {
  start();
  RawClient& client = add_client();
  client.send(protocol::ClientHello{static_cast<uint16_t>(protocol::kProtocolVersion + 1), 1, ""}, address, 400);
  step();
  auto refusals = client.all<protocol::Disconnect>();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].reason, protocol::DisconnectReason::kProtocolMismatch);
  EXPECT_NE(refusals[0].message.find(std::to_string(protocol::kProtocolVersion)), std::string::npos)
      << refusals[0].message;
  EXPECT_NE(refusals[0].message.find(std::to_string(protocol::kProtocolVersion + 1)), std::string::npos)
      << refusals[0].message;
  EXPECT_EQ(drops(DropReason::kProtocolMismatch), 1u);
}

TEST_F(Handshake, RefusalToASmallHelloIsShortenedToFitIt) {
  start();
  RawClient& client = add_client();
  // An unpadded hello with another version: the Disconnect's text must be cut to fit it.
  const std::vector<uint8_t> hello = encode(protocol::ClientHello{99, 1, ""});
  ASSERT_GE(hello.size(), encode(protocol::ServerChallenge{~0ull, ~0ull}).size());
  client.send_bytes(hello, address);
  step();
  ASSERT_EQ(client.received().size(), 1u);
  EXPECT_LE(client.received()[0].bytes.size(), hello.size());
  auto refusals = client.all<protocol::Disconnect>();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].reason, protocol::DisconnectReason::kProtocolMismatch);
  EXPECT_EQ(drops(DropReason::kProtocolMismatch), 1u);
}

TEST_F(Handshake, FullServerRefusesWithServerFull) {
  server::ServerOptions options;
  options.max_clients = 1;
  start(options);
  RawClient& first = add_client();
  ASSERT_NE(connect(first, 1).client_id, 0u);
  RawClient& second = add_client();
  second.send(protocol::ClientHello{protocol::kProtocolVersion, 2, ""}, address, kHelloPad);
  step();
  auto refusals = second.all<protocol::Disconnect>();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].reason, protocol::DisconnectReason::kServerFull);
  EXPECT_TRUE(second.all<protocol::ServerChallenge>().empty());
  EXPECT_EQ(drops(DropReason::kServerFull), 1u);
  EXPECT_EQ(server->metrics().clients, 1u);
}

TEST_F(Handshake, BadChallengeTokenIsDroppedCountedAndUnanswered) {
  start();
  RawClient& client = add_client();
  client.send(protocol::ClientHello{protocol::kProtocolVersion, 5, ""}, address, kHelloPad);
  step();
  auto challenges = client.all<protocol::ServerChallenge>();
  ASSERT_EQ(challenges.size(), 1u);
  const std::size_t before = client.received().size();
  client.send(protocol::ChallengeResponse{5, challenges[0].challenge_token ^ 1}, address);
  client.send(protocol::ChallengeResponse{6, challenges[0].challenge_token}, address);  // other nonce
  step(2);
  EXPECT_EQ(client.received().size(), before);
  EXPECT_EQ(drops(DropReason::kBadChallenge), 2u);
  EXPECT_EQ(server->metrics().clients, 0u);
}

TEST_F(Handshake, ResponseReplayedFromAnotherAddressIsABadChallenge) {
  start();
  RawClient& victim = add_client();
  RawClient& attacker = add_client();
  victim.send(protocol::ClientHello{protocol::kProtocolVersion, 9, ""}, address, kHelloPad);
  step();
  const auto token = victim.all<protocol::ServerChallenge>().at(0).challenge_token;
  attacker.send(protocol::ChallengeResponse{9, token}, address);
  step();
  EXPECT_TRUE(attacker.received().empty());
  EXPECT_EQ(drops(DropReason::kBadChallenge), 1u);
  EXPECT_EQ(server->metrics().clients, 0u);
}

TEST_F(Handshake, TokenExpiresAfterTwoChallengeWindows) {
  server::ServerOptions options;
  options.challenge_window_us = 1'000'000;
  start(options);
  RawClient& client = add_client();
  client.send(protocol::ClientHello{protocol::kProtocolVersion, 3, ""}, address, kHelloPad);
  step();
  const auto token = client.all<protocol::ServerChallenge>().at(0).challenge_token;
  now_us += 2'100'000;
  client.send(protocol::ChallengeResponse{3, token}, address);
  step();
  EXPECT_TRUE(client.all<protocol::Welcome>().empty());
  EXPECT_EQ(drops(DropReason::kBadChallenge), 1u);
}

TEST_F(Handshake, NothingSentBeforeVerificationIsLargerThanItsRequest) {
  server::ServerOptions options;
  options.max_clients = 1;
  start(options);
  RawClient& occupant = add_client();
  ASSERT_NE(connect(occupant, 100).client_id, 0u);
  // Every kind of unverified request, at the smallest size the server answers at all.
  const std::size_t minimum = encode(protocol::ServerChallenge{~0ull, ~0ull}).size();
  RawClient& probe = add_client();
  struct Probe {
    protocol::Message message;
  };
  const std::vector<protocol::Message> requests = {
      protocol::ClientHello{protocol::kProtocolVersion, 1, ""},             // full: refusal
      protocol::ClientHello{static_cast<uint16_t>(protocol::kProtocolVersion + 5), 2, ""},  // version
      protocol::ChallengeResponse{3, 12345},                                 // bad token
      protocol::Ack{10, 0},                                                  // not connected
  };
  std::size_t answered = 0;
  for (const protocol::Message& request : requests) {
    for (std::size_t pad : {std::size_t{0}, minimum, minimum + 3, std::size_t{300}}) {
      std::vector<uint8_t> bytes = encode(request);
      if (bytes.size() < pad) bytes.resize(pad, 0);
      const std::size_t before = probe.received().size();
      probe.send_bytes(bytes, address);
      step();
      for (std::size_t i = before; i < probe.received().size(); ++i) {
        EXPECT_LE(probe.received()[i].bytes.size(), bytes.size());
      }
      // A hello of at least the challenge's size is answered (the refusal, its text cut to
      // fit): else the size checks above would pass on a server that answers nothing.
      if (std::holds_alternative<protocol::ClientHello>(request) && bytes.size() >= minimum) {
        EXPECT_GE(probe.received().size(), before + 1) << "no reply to a hello of " << bytes.size() << " bytes";
        ++answered;
      }
    }
  }
  ASSERT_GE(answered, 6u);  // both hellos, at least at minimum, minimum + 3 and 300 bytes
  EXPECT_EQ(probe.all<protocol::Disconnect>().size(), probe.received().size());
}

TEST_F(Handshake, LostWelcomeIsSentAgainOnARepeatedResponse) {
  start();
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 11).client_id, 0u);
  const auto token = client.all<protocol::ServerChallenge>().back().challenge_token;
  step(10);  // past the 100 ms resend guard
  client.send(protocol::ChallengeResponse{11, token}, address);
  step();
  EXPECT_EQ(client.all<protocol::Welcome>().size(), 2u);
  EXPECT_EQ(server->metrics().clients, 1u);
}

TEST_F(Handshake, SilentClientTimesOutWithAReason) {
  start();
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  now_us += 4'900'000;
  step();
  EXPECT_EQ(server->metrics().clients, 1u);
  now_us += 200'000;
  step();
  EXPECT_EQ(server->metrics().clients, 0u);
  EXPECT_EQ(server->metrics().timeouts, 1u);
  auto byes = client.all<protocol::Disconnect>();
  ASSERT_FALSE(byes.empty());
  EXPECT_EQ(byes.back().reason, protocol::DisconnectReason::kTimeout);
}

TEST_F(Handshake, AcksKeepAClientAlive) {
  start();
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  for (int i = 0; i < 8; ++i) {
    now_us += 900'000;
    client.send(protocol::Ack{protocol::kNoTick, 0}, address);
    step();
  }
  EXPECT_EQ(server->metrics().clients, 1u);
}

TEST_F(Handshake, ClientDisconnectRemovesTheSession) {
  start();
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  client.send(protocol::Disconnect{protocol::DisconnectReason::kClientLeft, "bye"}, address);
  step();
  EXPECT_EQ(server->metrics().clients, 0u);
  EXPECT_EQ(server->metrics().disconnects_client, 1u);
}

TEST_F(Handshake, ShutdownSendsServerShutdownThreeTimes) {
  start();
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  server->shutdown(now_us);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  client.drain();
  auto byes = client.all<protocol::Disconnect>();
  ASSERT_EQ(byes.size(), 3u);
  for (const auto& bye : byes) EXPECT_EQ(bye.reason, protocol::DisconnectReason::kServerShutdown);
}

TEST_F(Handshake, KickDisconnectsWithTheGivenReason) {
  start();
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  ASSERT_NE(id, 0u);
  server->kick(id, "cheating");
  step();
  auto byes = client.all<protocol::Disconnect>();
  ASSERT_FALSE(byes.empty());
  EXPECT_EQ(byes.back().reason, protocol::DisconnectReason::kKicked);
  EXPECT_EQ(byes.back().message, "cheating");
  EXPECT_EQ(server->metrics().clients, 0u);
}

}  // namespace
}  // namespace posecast::test
