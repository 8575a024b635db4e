#include "posecast/net/network_simulator.h"

#include <algorithm>
#include <cstring>

namespace posecast::net {
namespace {

// Heap order: the entry with the earliest (deliver_at, order) on top.
bool later(const auto& a, const auto& b) {
  return a.deliver_at != b.deliver_at ? a.deliver_at > b.deliver_at : a.order > b.order;
}

bool chance(double percent, double draw01) { return percent > 0 && draw01 * 100.0 < percent; }

}  // namespace

NetworkSimulator::NetworkSimulator(DatagramChannel& inner, const SimulatorConfig& config)
    : inner_(inner), config_(config), rng_state_(config.seed) {
  outbound_.entries.reserve(config_.max_queued);
  inbound_.entries.reserve(config_.max_queued);
  scratch_.resize(kReceiveBufferBytes);
}

void NetworkSimulator::set_conditions(const LinkConditions& outbound, const LinkConditions& inbound) {
  config_.outbound = outbound;
  config_.inbound = inbound;
}

// splitmix64: tiny, full-period, and identical on every platform.
uint64_t NetworkSimulator::next_random() {
  uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double NetworkSimulator::uniform01() {
  return static_cast<double>(next_random() >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

int64_t NetworkSimulator::uniform_between(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(next_random() % span);
}

uint32_t NetworkSimulator::acquire_slot(std::span<const std::byte> payload) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(pool_.size());
    pool_.emplace_back();
    pool_.back().reserve(kReceiveBufferBytes);
  }
  pool_[slot].assign(payload.begin(), payload.end());
  return slot;
}

void NetworkSimulator::push(Queue& queue, MicrosTime deliver_at, std::span<const std::byte> payload,
                            const Endpoint& peer) {
  if (queue.entries.size() >= config_.max_queued) {
    ++sim_counters_.dropped_queue_full;
    return;
  }
  Entry entry;
  entry.deliver_at = deliver_at;
  entry.order = next_order_++;
  entry.peer = peer;
  entry.size = static_cast<uint32_t>(payload.size());
  entry.slot = acquire_slot(payload);
  queue.entries.push_back(entry);
  std::push_heap(queue.entries.begin(), queue.entries.end(),
                 [](const Entry& a, const Entry& b) { return later(a, b); });
  ++sim_counters_.queued;
}

// Every random draw happens in a fixed order per datagram (loss, bandwidth has none, jitter,
// reorder, duplicate, duplicate jitter), whatever the outcome, so one datagram's fate never
// shifts the draws of the next one differently across runs.
void NetworkSimulator::enqueue(Queue& queue, const LinkConditions& link,
                               std::span<const std::byte> payload, const Endpoint& peer) {
  const double loss_draw = uniform01();
  const int64_t jitter = uniform_between(-link.jitter_us, link.jitter_us);
  const double reorder_draw = uniform01();
  const double duplicate_draw = uniform01();
  const int64_t duplicate_jitter = uniform_between(-link.jitter_us, link.jitter_us);

  // The link serialises datagrams: each occupies it for (size + headers) * 8 / rate.
  MicrosTime leaves_link = now_;
  if (link.bandwidth_kbit > 0) {
    const MicrosTime start = std::max(now_, queue.link_free_at);
    if (start - now_ > link.max_queue_delay_us) {
      ++sim_counters_.dropped_bandwidth;
      return;
    }
    const int64_t bits = static_cast<int64_t>(payload.size() + kUdpIpv4HeaderBytes) * 8;
    const int64_t busy_us = (bits * 1000 + link.bandwidth_kbit - 1) / link.bandwidth_kbit;
    queue.link_free_at = start + busy_us;
    leaves_link = queue.link_free_at;
  }
  if (chance(link.loss_percent, loss_draw)) {
    ++sim_counters_.dropped_loss;
    return;
  }
  MicrosTime deliver_at = leaves_link + std::max<int64_t>(0, link.latency_us + jitter);
  if (chance(link.reorder_percent, reorder_draw)) {
    const int64_t hold = link.reorder_delay_us > 0
                             ? link.reorder_delay_us
                             : 2 * (link.latency_us + link.jitter_us) + 1000;
    deliver_at += hold;
    ++sim_counters_.reordered;
  }
  push(queue, deliver_at, payload, peer);
  if (chance(link.duplicate_percent, duplicate_draw)) {
    ++sim_counters_.duplicated;
    push(queue, leaves_link + std::max<int64_t>(0, link.latency_us + duplicate_jitter), payload, peer);
  }
}

NetworkSimulator::Entry NetworkSimulator::pop(Queue& queue) {
  std::pop_heap(queue.entries.begin(), queue.entries.end(),
                [](const Entry& a, const Entry& b) { return later(a, b); });
  const Entry entry = queue.entries.back();
  queue.entries.pop_back();
  ++sim_counters_.delivered;
  return entry;
}

bool NetworkSimulator::due(const Queue& queue) const {
  return !queue.entries.empty() && queue.entries.front().deliver_at <= now_;
}

bool NetworkSimulator::send_to(std::span<const std::byte> payload, const Endpoint& to) {
  if (payload.empty() || payload.size() > kReceiveBufferBytes) {
    ++counters_.send_failures;
    return false;
  }
  ++counters_.datagrams_sent;
  counters_.bytes_sent += payload.size();
  if (config_.outbound.is_perfect()) {
    // Nothing to simulate: pass straight through, but behind anything still queued so a
    // change of conditions never reorders traffic.
    if (outbound_.entries.empty()) {
      inner_.send_to(payload, to);
      return true;
    }
    push(outbound_, now_, payload, to);
    return true;
  }
  enqueue(outbound_, config_.outbound, payload, to);
  return true;
}

size_t NetworkSimulator::receive_from(std::span<std::byte> buffer, Endpoint& from) {
  // Drain the socket first: every datagram is stamped with the current time as it arrives.
  for (;;) {
    Endpoint source;
    const size_t size = inner_.receive_from(scratch_, source);
    if (size == 0) break;
    const std::span<const std::byte> payload(scratch_.data(), size);
    if (config_.inbound.is_perfect()) {
      push(inbound_, now_, payload, source);
    } else {
      enqueue(inbound_, config_.inbound, payload, source);
    }
  }
  if (!due(inbound_)) return 0;
  const Entry entry = pop(inbound_);
  const size_t size = std::min<size_t>(entry.size, buffer.size());
  std::memcpy(buffer.data(), pool_[entry.slot].data(), size);
  free_slots_.push_back(entry.slot);
  from = entry.peer;
  last_wait_us_ = std::max<int64_t>(now_ - entry.deliver_at, 0);
  ++counters_.datagrams_received;
  counters_.bytes_received += size;
  return size;
}

void NetworkSimulator::pump(MicrosTime now) {
  now_ = std::max(now_, now);
  while (due(outbound_)) {
    const Entry entry = pop(outbound_);
    if (!inner_.send_to(std::span<const std::byte>(pool_[entry.slot].data(), entry.size), entry.peer)) {
      ++counters_.send_failures;
    }
    free_slots_.push_back(entry.slot);
  }
  inner_.pump(now_);
}

}  // namespace posecast::net
