#include "posecast/client/event_queue.h"

#include <algorithm>

namespace posecast::client {

void EventQueue::start(uint32_t tick_rate_hz) {
  clear();
  tick_rate_hz_ = std::max<uint32_t>(1, tick_rate_hz);
}

void EventQueue::clear() {
  through_ = 0;
  fired_through_ = 0;
  waiting_.clear();
}

std::size_t EventQueue::receive(const protocol::AnimationEvents& message) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < message.events.size(); ++i) {
    const uint64_t sequence = uint64_t{message.first_sequence} + i;
    if (sequence <= through_ || waiting_.count(static_cast<uint32_t>(sequence)) != 0 ||
        sequence <= fired_through_) {
      ++duplicates_;
      continue;
    }
    if (sequence > uint64_t{through_} + kMaxAhead) {
      ++refused_;
      continue;
    }
    waiting_.emplace(static_cast<uint32_t>(sequence), message.events[i]);
    ++received_;
    ++kept;
  }
  // Advance past every sequence now held without a gap.
  for (auto it = waiting_.upper_bound(through_); it != waiting_.end() && it->first == through_ + 1; ++it) ++through_;
  return kept;
}

void EventQueue::take_due(int64_t render_us, std::vector<QueuedEvent>& out) {
  while (!waiting_.empty()) {
    const auto it = waiting_.begin();
    if (it->first != fired_through_ + 1) return;  // a predecessor is still missing
    const int64_t time = tick_time_us(it->second.tick);
    if (time > render_us) return;
    out.push_back(QueuedEvent{it->first, it->second, time});
    fired_through_ = it->first;
    ++fired_;
    waiting_.erase(it);
  }
}

}  // namespace posecast::client
