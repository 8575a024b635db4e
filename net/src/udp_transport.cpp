#include "posecast/net/udp_transport.h"

#include <asio/buffer.hpp>
#include <asio/error.hpp>

namespace posecast::net {

UdpTransport::UdpTransport(asio::io_context& io) : socket_(io) {}

UdpTransport::~UdpTransport() { close(); }

Status UdpTransport::open(const Endpoint& local) {
  close();
  std::error_code error;
  socket_.open(local.protocol(), error);
  if (!error) socket_.bind(local, error);
  if (!error) socket_.non_blocking(true, error);
  if (error) {
    const std::string reason = error.message();
    close();
    return Error{"udp socket " + to_string(local) + ": " + reason};
  }
  return {};
}

void UdpTransport::close() {
  if (socket_.is_open()) {
    std::error_code ignored;
    socket_.close(ignored);
  }
}

bool UdpTransport::is_open() const { return socket_.is_open(); }

Endpoint UdpTransport::local_endpoint() const {
  std::error_code ignored;
  return socket_.local_endpoint(ignored);
}

bool UdpTransport::send_to(std::span<const std::byte> payload, const Endpoint& to) {
  if (!socket_.is_open() || payload.empty()) {
    ++counters_.send_failures;
    return false;
  }
  std::error_code error;
  const size_t sent = socket_.send_to(asio::buffer(payload.data(), payload.size()), to, 0, error);
  if (error || sent != payload.size()) {
    ++counters_.send_failures;
    return false;
  }
  ++counters_.datagrams_sent;
  counters_.bytes_sent += sent;
  return true;
}

size_t UdpTransport::receive_from(std::span<std::byte> buffer, Endpoint& from) {
  if (!socket_.is_open() || buffer.empty()) return 0;
  for (;;) {
    std::error_code error;
    const size_t received =
        socket_.receive_from(asio::buffer(buffer.data(), buffer.size()), from, 0, error);
    if (error == asio::error::would_block || error == asio::error::try_again) return 0;
    if (error) {
      // ICMP port-unreachable from an earlier send shows up here on Linux as
      // connection_refused; it is not about this read, so keep draining.
      ++counters_.receive_errors;
      if (error == asio::error::connection_refused) continue;
      return 0;
    }
    if (received == 0) continue;
    ++counters_.datagrams_received;
    counters_.bytes_received += received;
    return received;
  }
}

void UdpTransport::wait_readable(std::function<void(std::error_code)> handler) {
  socket_.async_wait(asio::ip::udp::socket::wait_read, std::move(handler));
}

}  // namespace posecast::net
