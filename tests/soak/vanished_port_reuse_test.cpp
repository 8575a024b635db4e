// Regression for posecast-soak's false alarm "server timed out 151 clients; 152 vanished long
// enough ago", which came and went between runs with the same seed. Real server, real
// NetClients, real UDP on 127.0.0.1, simulated time (LoopbackSession, as the soak runs them).
//
// The cause: a vanished client's socket was closed at once, and the kernel picks ephemeral
// ports at random, so now and then a joining client got the very port of a vanished client
// whose session the server still held. The server knows clients only by address: it took the
// newcomer for the vanished client restarting and ended the old session as replaced, not by a
// timeout. The server was right; the soak's count was wrong. These tests make the kernel's
// rare choice deterministic by binding the newcomer to that port explicitly.

#include <gtest/gtest.h>

#include "loopback_session.h"
#include "session_ledger.h"

namespace posecast::soak {
namespace {

using client::ConnectionState;
using client::NetClient;
using client::testing::LoopbackSession;
using client::testing::SessionSetup;
using protocol::DisconnectReason;

constexpr int64_t kSoakTolerance = 500'000;  // as in the soak

struct Closed {
  uint32_t id = 0;
  DisconnectReason reason = DisconnectReason::kUnspecified;
};

// A LoopbackSession whose server reports its sessions to a SessionLedger, as the soak's does.
class SoakVanishedPortReuse : public ::testing::Test {
 protected:
  SoakVanishedPortReuse() : ledger_(SessionSetup{}.server.timeout_us, kSoakTolerance), session_(SessionSetup{}) {
    if (!session_.ok()) return;
    session_.server().on_client_connected([this](const server::ClientInfo& info) {
      ledger_.session_opened(info.endpoint, info.id);
    });
    session_.server().on_client_disconnected([this](const server::ClientInfo& info, DisconnectReason reason) {
      closed_.push_back(Closed{info.id, reason});
      ledger_.session_closed(info.endpoint, info.id, reason, session_.now());
    });
  }

  // Connects a client (bound to `port`, 0 for any) and runs until it is connected.
  NetClient& connect(uint64_t nonce, uint16_t port) {
    client::NetClientOptions options = session_.client_options(nonce);
    options.local = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), port);
    NetClient& c = session_.add_client(std::move(options));
    session_.run_until(session_.now() + 500'000);
    EXPECT_TRUE(c.connected()) << c.error();
    return c;
  }

  // The client stops sending: it leaves the session's update loop. Its object (and socket)
  // is handed back so the caller decides whether the socket closes now or stays bound.
  std::unique_ptr<NetClient> vanish(NetClient& c) {
    auto& clients = session_.clients();
    auto it = std::find_if(clients.begin(), clients.end(), [&](const auto& p) { return p.get() == &c; });
    std::unique_ptr<NetClient> gone = std::move(*it);
    clients.erase(it);
    ledger_.client_vanished(gone->local_endpoint(), session_.now());
    return gone;
  }

  int64_t timeout_us() const { return SessionSetup{}.server.timeout_us; }

  // Declared before the session, whose server's callbacks use them until it is destroyed.
  SessionLedger ledger_;
  std::vector<Closed> closed_;
  LoopbackSession session_;
};

// The bug reproduced: the vanished session ends without a timeout, so "timeouts >= vanished
// long enough ago" fails although the server held nothing it should not have.
TEST_F(SoakVanishedPortReuse, ANewClientOnAVanishedClientsPortEndsItsSessionAsReplacedNotTimedOut) {
  ASSERT_TRUE(session_.ok());
  NetClient& first = connect(11, 0);
  const uint16_t port = first.local_endpoint().port();
  const uint32_t first_id = first.client_id();
  vanish(first).reset();  // the socket closes: the port is free again
  const int64_t vanished_at = session_.now();

  NetClient& second = connect(22, port);  // what the kernel's random choice did now and then
  EXPECT_EQ(second.local_endpoint().port(), port);
  session_.run_until(vanished_at + timeout_us() + kSoakTolerance + 100'000);

  const server::ServerMetrics m = session_.server().metrics();
  EXPECT_EQ(m.connections, 2u);
  EXPECT_EQ(m.timeouts, 0u);  // the old soak: "server timed out 0 clients; 1 vanished long enough ago"
  ASSERT_EQ(closed_.size(), 1u);
  EXPECT_EQ(closed_[0].id, first_id);
  EXPECT_EQ(closed_[0].reason, DisconnectReason::kClientLeft);  // replaced by a new connection
  EXPECT_TRUE(second.connected());
  std::vector<std::string> violations;
  ledger_.finish(session_.now(), violations);
  ASSERT_EQ(violations.size(), 1u);  // the ledger names it, session by session
  EXPECT_NE(violations[0].find("ended as client left"), std::string::npos) << violations[0];
}

// The soak's remedy: a vanished client stays silent with its socket bound until the server
// no longer holds its session. The port cannot be taken, and the session times out in time.
TEST_F(SoakVanishedPortReuse, AVanishedClientsBoundSocketKeepsItsPortUntilTheServerTimesItOut) {
  ASSERT_TRUE(session_.ok());
  NetClient& first = connect(11, 0);
  const net::Endpoint address = first.local_endpoint();
  std::unique_ptr<NetClient> silent = vanish(first);
  const int64_t vanished_at = session_.now();

  client::NetClientOptions options = session_.client_options(22);
  options.local = address;
  NetClient blocked(session_.io(), options);
  EXPECT_FALSE(blocked.connect(session_.now()).ok());  // address in use
  EXPECT_EQ(blocked.state(), ConnectionState::kFailed);

  while (ledger_.holds_session(address) && session_.now() < vanished_at + 2 * timeout_us()) {
    session_.run_until(session_.now() + 100'000);
  }
  EXPECT_FALSE(ledger_.holds_session(address));
  EXPECT_LE(session_.now() - vanished_at, timeout_us() + kSoakTolerance);
  silent.reset();  // now the soak releases the port

  const server::ServerMetrics m = session_.server().metrics();
  EXPECT_EQ(m.timeouts, 1u);
  ASSERT_EQ(closed_.size(), 1u);
  EXPECT_EQ(closed_[0].reason, DisconnectReason::kTimeout);
  std::vector<std::string> violations;
  const LedgerCounts counts = ledger_.finish(vanished_at + timeout_us() + kSoakTolerance, violations);
  EXPECT_TRUE(violations.empty());
  EXPECT_EQ(counts.timeout_due, 1u);
  EXPECT_EQ(counts.timed_out_in_time, 1u);
}

}  // namespace
}  // namespace posecast::soak
