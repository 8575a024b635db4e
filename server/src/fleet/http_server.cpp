#include "http_server.h"

#include <array>

#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

namespace posecast::server::fleet {

// One client's connection: its socket, what it has sent so far, and its deadline.
struct HttpServer::Connection {
  explicit Connection(asio::io_context& io) : socket(io), deadline(io) {}
  asio::ip::tcp::socket socket;
  asio::steady_timer deadline;
  std::string received;
  std::array<char, 2048> chunk{};
  std::string reply;
  bool answering = false;
  bool done = false;  // closed: handlers still queued for it do nothing
};

HttpServer::HttpServer(asio::io_context& io, HttpLimits limits) : io_(io), limits_(limits), acceptor_(io) {}

HttpServer::~HttpServer() { close(); }

Result<std::unique_ptr<HttpServer>> HttpServer::open(asio::io_context& io, const net::Endpoint& endpoint,
                                                     HttpLimits limits) {
  std::unique_ptr<HttpServer> server(new HttpServer(io, limits));
  const asio::ip::tcp::endpoint where(endpoint.address(), endpoint.port());
  std::error_code error;
  server->acceptor_.open(where.protocol(), error);
  if (!error) server->acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), error);
  if (!error) server->acceptor_.bind(where, error);
  if (!error) server->acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) return Error{"cannot listen on " + net::to_string(endpoint) + ": " + error.message()};
  const asio::ip::tcp::endpoint bound = server->acceptor_.local_endpoint(error);
  server->local_ = net::Endpoint(bound.address(), bound.port());
  server->accept_next();
  return server;
}

void HttpServer::route(std::string path, Handler handler) { routes_[std::move(path)] = std::move(handler); }

void HttpServer::close() {
  if (closed_) return;
  closed_ = true;
  std::error_code ignored;
  acceptor_.close(ignored);
  for (auto& [raw, connection] : open_) {
    connection->done = true;
    connection->socket.close(ignored);
    connection->deadline.cancel();
  }
  open_.clear();
}

void HttpServer::accept_next() {
  if (closed_) return;
  auto connection = std::make_shared<Connection>(io_);
  acceptor_.async_accept(connection->socket, [this, connection](const std::error_code& error) {
    if (error || closed_) {
      if (!closed_ && error != asio::error::operation_aborted) {
        spdlog::warn("metrics listener: accept: {}", error.message());
        accept_next();
      }
      return;
    }
    if (open_.size() >= limits_.max_connections) {
      std::error_code ignored;
      connection->socket.close(ignored);  // over the limit: no reply, nothing held
    } else {
      open_[connection.get()] = connection;
      connection->deadline.expires_after(limits_.request_timeout);
      connection->deadline.async_wait([this, connection](const std::error_code& timer_error) {
        if (timer_error || connection->done) return;
        if (connection->answering) {
          forget(connection.get());  // the client does not read its answer: give up on it
        } else {
          answer(*connection, Response{408, "text/plain; charset=utf-8", "request head not received in time\n", {}},
                 false);
        }
      });
      on_head(*connection);
    }
    accept_next();
  });
}

// Reads until the head is complete (or too long), then answers.
void HttpServer::on_head(Connection& connection) {
  const std::size_t length = head_length(connection.received);
  if (length == 0 && connection.received.size() <= kMaxHeadBytes) {
    connection.socket.async_read_some(
        asio::buffer(connection.chunk), [this, keep = open_.at(&connection)](const std::error_code& error, std::size_t n) {
          if (keep->done || keep->answering) return;
          if (error) {
            forget(keep.get());  // the client went away
            return;
          }
          keep->received.append(keep->chunk.data(), n);
          on_head(*keep);
        });
    return;
  }
  if (length == 0 || length > kMaxHeadBytes) {
    answer(connection, Response{431, "text/plain; charset=utf-8", "request head over " +
                                std::to_string(kMaxHeadBytes) + " bytes\n", {}}, false);
    return;
  }
  Result<RequestHead> head = parse_request_head(std::string_view(connection.received).substr(0, length));
  if (!head) {
    const int status = head.error().message.rfind("unsupported version", 0) == 0 ? 505 : 400;
    answer(connection, Response{status, "text/plain; charset=utf-8", head.error().message + "\n", {}}, false);
    return;
  }
  const bool head_only = head->method == "HEAD";
  if (head->method != "GET" && !head_only) {
    answer(connection, Response{405, "text/plain; charset=utf-8", "only GET and HEAD\n", {{"Allow", "GET, HEAD"}}},
           false);
    return;
  }
  const auto route = routes_.find(head->path);
  if (route == routes_.end()) {
    std::string known;
    for (const auto& [path, handler] : routes_) known += (known.empty() ? "" : ", ") + path;
    answer(connection, Response{404, "text/plain; charset=utf-8", "no such path; try " + known + "\n", {}},
           head_only);
    return;
  }
  answer(connection, route->second(), head_only);
}

void HttpServer::answer(Connection& connection, const Response& response, bool head_only) {
  ++answered_[response.status];
  connection.answering = true;
  connection.reply = write_response(response, head_only);
  asio::async_write(connection.socket, asio::buffer(connection.reply),
                    [this, keep = open_.at(&connection)](const std::error_code&, std::size_t) {
                      if (keep->done) return;
                      std::error_code ignored;
                      keep->socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                      forget(keep.get());
                    });
}

void HttpServer::forget(Connection* connection) {
  const auto found = open_.find(connection);
  if (found == open_.end()) return;
  std::error_code ignored;
  connection->done = true;
  connection->socket.close(ignored);
  connection->deadline.cancel();
  open_.erase(found);  // handlers still queued hold their own reference
}

}  // namespace posecast::server::fleet
