#pragma once
// HitShots: a client's side of lag-compensated hit queries (docs/hit-queries.md). It numbers
// the HitQuery messages a client fires (1, 2, 3, ... per connection) and keeps the server's
// HitResult answers in a bounded queue until the game takes them. A query is sent once and
// never resent (a shot is a moment; a late answer is worth little): a query or answer lost on
// the way simply has no answer, which the game sees as a sequence that never comes back.

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "posecast/protocol/messages.h"

namespace posecast::client {

// Counters since construction (they survive reconnects, like the other client counters).
struct HitShotStats {
  uint64_t hit_queries_fired = 0;       // HitQuery messages sent (a failed send: send_failures too)
  uint64_t hit_answers_hit = 0;         // HitResults kept, by outcome
  uint64_t hit_answers_miss = 0;
  uint64_t hit_answers_refused = 0;
  uint64_t hit_answers_dropped = 0;     // kept, then pushed out of a full queue (oldest first)
  uint64_t hit_answers_unexpected = 0;  // a sequence never fired on this connection, or repeated
};

class HitShots {
 public:
  // Answers waiting for take() beyond this many push out the oldest.
  static constexpr std::size_t kMaxWaiting = 64;

  // A new connection: sequences start at 1 again and waiting answers are discarded.
  void clear();

  // The sequence for the next query (counted as fired).
  uint32_t next_sequence();

  // Keeps a HitResult; false (counted as unexpected) when its sequence was not fired on this
  // connection, was answered already, or is more than kWindow shots old.
  bool receive(const protocol::HitResult& result);

  // Moves every waiting answer, in arrival order, to the end of `out`.
  void take(std::vector<protocol::HitResult>& out);

  std::size_t waiting() const { return waiting_.size(); }
  const HitShotStats& stats() const { return stats_; }

 private:
  uint32_t last_fired_ = 0;
  // Which of the last kWindow sequences were answered (bit: sequence % kWindow): a datagram
  // duplicated on the way must not read as a second answer. An answer more than kWindow shots
  // old (over 12 s at the server's default 20 shots/s) is refused as unexpected.
  static constexpr uint32_t kWindow = 256;
  std::bitset<kWindow> answered_;
  std::deque<protocol::HitResult> waiting_;
  HitShotStats stats_;
};

}  // namespace posecast::client
