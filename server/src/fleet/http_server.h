#pragma once
// HttpServer: the fleet module's HTTP/1.1 listener (/metrics, /healthz, /readyz), on Asio.
//
// One request per connection, answered and closed. GET and HEAD only, on the routed paths.
// Hostile input is answered, never trusted: a head over kMaxHeadBytes gets 431, a malformed
// request line or header 400, another HTTP version 505, another method 405 (with Allow), an
// unknown path 404; a client that has not sent its whole head within the request timeout is
// answered 408 and dropped; beyond `max_connections` open at once, new ones are closed at once.
// Runs on the io_context the caller gives it (the fleet thread), never the game's.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include "http_message.h"
#include "posecast/net/endpoint.h"
#include "posecast/result.h"

namespace posecast::server::fleet {

struct HttpLimits {
  std::size_t max_connections = 16;
  std::chrono::milliseconds request_timeout{5000};
};

class HttpServer {
 public:
  using Handler = std::function<Response()>;

  // Binds `endpoint` (TCP; port 0: any) on `io` and starts accepting. Errors: "cannot listen on
  // ADDR: <OS reason>" (a taken port among them). `io` must outlive the server; every call below
  // and every handler runs on the thread running `io`, but for the constructor and local_endpoint().
  static Result<std::unique_ptr<HttpServer>> open(asio::io_context& io, const net::Endpoint& endpoint,
                                                  HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Serves `path` (exact match; a query is ignored) for GET and HEAD with `handler`'s answer.
  void route(std::string path, Handler handler);
  net::Endpoint local_endpoint() const { return local_; }
  // Stops accepting and closes every open connection.
  void close();

  // Requests answered, by status (tests and logs); on the io thread.
  const std::map<int, uint64_t>& answered() const { return answered_; }

  struct Connection;

 private:
  HttpServer(asio::io_context& io, HttpLimits limits);
  void accept_next();
  void on_head(Connection& connection);
  void answer(Connection& connection, const Response& response, bool head_only);
  void forget(Connection* connection);

  asio::io_context& io_;
  HttpLimits limits_;
  asio::ip::tcp::acceptor acceptor_;
  net::Endpoint local_;
  std::map<std::string, Handler> routes_;
  std::map<Connection*, std::shared_ptr<Connection>> open_;
  std::map<int, uint64_t> answered_;
  bool closed_ = false;
};

}  // namespace posecast::server::fleet
