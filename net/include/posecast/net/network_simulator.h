#pragma once
// NetworkSimulator: a deterministic impaired link in front of a DatagramChannel (usually a
// UdpTransport). It adds latency, jitter, loss, duplication, reordering and a bandwidth limit
// to real datagrams, in both directions independently:
//   outbound: send_to() queues the datagram with a delivery time; pump(now) hands the due ones
//             to the inner channel (the real socket), in delivery-time order.
//   inbound:  receive_from() drains the inner channel into a second queue (each datagram
//             impaired as it arrives at the last pumped time) and returns the due ones.
// Time is only what pump(now) says; randomness comes from one seeded generator whose draws are
// made in call order, so the same calls with the same times give the same outcome on every
// platform (no std:: distributions, whose results are implementation-defined).
// Not thread-safe: one owner thread, like the channel it wraps.

#include <cstdint>
#include <vector>

#include "posecast/net/datagram_channel.h"

namespace posecast::net {

// Impairments of one direction. Percentages are 0..100; times in microseconds.
struct LinkConditions {
  int64_t latency_us = 0;         // fixed one-way delay
  int64_t jitter_us = 0;          // + uniform in [-jitter, +jitter], clamped at 0 total delay
  double loss_percent = 0;        // dropped outright
  double duplicate_percent = 0;   // delivered twice; the copy gets its own delay
  double reorder_percent = 0;     // held back by an extra reorder_delay_us (arrives after later ones)
  int64_t reorder_delay_us = 0;   // 0 = use 2 * (latency + jitter) + 1 ms
  uint32_t bandwidth_kbit = 0;    // link rate including 28 header bytes per datagram; 0 = unlimited
  int64_t max_queue_delay_us = 1'000'000;  // a datagram that would wait longer for the link is dropped

  bool is_perfect() const {
    return latency_us == 0 && jitter_us == 0 && loss_percent == 0 && duplicate_percent == 0 &&
           reorder_percent == 0 && bandwidth_kbit == 0;
  }
};

struct SimulatorConfig {
  uint64_t seed = 1;
  LinkConditions outbound;  // what this side sends
  LinkConditions inbound;   // what this side receives
  size_t max_queued = 4096; // per direction; beyond it datagrams are dropped (counted)
};

struct SimulatorCounters {
  uint64_t queued = 0;            // datagrams accepted into either queue (copies included)
  uint64_t delivered = 0;         // datagrams that left either queue
  uint64_t dropped_loss = 0;
  uint64_t dropped_bandwidth = 0; // link backlog exceeded max_queue_delay_us
  uint64_t dropped_queue_full = 0;
  uint64_t duplicated = 0;
  uint64_t reordered = 0;
};

class NetworkSimulator final : public DatagramChannel {
 public:
  // `inner` must outlive the simulator. Reserves both queues once (no allocation afterwards
  // except when a datagram is larger than any seen before).
  NetworkSimulator(DatagramChannel& inner, const SimulatorConfig& config);

  // Changes the conditions from now on; datagrams already queued keep their delivery times.
  void set_conditions(const LinkConditions& outbound, const LinkConditions& inbound);
  const SimulatorConfig& config() const { return config_; }

  // Queues `payload` for delivery to `to` at (last pumped time + delay). Returns false only
  // when the payload is empty or larger than kReceiveBufferBytes (nothing real sends that).
  // A datagram lost by the simulator still returns true: the sender cannot know.
  bool send_to(std::span<const std::byte> payload, const Endpoint& to) override;

  // Drains the inner channel into the inbound queue, then returns the next due datagram.
  size_t receive_from(std::span<std::byte> buffer, Endpoint& from) override;
  // The returned datagram's wait in the inbound queue after it was due (pumped time - its
  // delivery time). Time it spent in the inner channel before the drain is not counted: the
  // simulator's clock is the caller's, the inner socket's timestamps are real time.
  int64_t last_receive_wait_us() const override { return last_wait_us_; }

  // Sets the simulator's time and sends every due outbound datagram to the inner channel.
  // `now` earlier than the previous call is treated as the previous time.
  void pump(MicrosTime now) override;

  const ChannelCounters& counters() const override { return counters_; }
  const SimulatorCounters& simulator_counters() const { return sim_counters_; }
  MicrosTime now() const { return now_; }
  size_t outbound_queued() const { return outbound_.entries.size(); }
  size_t inbound_queued() const { return inbound_.entries.size(); }

 private:
  struct Entry {
    MicrosTime deliver_at = 0;
    uint64_t order = 0;  // tie-break: equal times leave in submission order
    Endpoint peer;       // destination (outbound) or source (inbound)
    uint32_t size = 0;
    uint32_t slot = 0;   // index into the payload pool
  };
  struct Queue {
    std::vector<Entry> entries;  // a min-heap on (deliver_at, order)
    MicrosTime link_free_at = 0; // bandwidth limit: when the link finishes the previous datagram
  };

  void enqueue(Queue& queue, const LinkConditions& link, std::span<const std::byte> payload,
               const Endpoint& peer);
  void push(Queue& queue, MicrosTime deliver_at, std::span<const std::byte> payload,
            const Endpoint& peer);
  Entry pop(Queue& queue);
  bool due(const Queue& queue) const;
  uint32_t acquire_slot(std::span<const std::byte> payload);
  uint64_t next_random();
  double uniform01();
  int64_t uniform_between(int64_t lo, int64_t hi);

  DatagramChannel& inner_;
  SimulatorConfig config_;
  uint64_t rng_state_;
  MicrosTime now_ = 0;
  int64_t last_wait_us_ = 0;
  uint64_t next_order_ = 0;
  Queue outbound_;
  Queue inbound_;
  std::vector<std::vector<std::byte>> pool_;  // payload storage, recycled through free_slots_
  std::vector<uint32_t> free_slots_;
  std::vector<std::byte> scratch_;           // inbound drain buffer
  ChannelCounters counters_;
  SimulatorCounters sim_counters_;
};

}  // namespace posecast::net
