#include "http_client.h"

#include <array>
#include <memory>

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>

namespace posecast::server::fleet {
namespace {

// One request in flight; the shared pointer in each handler keeps it alive.
struct Exchange : std::enable_shared_from_this<Exchange> {
  Exchange(asio::io_context& io, HttpCallback callback) : socket(io), deadline(io), done(std::move(callback)) {}
  asio::ip::tcp::socket socket;
  asio::steady_timer deadline;
  HttpCallback done;
  std::string request;
  std::string received;
  std::array<char, 4096> chunk{};
  std::string where;
  bool finished = false;

  void finish(Result<Response> result) {
    if (finished) return;
    finished = true;
    std::error_code ignored;
    socket.close(ignored);
    deadline.cancel();
    done(std::move(result));
  }

  void read_more() {
    socket.async_read_some(asio::buffer(chunk), [self = shared_from_this()](const std::error_code& error, std::size_t n) {
      if (self->finished) return;
      self->received.append(self->chunk.data(), n);
      if (self->received.size() > kMaxHeadBytes + kMaxBodyBytes) {
        self->finish(Error{self->where + ": answer over " + std::to_string(kMaxHeadBytes + kMaxBodyBytes) + " bytes"});
      } else if (error == asio::error::eof) {
        Result<Response> response = parse_response(self->received);
        if (!response) {
          self->finish(Error{self->where + ": " + response.error().message});
        } else {
          self->finish(std::move(response).value());
        }
      } else if (error) {
        self->finish(Error{self->where + ": " + error.message()});
      } else {
        self->read_more();
      }
    });
  }
};

}  // namespace

void http_request(asio::io_context& io, const net::Endpoint& to, std::string method, std::string path,
                  std::string body, std::chrono::milliseconds timeout, HttpCallback done) {
  auto exchange = std::make_shared<Exchange>(io, std::move(done));
  exchange->where = method + " " + net::to_string(to) + path;
  exchange->request = write_json_request(method, path, net::to_string(to), body);
  exchange->deadline.expires_after(timeout);
  exchange->deadline.async_wait([exchange, timeout](const std::error_code& error) {
    if (error) return;
    exchange->finish(Error{exchange->where + ": timed out after " + std::to_string(timeout.count()) + " ms"});
  });
  const asio::ip::tcp::endpoint target(to.address(), to.port());
  exchange->socket.async_connect(target, [exchange](const std::error_code& error) {
    if (exchange->finished) return;
    if (error) {
      exchange->finish(Error{exchange->where + ": connect: " + error.message()});
      return;
    }
    asio::async_write(exchange->socket, asio::buffer(exchange->request),
                      [exchange](const std::error_code& write_error, std::size_t) {
                        if (exchange->finished) return;
                        if (write_error) {
                          exchange->finish(Error{exchange->where + ": send: " + write_error.message()});
                          return;
                        }
                        exchange->read_more();
                      });
  });
}

}  // namespace posecast::server::fleet
