// posecast-server in a fleet, as a real process: /metrics scraped over real HTTP while real UDP
// clients are connected (every line checked by a strict exposition checker, counters moving),
// /healthz and /readyz, bad HTTP requests, a stand-in Agones sidecar that sees Ready, Health at
// the configured period and Shutdown after SIGTERM, the drain (every client told
// ServerShutdown, new ones refused, the recording complete and verified), and the errors.
#include <gtest/gtest.h>

#include <signal.h>

#include <asio/io_context.hpp>

#include "exposition_checker.h"
#include "fleet_test_support.h"
#include "posecast/net/endpoint.h"
#include "raw_client.h"

namespace posecast::test {
namespace {

const std::string kDemo = std::string(POSECAST_SOURCE_DIR) + "/server/scenarios/demo.json";

uint16_t port_of(const std::string& endpoint) {
  return static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
}

// Hello, challenge, response, Welcome over real UDP; true when welcomed.
bool handshake(RawClient& client, const net::Endpoint& server, uint64_t nonce) {
  client.send(protocol::ClientHello{protocol::kProtocolVersion, nonce, "fleet"}, server, 128);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool responded = false;
  while (std::chrono::steady_clock::now() < deadline) {
    client.drain();
    if (!client.all<protocol::Welcome>().empty()) return true;
    if (!client.all<protocol::Disconnect>().empty()) return false;
    const auto challenges = client.all<protocol::ServerChallenge>();
    if (!responded && !challenges.empty()) {
      client.send(protocol::ChallengeResponse{nonce, challenges.back().challenge_token}, server);
      responded = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Waits until `client` has received a Disconnect; its reason (kUnspecified when none came).
std::optional<protocol::Disconnect> wait_disconnect(RawClient& client, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    client.drain();
    const auto byes = client.all<protocol::Disconnect>();
    if (!byes.empty()) return byes.front();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

// Keeps reading the clients' sockets for `duration` (a full socket buffer would drop the
// Disconnect the tests wait for).
void pump(std::vector<std::unique_ptr<RawClient>>& clients, std::chrono::milliseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
    for (auto& c : clients) c->drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

struct Scraped {
  Exposition exposition;
  std::string text;
};

Scraped scrape(uint16_t port) {
  const HttpReply reply = http_get(port, "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_NE(reply.head.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << reply.head;
  Scraped out{check_exposition(reply.body), reply.body};
  for (const std::string& error : out.exposition.errors) ADD_FAILURE() << error;
  return out;
}

TEST(FleetProgram, MetricsScrapedDuringALoopbackSessionAreValidAndMove) {
  ChildProcess server(POSECAST_SERVER, {"--scenario", kDemo, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
                                        "--metrics-interval", "0", "--drain-grace", "0"});
  const std::string game = server.wait_line("listening ");
  const uint16_t http = port_of(server.wait_line("metrics "));
  ASSERT_FALSE(game.empty()) << server.output();
  const Scraped before = scrape(http);
  asio::io_context io;
  const net::Endpoint address = net::parse_endpoint(game).value();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (uint64_t i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<RawClient>(io));
    ASSERT_TRUE(handshake(*clients.back(), address, 100 + i));
  }
  pump(clients, std::chrono::milliseconds(400));
  for (auto& c : clients) c->send(protocol::Ack{protocol::kNoTick, 0, 0}, address);
  pump(clients, std::chrono::milliseconds(200));
  const Scraped during = scrape(http);
  const Exposition& a = before.exposition;
  const Exposition& b = during.exposition;
  EXPECT_GT(b.value("posecast_ticks_total"), a.value("posecast_ticks_total"));
  EXPECT_EQ(b.value("posecast_clients"), 3);
  EXPECT_EQ(b.value("posecast_client_connections_total"), 3);
  EXPECT_EQ(b.value("posecast_datagrams_received_total", R"(kind="client_hello")"), 3);
  EXPECT_EQ(b.value("posecast_datagrams_received_total", R"(kind="ack")"), 3);
  EXPECT_EQ(b.value("posecast_datagrams_sent_total", R"(kind="welcome")"), 3);
  EXPECT_GT(b.value("posecast_datagrams_sent_total", R"(kind="snapshot")"),
            a.value("posecast_datagrams_sent_total", R"(kind="snapshot")"));
  EXPECT_GT(b.value("posecast_sent_bytes_total", R"(kind="snapshot")"), 0);
  EXPECT_GT(b.value("posecast_client_sent_bytes_total", R"(client="1")"), 0);
  EXPECT_GT(b.value("posecast_entities"), 0);
  EXPECT_EQ(b.value("posecast_tick_duration_seconds_count"), b.value("posecast_tick_duration_seconds_bucket", R"(le="+Inf")"));
  EXPECT_EQ(b.types.at("posecast_tick_duration_seconds"), "histogram");
  EXPECT_EQ(http_get(http, "/healthz").status, 200);
  EXPECT_EQ(http_get(http, "/readyz").status, 200);
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_exit(), 0) << server.output();
  for (auto& c : clients) {
    const auto bye = wait_disconnect(*c, std::chrono::seconds(2));
    ASSERT_TRUE(bye.has_value()) << c->received().size() << " datagrams\n" << server.output();
    EXPECT_EQ(bye->reason, protocol::DisconnectReason::kServerShutdown);
  }
}

TEST(FleetProgram, BadHttpRequestsGetA4xxAndTheServerGoesOn) {
  ChildProcess server(POSECAST_SERVER, {"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--metrics-interval", "0"});
  ASSERT_FALSE(server.wait_line("listening ").empty()) << server.output();
  const uint16_t http = port_of(server.wait_line("metrics "));
  EXPECT_EQ(http_get(http, "/nowhere").status, 404);
  const HttpReply post = http_exchange(http, "POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(post.status, 405);
  EXPECT_NE(post.head.find("Allow: GET, HEAD"), std::string::npos);
  EXPECT_EQ(http_exchange(http, std::string("\x16\x03\x01\x02\x00garbage\r\n\r\n", 17)).status, 400);
  EXPECT_EQ(http_exchange(http, "GET /metrics HTTP/2.0\r\n\r\n").status, 505);
  EXPECT_EQ(http_exchange(http, "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n").status, 431);
  EXPECT_EQ(http_exchange(http, "GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n").status, 400);
  const HttpReply head = http_exchange(http, "HEAD /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  // Still serving after all that: the tick count moves (within a few seconds, on a loaded
  // machine the exchanges above can all come before the first tick is published).
  const double ticks_before = scrape(http).exposition.value("posecast_ticks_total");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  double ticks_after = ticks_before;
  while (ticks_after <= ticks_before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ticks_after = scrape(http).exposition.value("posecast_ticks_total");
  }
  EXPECT_GT(ticks_after, ticks_before);
  server.signal(SIGINT);
  EXPECT_EQ(server.wait_exit(), 0) << server.output();
}

TEST(FleetProgram, TakenMetricsPortIsAClearErrorWithExitCode1) {
  ChildProcess first(POSECAST_SERVER, {"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--metrics-interval", "0"});
  const std::string taken = first.wait_line("metrics ");
  ASSERT_FALSE(taken.empty()) << first.output();
  ChildProcess second(POSECAST_SERVER, {"--listen", "127.0.0.1:0", "--metrics", taken});
  EXPECT_EQ(second.wait_exit(), 1);
  EXPECT_NE(second.output().find("metrics: cannot listen on " + taken), std::string::npos) << second.output();
  first.signal(SIGTERM);
  EXPECT_EQ(first.wait_exit(), 0);
}

// The whole lifecycle with a stand-in sidecar: Ready, Health at the period, SIGTERM, the drain
// under load (new clients refused, /readyz 503, every client told ServerShutdown when the grace
// ends), the recording closed and verified, then Shutdown -- in that order.
TEST(FleetProgram, AgonesLifecycleAndDrainUnderLoad) {
  StandInSidecar sidecar;
  const std::string recording = std::string(POSECAST_BINARY_DIR) + "/fleet_drain_test.pcrec";
  ChildProcess server(POSECAST_SERVER,
                      {"--scenario", kDemo, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--metrics-interval",
                       "0", "--agones", "--health-period", "0.2", "--drain-grace", "1.5", "--record", recording},
                      {"AGONES_SDK_HTTP_PORT=" + std::to_string(sidecar.port())});
  const std::string game = server.wait_line("listening ");
  const uint16_t http = port_of(server.wait_line("metrics "));
  ASSERT_FALSE(game.empty()) << server.output();
  const net::Endpoint address = net::parse_endpoint(game).value();
  asio::io_context io;
  std::vector<std::unique_ptr<RawClient>> clients;
  for (uint64_t i = 0; i < 8; ++i) {
    clients.push_back(std::make_unique<RawClient>(io));
    ASSERT_TRUE(handshake(*clients.back(), address, 500 + i));
  }
  pump(clients, std::chrono::milliseconds(1200));  // several Health periods
  const auto start = std::chrono::steady_clock::now();
  server.signal(SIGTERM);
  pump(clients, std::chrono::milliseconds(300));
  EXPECT_EQ(http_get(http, "/readyz").status, 503);
  EXPECT_EQ(scrape(http).exposition.value("posecast_draining"), 1);
  RawClient late(io);
  EXPECT_FALSE(handshake(late, address, 999));
  ASSERT_FALSE(late.all<protocol::Disconnect>().empty());
  EXPECT_EQ(late.all<protocol::Disconnect>().front().reason, protocol::DisconnectReason::kServerShutdown);
  pump(clients, std::chrono::milliseconds(2500));  // past the grace period
  for (auto& c : clients) {
    const auto byes = c->all<protocol::Disconnect>();
    ASSERT_FALSE(byes.empty()) << server.output();
    EXPECT_EQ(byes.front().reason, protocol::DisconnectReason::kServerShutdown);
    EXPECT_EQ(byes.front().message, "server shutting down");
  }
  EXPECT_EQ(server.wait_exit(), 0) << server.output();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6));  // grace + Shutdown

  const std::vector<SidecarRequest> seen = sidecar.requests();
  std::vector<std::string> lifecycle;
  std::vector<std::chrono::steady_clock::time_point> health_times;
  for (const SidecarRequest& r : seen) {
    if (r.path == "/gameserver") continue;
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.body, "{}");
    if (r.path == "/health") health_times.push_back(r.at);
    if (lifecycle.empty() || lifecycle.back() != r.path) lifecycle.push_back(r.path);
  }
  EXPECT_EQ(lifecycle, (std::vector<std::string>{"/ready", "/health", "/shutdown"}));
  ASSERT_GE(health_times.size(), 4u);
  for (std::size_t i = 1; i < health_times.size(); ++i) {
    const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(health_times[i] - health_times[i - 1]);
    EXPECT_GT(gap.count(), 120);
    EXPECT_LT(gap.count(), 600);
  }
  // The recording holds every tick the server ran and replays bit-exactly.
  const std::size_t at = server.output().find("recorded ");
  ASSERT_NE(at, std::string::npos) << server.output();
  const std::string ticks = server.output().substr(at + 9, server.output().find(' ', at + 9) - at - 9);
  ChildProcess verify(POSECAST_CLI, {"replay", recording, "--verify"});
  EXPECT_EQ(verify.wait_exit(std::chrono::seconds(60)), 0) << verify.output();
  EXPECT_NE(verify.output().find("verify: all " + ticks + " ticks match"), std::string::npos)
      << "recorded " << ticks << "\n" << verify.output();
  std::remove(recording.c_str());
}

TEST(FleetProgram, AbsentSidecarIsRetriedWithBackOffAndServingGoesOn) {
  std::string port;
  {
    StandInSidecar gone;  // takes a port, then goes away: nobody listens there
    port = std::to_string(gone.port());
  }
  ChildProcess server(POSECAST_SERVER, {"--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--metrics-interval",
                                        "0", "--agones"},
                      {"AGONES_SDK_HTTP_PORT=" + port});
  const std::string game = server.wait_line("listening ");
  const uint16_t http = port_of(server.wait_line("metrics "));
  ASSERT_FALSE(game.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  asio::io_context io;
  RawClient client(io);
  EXPECT_TRUE(handshake(client, net::parse_endpoint(game).value(), 7));
  const Scraped s = scrape(http);
  EXPECT_GE(s.exposition.value("posecast_agones_requests_total", R"(call="ready",result="error")"), 3);
  EXPECT_NE(server.output().find("retrying with back-off"), std::string::npos) << server.output();
  server.signal(SIGINT);
  server.signal(SIGINT);
  EXPECT_EQ(server.wait_exit(), 0) << server.output();
}

}  // namespace
}  // namespace posecast::test
