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
  // On Linux it also asks for kernel receive timestamps (SO_TIMESTAMPNS), for
  // last_receive_wait_us(); a kernel that refuses leaves the socket working without them.
  Status open(const Endpoint& local);
  void close();
  bool is_open() const;

  // The bound address and port (the real port when 0 was asked). Precondition: is_open().
  Endpoint local_endpoint() const;

  bool send_to(std::span<const std::byte> payload, const Endpoint& to) override;
  size_t receive_from(std::span<std::byte> buffer, Endpoint& from) override;
  // From the kernel's timestamp of the datagram against the real-time clock read right after
  // the read (both CLOCK_REALTIME, so the clock's own steps cancel except during the wait);
  // clamped to [0, 10 s]. 0 without timestamps.
  int64_t last_receive_wait_us() const override { return last_wait_us_; }
  bool has_receive_timestamps() const { return kernel_timestamps_; }
  void pump(MicrosTime) override {}
  const ChannelCounters& counters() const override { return counters_; }

  // Calls `handler` once when the socket becomes readable (or is closed / fails), through the
  // io_context. For event-driven loops; polling receive_from works without it.
  void wait_readable(std::function<void(std::error_code)> handler);

  asio::ip::udp::socket& socket() { return socket_; }

 private:
  // One read: the datagram's length (0: nothing waiting or an error to stop on), `retry` set
  // for errors that are not about this read (keep draining).
  size_t read_one(std::span<std::byte> buffer, Endpoint& from, bool& retry);
  size_t read_one_timestamped(std::span<std::byte> buffer, Endpoint& from, bool& retry);

  asio::ip::udp::socket socket_;
  ChannelCounters counters_;
  bool kernel_timestamps_ = false;
  int64_t last_wait_us_ = 0;
};

}  // namespace posecast::net
