#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <thread>

#include "posecast/net/udp_transport.h"

namespace posecast::net {
namespace {

Endpoint loopback_any_port() { return Endpoint(asio::ip::make_address("127.0.0.1"), 0); }

// Polls `transport` for up to one second; real sockets on loopback deliver in microseconds.
size_t receive_within_a_second(DatagramChannel& transport, std::span<std::byte> buffer, Endpoint& from) {
  for (int i = 0; i < 1000; ++i) {
    if (const size_t n = transport.receive_from(buffer, from)) return n;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

TEST(UdpTransport, BindsAnEphemeralPortAndRoundTripsADatagram) {
  asio::io_context io;
  UdpTransport a(io), b(io);
  ASSERT_TRUE(a.open(loopback_any_port()).ok());
  ASSERT_TRUE(b.open(loopback_any_port()).ok());
  EXPECT_NE(a.local_endpoint().port(), 0);

  const std::array<std::byte, 3> message{std::byte{1}, std::byte{2}, std::byte{3}};
  ASSERT_TRUE(a.send_to(message, b.local_endpoint()));
  std::array<std::byte, kReceiveBufferBytes> buffer{};
  Endpoint from;
  ASSERT_EQ(receive_within_a_second(b, buffer, from), 3u);
  EXPECT_EQ(buffer[2], std::byte{3});
  EXPECT_EQ(from, a.local_endpoint());
  EXPECT_EQ(a.counters().datagrams_sent, 1u);
  EXPECT_EQ(a.counters().bytes_sent, 3u);
  EXPECT_EQ(b.counters().datagrams_received, 1u);
}

TEST(UdpTransport, ReceiveReturnsZeroWithoutBlockingWhenNothingWaits) {
  asio::io_context io;
  UdpTransport a(io);
  ASSERT_TRUE(a.open(loopback_any_port()).ok());
  std::array<std::byte, 64> buffer{};
  Endpoint from;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(a.receive_from(buffer, from), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST(UdpTransport, OversizedDatagramIsVisibleAsLongerThanTheLimit) {
  asio::io_context io;
  UdpTransport a(io), b(io);
  ASSERT_TRUE(a.open(loopback_any_port()).ok());
  ASSERT_TRUE(b.open(loopback_any_port()).ok());
  std::vector<std::byte> big(kMaxDatagramBytes + 100, std::byte{7});
  ASSERT_TRUE(a.send_to(big, b.local_endpoint()));
  std::array<std::byte, kReceiveBufferBytes> buffer{};
  Endpoint from;
  EXPECT_GT(receive_within_a_second(b, buffer, from), kMaxDatagramBytes);
}

TEST(UdpTransport, ReportsHowLongADatagramWaitedInTheSocket) {
  asio::io_context io;
  UdpTransport a(io), b(io);
  ASSERT_TRUE(a.open(loopback_any_port()).ok());
  ASSERT_TRUE(b.open(loopback_any_port()).ok());
#if !defined(__linux__)
  GTEST_SKIP() << "kernel receive timestamps are read on Linux only";
#endif
  ASSERT_TRUE(b.has_receive_timestamps());
  EXPECT_EQ(b.last_receive_wait_us(), 0);  // nothing received yet
  std::array<std::byte, kReceiveBufferBytes> buffer{};
  Endpoint from;

  // The first socket that asks makes the kernel stamp arriving packets, but it switches that
  // on asynchronously (a deferred static key); until then a datagram is stamped when it is
  // read (a wait of about 0). Probe until a datagram left for 20 ms shows its wait.
  const std::array<std::byte, 1> probe{std::byte{9}};
  bool stamping = false;
  for (int attempt = 0; attempt < 50 && !stamping; ++attempt) {
    ASSERT_TRUE(a.send_to(probe, b.local_endpoint()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(receive_within_a_second(b, buffer, from), 1u);
    stamping = b.last_receive_wait_us() >= 15'000;
  }
  ASSERT_TRUE(stamping) << "no datagram in a second of probes was stamped on arrival";

  // One datagram left unread for 100 ms, then one read as soon as it is there.
  const std::array<std::byte, 1> first{std::byte{1}};
  const std::array<std::byte, 1> second{std::byte{2}};
  ASSERT_TRUE(a.send_to(first, b.local_endpoint()));
  const auto sent = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(receive_within_a_second(b, buffer, from), 1u);
  const auto read = std::chrono::steady_clock::now();
  const int64_t waited = b.last_receive_wait_us();
  EXPECT_GE(waited, 95'000);  // the kernel stamped it on arrival, right after the send
  EXPECT_LE(waited, std::chrono::duration_cast<std::chrono::microseconds>(read - sent).count() + 1'000);
  EXPECT_EQ(from, a.local_endpoint());

  ASSERT_TRUE(a.send_to(second, b.local_endpoint()));
  ASSERT_EQ(receive_within_a_second(b, buffer, from), 1u);
  EXPECT_EQ(buffer[0], std::byte{2});
  EXPECT_GE(b.last_receive_wait_us(), 0);
  EXPECT_LT(b.last_receive_wait_us(), waited);  // read within about a millisecond of arriving
}

TEST(UdpTransport, OpenFailsWithTheAddressWhenThePortIsTaken) {
  asio::io_context io;
  UdpTransport a(io), b(io);
  ASSERT_TRUE(a.open(loopback_any_port()).ok());
  const Status second = b.open(a.local_endpoint());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find(to_string(a.local_endpoint())), std::string::npos);
  EXPECT_FALSE(b.is_open());
  std::array<std::byte, 1> one{};
  EXPECT_FALSE(b.send_to(one, a.local_endpoint()));
  EXPECT_EQ(b.counters().send_failures, 1u);
}

}  // namespace
}  // namespace posecast::net
