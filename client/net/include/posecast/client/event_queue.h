#pragma once
// EventQueue: a client's animation events (docs/events.md), from the server's AnimationEvents
// messages to the moment they are fired. The server numbers one client's events 1, 2, 3, ...
// and repeats the unacknowledged ones with every snapshot, so the same event may arrive many
// times, out of order, or after a loss. The queue keeps each sequence once (later copies are
// counted as duplicates), says how far every sequence has arrived (received_through(), the
// Ack's events_received), and fires each event exactly once, in sequence order, when the
// render time reaches the time of its tick. An event whose predecessor is still missing waits
// for it (the server repeats it), so the order holds even under loss.

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "posecast/protocol/messages.h"

namespace posecast::client {

// One event as the queue hands it out.
struct QueuedEvent {
  uint32_t sequence = 0;
  protocol::WireEvent event;
  int64_t time_us = 0;  // its tick's server time (SnapshotBuffer::tick_time_us)
};

class EventQueue {
 public:
  // Received sequences further than this past the last contiguous one are refused (a server
  // keeps at most 256 unacknowledged): bounds the memory a hostile sender can take.
  static constexpr uint32_t kMaxAhead = 4096;

  // Starts a session (events numbered from 1 again) at the server's tick rate (> 0).
  void start(uint32_t tick_rate_hz);
  void clear();

  // Keeps the message's new events; returns how many were new.
  std::size_t receive(const protocol::AnimationEvents& message);
  // Every sequence up to this one has arrived (0: none): the Ack's events_received.
  uint32_t received_through() const { return through_; }

  // Appends to `out`, in sequence order, each event not fired yet whose tick's time is at or
  // before `render_us` and whose predecessors have all arrived; each event is handed out once.
  void take_due(int64_t render_us, std::vector<QueuedEvent>& out);

  int64_t tick_time_us(uint32_t tick) const {
    return static_cast<int64_t>(tick) * 1'000'000 / static_cast<int64_t>(tick_rate_hz_);
  }
  std::size_t waiting() const { return waiting_.size(); }
  uint64_t received() const { return received_; }      // distinct events kept
  uint64_t duplicates() const { return duplicates_; }  // copies of events already kept
  uint64_t refused() const { return refused_; }        // too far ahead (kMaxAhead)
  uint64_t fired() const { return fired_; }

 private:
  uint32_t tick_rate_hz_ = 60;
  uint32_t through_ = 0;      // every sequence <= this has arrived
  uint32_t fired_through_ = 0;  // every sequence <= this was handed out
  std::map<uint32_t, protocol::WireEvent> waiting_;  // arrived, not handed out yet
  uint64_t received_ = 0, duplicates_ = 0, refused_ = 0, fired_ = 0;
};

}  // namespace posecast::client
