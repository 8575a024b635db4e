#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "posecast/net/network_simulator.h"

namespace posecast::net {
namespace {

// An in-memory channel standing in for the socket: records what the simulator hands it and
// serves queued datagrams, so these tests see exactly the simulator's decisions.
class RecordingChannel final : public DatagramChannel {
 public:
  struct Sent {
    std::vector<std::byte> payload;
    Endpoint to;
  };
  bool send_to(std::span<const std::byte> payload, const Endpoint& to) override {
    sent.push_back({{payload.begin(), payload.end()}, to});
    ++counters_.datagrams_sent;
    return true;
  }
  size_t receive_from(std::span<std::byte> buffer, Endpoint& from) override {
    if (incoming.empty()) return 0;
    auto d = incoming.front();
    incoming.pop_front();
    std::copy(d.payload.begin(), d.payload.end(), buffer.begin());
    from = d.to;
    return d.payload.size();
  }
  void pump(MicrosTime) override {}
  const ChannelCounters& counters() const override { return counters_; }

  std::vector<Sent> sent;
  std::deque<Sent> incoming;

 private:
  ChannelCounters counters_;
};

std::vector<std::byte> numbered(uint32_t n, size_t size = 8) {
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < 4; ++i) bytes[i] = std::byte((n >> (8 * i)) & 0xFF);
  return bytes;
}
uint32_t number_of(const std::vector<std::byte>& bytes) {
  uint32_t n = 0;
  for (size_t i = 0; i < 4; ++i) n |= uint32_t(bytes[i]) << (8 * i);
  return n;
}

const Endpoint kPeer(asio::ip::make_address("127.0.0.1"), 9);

// Sends `count` numbered datagrams one per millisecond and pumps to the end; returns the
// numbers in arrival order with their arrival times.
std::vector<std::pair<uint32_t, MicrosTime>> run_outbound(const LinkConditions& link, uint64_t seed,
                                                          uint32_t count, size_t size = 8) {
  RecordingChannel inner;
  SimulatorConfig config;
  config.seed = seed;
  config.outbound = link;
  NetworkSimulator sim(inner, config);
  std::vector<std::pair<uint32_t, MicrosTime>> arrivals;
  MicrosTime now = 0;
  uint32_t next = 0;
  for (; now < MicrosTime(count) * 1000 + 5'000'000; now += 100) {
    sim.pump(now);
    if (now % 1000 == 0 && next < count) sim.send_to(numbered(next++, size), kPeer);
    // After the send: a datagram the simulator passes straight through arrives at its send time.
    for (size_t i = arrivals.size(); i < inner.sent.size(); ++i) arrivals.push_back({number_of(inner.sent[i].payload), now});
  }
  return arrivals;
}

TEST(NetworkSimulator, PerfectLinkPassesEverythingThroughInOrderImmediately) {
  const auto arrivals = run_outbound(LinkConditions{}, 1, 50);
  ASSERT_EQ(arrivals.size(), 50u);
  for (uint32_t i = 0; i < 50; ++i) {
    EXPECT_EQ(arrivals[i].first, i);
    EXPECT_EQ(arrivals[i].second, MicrosTime(i) * 1000);  // sent one per millisecond, no delay
  }
}

TEST(NetworkSimulator, LatencyDelaysEveryDatagramByExactlyThatMuch) {
  LinkConditions link;
  link.latency_us = 50'000;
  const auto arrivals = run_outbound(link, 1, 20);
  ASSERT_EQ(arrivals.size(), 20u);
  for (uint32_t i = 0; i < 20; ++i) {
    EXPECT_EQ(arrivals[i].first, i);
    EXPECT_EQ(arrivals[i].second, MicrosTime(i) * 1000 + 50'000);
  }
}

TEST(NetworkSimulator, SameSeedGivesTheSameOutcomeAndAnotherSeedDiffers) {
  LinkConditions link;
  link.latency_us = 30'000;
  link.jitter_us = 20'000;
  link.loss_percent = 10;
  link.duplicate_percent = 5;
  link.reorder_percent = 5;
  const auto a = run_outbound(link, 42, 500);
  const auto b = run_outbound(link, 42, 500);
  const auto c = run_outbound(link, 43, 500);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(NetworkSimulator, LossRateIsNearTheConfiguredPercentage) {
  LinkConditions link;
  link.loss_percent = 10;
  const auto arrivals = run_outbound(link, 7, 5000);
  // Binomial(5000, 0.9): mean 4500, sd about 21; 6 sd either side.
  EXPECT_GT(arrivals.size(), 4370u);
  EXPECT_LT(arrivals.size(), 4630u);
}

TEST(NetworkSimulator, JitterStaysInsideItsBoundsAndReordersDatagrams) {
  LinkConditions link;
  link.latency_us = 50'000;
  link.jitter_us = 20'000;
  const auto arrivals = run_outbound(link, 3, 1000);
  ASSERT_EQ(arrivals.size(), 1000u);
  size_t out_of_order = 0;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const MicrosTime sent_at = MicrosTime(arrivals[i].first) * 1000;
    const MicrosTime delay = arrivals[i].second - sent_at;
    EXPECT_GE(delay, 30'000);
    EXPECT_LE(delay, 70'000 + 100);  // + one pump step
    if (i > 0 && arrivals[i].first < arrivals[i - 1].first) ++out_of_order;
  }
  EXPECT_GT(out_of_order, 50u);
}

TEST(NetworkSimulator, DuplicationDeliversSomeDatagramsTwice) {
  LinkConditions link;
  link.duplicate_percent = 20;
  const auto arrivals = run_outbound(link, 5, 1000);
  EXPECT_GT(arrivals.size(), 1100u);
  EXPECT_LT(arrivals.size(), 1300u);
}

TEST(NetworkSimulator, ReorderPercentHoldsDatagramsBehindLaterOnes) {
  LinkConditions link;
  link.latency_us = 10'000;
  link.reorder_percent = 10;
  const auto arrivals = run_outbound(link, 9, 1000);
  ASSERT_EQ(arrivals.size(), 1000u);
  size_t out_of_order = 0;
  for (size_t i = 1; i < arrivals.size(); ++i) out_of_order += arrivals[i].first < arrivals[i - 1].first;
  EXPECT_GT(out_of_order, 50u);
  EXPECT_LT(out_of_order, 200u);
}

TEST(NetworkSimulator, BandwidthLimitCapsTheDeliveredRateIncludingHeaders) {
  LinkConditions link;
  link.bandwidth_kbit = 800;          // 100 bytes per millisecond
  link.max_queue_delay_us = 100'000;  // then tail drop
  // Offer 1000 datagrams of 172 bytes (200 with headers), one per ms: twice the link rate.
  const auto arrivals = run_outbound(link, 1, 1000, 172);
  ASSERT_FALSE(arrivals.empty());
  // Each datagram occupies the link 2 ms, so deliveries are >= 2 ms apart.
  for (size_t i = 1; i < arrivals.size(); ++i) EXPECT_GE(arrivals[i].second - arrivals[i - 1].second, 2000);
  EXPECT_LT(arrivals.size(), 560u);
  EXPECT_GT(arrivals.size(), 450u);
}

TEST(NetworkSimulator, InboundConditionsDelayReceivedDatagramsUntilPumpedTimeReachesThem) {
  RecordingChannel inner;
  SimulatorConfig config;
  config.inbound.latency_us = 20'000;
  NetworkSimulator sim(inner, config);
  inner.incoming.push_back({numbered(1), kPeer});
  std::vector<std::byte> buffer(kReceiveBufferBytes);
  Endpoint from;
  sim.pump(1000);
  EXPECT_EQ(sim.receive_from(buffer, from), 0u);  // arrives at 1000, due at 21000
  sim.pump(20'999);
  EXPECT_EQ(sim.receive_from(buffer, from), 0u);
  sim.pump(21'000);
  ASSERT_EQ(sim.receive_from(buffer, from), 8u);
  EXPECT_EQ(from, kPeer);
  EXPECT_EQ(sim.counters().datagrams_received, 1u);
  EXPECT_EQ(sim.last_receive_wait_us(), 0);  // read the moment it was due

  // The next one is due at 41'000 but the caller looks only at 76'000: it reports 35 ms of
  // waiting (what a client subtracts to date the arrival).
  inner.incoming.push_back({numbered(2), kPeer});
  EXPECT_EQ(sim.receive_from(buffer, from), 0u);
  sim.pump(76'000);
  ASSERT_EQ(sim.receive_from(buffer, from), 8u);
  EXPECT_EQ(sim.last_receive_wait_us(), 35'000);
}

TEST(NetworkSimulator, RejectsEmptyAndOversizedPayloads) {
  RecordingChannel inner;
  NetworkSimulator sim(inner, SimulatorConfig{});
  EXPECT_FALSE(sim.send_to({}, kPeer));
  std::vector<std::byte> huge(kReceiveBufferBytes + 1);
  EXPECT_FALSE(sim.send_to(huge, kPeer));
  EXPECT_EQ(sim.counters().send_failures, 2u);
}

}  // namespace
}  // namespace posecast::net
