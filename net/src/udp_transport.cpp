#include "posecast/net/udp_transport.h"

#include <algorithm>
#include <cstring>

#include <asio/buffer.hpp>
#include <asio/error.hpp>

#if defined(__linux__)
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#endif

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
#if defined(__linux__)
  const int on = 1;
  kernel_timestamps_ =
      ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
#endif
  return {};
}

void UdpTransport::close() {
  kernel_timestamps_ = false;
  last_wait_us_ = 0;
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
    bool retry = false;
    const size_t received = kernel_timestamps_ ? read_one_timestamped(buffer, from, retry)
                                               : read_one(buffer, from, retry);
    if (retry) continue;
    if (received == 0) return 0;
    ++counters_.datagrams_received;
    counters_.bytes_received += received;
    return received;
  }
}

size_t UdpTransport::read_one(std::span<std::byte> buffer, Endpoint& from, bool& retry) {
  std::error_code error;
  const size_t received =
      socket_.receive_from(asio::buffer(buffer.data(), buffer.size()), from, 0, error);
  if (error == asio::error::would_block || error == asio::error::try_again) return 0;
  if (error) {
    // ICMP port-unreachable from an earlier send shows up here on Linux as
    // connection_refused; it is not about this read, so keep draining.
    ++counters_.receive_errors;
    retry = error == asio::error::connection_refused;
    return 0;
  }
  retry = received == 0;  // zero-length datagrams carry nothing: skipped
  last_wait_us_ = 0;
  return received;
}

#if defined(__linux__)
// recvmsg on the socket asio opened (asio has no way to return control messages), with the
// same outcomes as read_one: the payload (truncated to the buffer, like recvfrom), the source,
// and the SCM_TIMESTAMPNS control message the kernel attaches when SO_TIMESTAMPNS is on.
size_t UdpTransport::read_one_timestamped(std::span<std::byte> buffer, Endpoint& from,
                                          bool& retry) {
  iovec payload{buffer.data(), buffer.size()};
  alignas(cmsghdr) unsigned char control[CMSG_SPACE(sizeof(timespec))];
  msghdr message{};
  message.msg_name = from.data();
  message.msg_namelen = static_cast<socklen_t>(from.capacity());
  message.msg_iov = &payload;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  const ssize_t received = ::recvmsg(socket_.native_handle(), &message, MSG_DONTWAIT);
  if (received < 0) {
    const int error = errno;
    if (error == EAGAIN || error == EWOULDBLOCK) return 0;
    if (error == EINTR) {  // a signal, not an error: read again
      retry = true;
      return 0;
    }
    ++counters_.receive_errors;
    retry = error == ECONNREFUSED;  // as in read_one: an earlier send's ICMP, keep draining
    return 0;
  }
  if (received == 0) {
    retry = true;
    return 0;
  }
  from.resize(message.msg_namelen);
  last_wait_us_ = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS ||
        c->cmsg_len < CMSG_LEN(sizeof(timespec))) {
      continue;
    }
    timespec stamped;
    std::memcpy(&stamped, CMSG_DATA(c), sizeof stamped);
    timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    const int64_t wait_ns = (static_cast<int64_t>(now.tv_sec) - stamped.tv_sec) * 1'000'000'000 +
                            (static_cast<int64_t>(now.tv_nsec) - stamped.tv_nsec);
    last_wait_us_ = std::clamp<int64_t>(wait_ns / 1000, 0, 10'000'000);
  }
  return static_cast<size_t>(received);
}
#else
size_t UdpTransport::read_one_timestamped(std::span<std::byte> buffer, Endpoint& from,
                                          bool& retry) {
  return read_one(buffer, from, retry);  // open() never turns timestamps on here
}
#endif

void UdpTransport::wait_readable(std::function<void(std::error_code)> handler) {
  socket_.async_wait(asio::ip::udp::socket::wait_read, std::move(handler));
}

}  // namespace posecast::net
