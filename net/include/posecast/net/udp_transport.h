#pragma once
// UdpTransport: one non-blocking UDP socket on an asio::io_context the caller owns.
// send_to / receive_from never block and never allocate; the io_context is only needed for
// construction and for callers that want to wait for readability (wait_readable).

#include <functional>
#include <system_error>

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include "posecast/net/datagram_channel.h"
#include "posecast/result.h"

namespace posecast::net {

class UdpTransport final : public DatagramChannel {
 public:
  // The transport keeps a reference to `io`; `io` must outlive it.
  explicit UdpTransport(asio::io_context& io);
  ~UdpTransport() override;
  UdpTransport(const UdpTransport&) = delete;
  UdpTransport& operator=(const UdpTransport&) = delete;

  // Opens a socket of `local`'s family, binds it (port 0 = an ephemeral port) and makes it
  // non-blocking. Fails with the address and the OS reason. Reopening closes the old socket.
  Status open(const Endpoint& local);
  void close();
  bool is_open() const;

  // The bound address and port (the real port when 0 was asked). Precondition: is_open().
  Endpoint local_endpoint() const;

  bool send_to(std::span<const std::byte> payload, const Endpoint& to) override;
  size_t receive_from(std::span<std::byte> buffer, Endpoint& from) override;
  void pump(MicrosTime) override {}
  const ChannelCounters& counters() const override { return counters_; }

  // Calls `handler` once when the socket becomes readable (or is closed / fails), through the
  // io_context. For event-driven loops; polling receive_from works without it.
  void wait_readable(std::function<void(std::error_code)> handler);

  asio::ip::udp::socket& socket() { return socket_; }

 private:
  asio::ip::udp::socket socket_;
  ChannelCounters counters_;
};

}  // namespace posecast::net
