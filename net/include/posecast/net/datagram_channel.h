#pragma once
// DatagramChannel: what the server and the client need from the network -- send a datagram,
// receive one if any is waiting, never block. UdpTransport is the real socket; NetworkSimulator
// wraps any channel and impairs its traffic. Code written against this interface runs the same
// with or without the simulator.

#include <cstddef>
#include <cstdint>
#include <span>

#include "posecast/net/endpoint.h"

namespace posecast::net {

// Counters every channel keeps; monotonic, never reset.
struct ChannelCounters {
  uint64_t datagrams_sent = 0;      // handed to the layer below (socket or simulator queue)
  uint64_t bytes_sent = 0;          // payload bytes of those
  uint64_t send_failures = 0;       // would-block, unreachable, too large, closed
  uint64_t datagrams_received = 0;  // returned to the caller
  uint64_t bytes_received = 0;      // payload bytes of those (after truncation)
  uint64_t receive_errors = 0;      // socket errors other than "nothing waiting"
};

class DatagramChannel {
 public:
  virtual ~DatagramChannel() = default;

  // Sends one datagram without blocking. Returns false (and counts a send failure) when the
  // datagram could not be queued: socket buffer full, channel closed, payload too large.
  virtual bool send_to(std::span<const std::byte> payload, const Endpoint& to) = 0;

  // Copies the next waiting datagram into `buffer` and its source into `from`; returns its
  // length, or 0 when nothing is waiting (or the channel is closed). A datagram longer than
  // `buffer` is truncated to buffer.size(): callers that must detect oversized datagrams pass
  // a buffer larger than the largest datagram they accept (see kReceiveBufferBytes).
  // Zero-length datagrams are skipped (they carry nothing any protocol accepts).
  virtual size_t receive_from(std::span<std::byte> buffer, Endpoint& from) = 0;

  // How long the datagram the last receive_from() returned had been waiting in the channel
  // when that call took it, in microseconds (>= 0): UdpTransport reads the kernel's receive
  // timestamp (Linux; real time), NetworkSimulator the time since the datagram was due (its
  // own, caller-given time). 0 when the channel cannot tell or nothing was received yet.
  // A caller that polls once per frame dates arrivals with it to when they happened, so a
  // stalled frame does not read as network jitter (docs/client.md, "Arrival times").
  virtual int64_t last_receive_wait_us() const { return 0; }

  // Advances channel-internal time (the simulator delivers due datagrams); `now` never goes
  // backwards. A real transport ignores it.
  virtual void pump(MicrosTime now) = 0;

  virtual const ChannelCounters& counters() const = 0;
};

// Largest datagram the project sends (docs/session.md) and the receive buffer callers should
// use so that a datagram above the limit is recognised as oversized rather than silently cut.
inline constexpr size_t kMaxDatagramBytes = 1200;
inline constexpr size_t kReceiveBufferBytes = 2048;

}  // namespace posecast::net
