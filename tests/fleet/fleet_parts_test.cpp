// The fleet module's parts alone: HTTP heads and responses, the exposition writer against the
// strict checker, and the checker refusing invalid text.
#include <gtest/gtest.h>

#include <thread>

#include <asio/io_context.hpp>

#include "exposition_checker.h"
#include "fleet_test_support.h"
#include "http_client.h"
#include "http_message.h"
#include "http_server.h"
#include "prometheus_text.h"

namespace posecast::server::fleet {
namespace {

TEST(HttpMessage, ParsesARequestHeadAndDropsTheQuery) {
  const std::string head = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept:  text/plain \r\n\r\n";
  ASSERT_EQ(head_length(head), head.size());
  auto parsed = parse_request_head(head);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->method, "GET");
  EXPECT_EQ(parsed->path, "/metrics");
  ASSERT_EQ(parsed->headers.size(), 2u);
  EXPECT_EQ(parsed->headers[1].first, "accept");
  EXPECT_EQ(parsed->headers[1].second, "text/plain");
  EXPECT_EQ(head_length("GET / HTTP/1.1\r\n"), 0u);
}

TEST(HttpMessage, RefusesBadRequestLinesHeadersAndVersions) {
  for (const char* bad : {"GET\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n",
                          "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n", "GET / HTTP/1.1\r\nno colon\r\n\r\n",
                          "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"}) {
    EXPECT_FALSE(parse_request_head(bad).ok()) << bad;
  }
  auto version = parse_request_head("GET / HTTP/2.0\r\n\r\n");
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.error().message.rfind("unsupported version", 0), 0u);
}

TEST(HttpMessage, ResponsesRoundTripAndBadOnesSayWhy) {
  const std::string text = write_response(Response{404, "text/plain", "no\n", {{"Allow", "GET"}}});
  EXPECT_EQ(text.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  auto parsed = parse_response(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->status, 404);
  EXPECT_EQ(parsed->body, "no\n");
  EXPECT_TRUE(write_response(Response{200, "text/plain", "body", {}}, true).find("body") == std::string::npos);
  EXPECT_FALSE(parse_response("HTTP/1.1 2x0 OK\r\n\r\n").ok());
  EXPECT_FALSE(parse_response("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort").ok());
  EXPECT_FALSE(parse_response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n").ok());
  const std::string request = write_json_request("POST", "/ready", "127.0.0.1:9358", "{}");
  EXPECT_EQ(request.rfind("POST /ready HTTP/1.0\r\n", 0), 0u);
  EXPECT_NE(request.find("Content-Length: 2\r\n"), std::string::npos);
}

TEST(PrometheusText, EscapesAndWritesHistogramsTheCheckerAccepts) {
  PrometheusText out;
  out.family("demo_events_total", PrometheusText::Type::kCounter, "Help with a \\ and a\nnewline.");
  out.sample("demo_events_total", {{"kind", "a\"b\\c\nd"}}, uint64_t{3});
  out.family("demo_seconds", PrometheusText::Type::kHistogram, "Durations.");
  const double bounds[] = {0.0005, 0.001};
  const uint64_t counts[] = {2, 1, 4};
  out.histogram("demo_seconds", {}, bounds, counts, 1.25);
  const std::string& text = out.text();
  EXPECT_NE(text.find(R"(# HELP demo_events_total Help with a \\ and a\nnewline.)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(demo_events_total{kind="a\"b\\c\nd"} 3)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(demo_seconds_bucket{le="0.0005"} 2)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(demo_seconds_bucket{le="+Inf"} 7)"), std::string::npos) << text;
  const test::Exposition checked = test::check_exposition(text);
  EXPECT_TRUE(checked.errors.empty()) << checked.errors.front();
  EXPECT_EQ(checked.value("demo_seconds_count"), 7);
  EXPECT_EQ(checked.value("demo_seconds_sum"), 1.25);
  EXPECT_EQ(format_sample_value(1e20), "1e+20");
  EXPECT_EQ(format_sample_value(-INFINITY), "-Inf");
}

// An HttpServer on its own thread with a short request timeout, and the client against it.
class Listener : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpLimits limits;
    limits.request_timeout = std::chrono::milliseconds(300);
    limits.max_connections = 4;
    auto opened = HttpServer::open(io_, net::Endpoint(asio::ip::make_address("127.0.0.1"), 0), limits);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    server_ = std::move(opened).value();
    server_->route("/hello", [] { return Response{200, "text/plain", "hi\n", {}}; });
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    asio::post(io_, [this] { server_->close(); });
    work_.reset();
    thread_.join();
  }
  uint16_t port() const { return server_->local_endpoint().port(); }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST_F(Listener, ASlowClientGets408AndOthersAreServedMeanwhile) {
  std::thread slow([this] {
    const test::HttpReply reply = test::http_exchange(port(), "GET /hello HTTP/1.1\r\nHost: x");  // never ends its head
    EXPECT_EQ(reply.status, 408);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(test::http_get(port(), "/hello").body, "hi\n");
  slow.join();
}

TEST_F(Listener, TheClientReadsAnswersAndReportsRefusedConnections) {
  asio::io_context client_io;
  std::optional<Result<Response>> got;
  http_request(client_io, server_->local_endpoint(), "GET", "/hello", "", std::chrono::seconds(2),
               [&](Result<Response> r) { got.emplace(std::move(r)); });
  client_io.run();
  ASSERT_TRUE(got.has_value() && got->ok()) << (got && !got->ok() ? got->error().message : "no answer");
  EXPECT_EQ(got->value().status, 200);
  EXPECT_EQ(got->value().body, "hi\n");

  const uint16_t closed_port = server_->local_endpoint().port();
  asio::post(io_, [this] { server_->close(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  got.reset();
  client_io.restart();
  http_request(client_io, net::Endpoint(asio::ip::make_address("127.0.0.1"), closed_port), "POST", "/ready", "{}",
               std::chrono::seconds(2), [&](Result<Response> r) { got.emplace(std::move(r)); });
  client_io.run();
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->ok());
  EXPECT_NE(got->error().message.find("connect"), std::string::npos) << got->error().message;
}

TEST(ExpositionChecker, RefusesWhatIsNotValid) {
  const char* bad[] = {
      "x_total 1",                                                      // no final line feed
      "x_total 1\n",                                                    // no TYPE
      "# TYPE x_total counter\nx_total{a=\"1} 1\n",                      // unterminated label
      "# TYPE x_total counter\nx_total one\n",                           // bad value
      "# TYPE x counter\nx 1\n",                                         // counter not *_total
      "# TYPE x_total counter\nx_total -1\n",                            // negative counter
      "# TYPE x_total counter\n# TYPE x_total gauge\nx_total 1\n",       // TYPE twice
      "# TYPE x_total counter\nx_total 1\nx_total 2\n",                  // series twice
      "# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{z=\"1\"} 2\n",           // samples apart
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",  // not cumulative
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",   // no +Inf
      "# TYPE x gauge\nx{a=\"\\q\"} 1\n",                                // bad escape
      "# TYPE x gauge\n\nx 1\n",                                         // empty line
  };
  for (const char* text : bad) EXPECT_FALSE(test::check_exposition(text).errors.empty()) << text;
}

}  // namespace
}  // namespace posecast::server::fleet
