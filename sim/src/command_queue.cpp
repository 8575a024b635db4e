#include "posecast/sim/command_queue.h"

#include <algorithm>
#include <tuple>

namespace posecast::sim {

bool command_order(const QueuedCommand& a, const QueuedCommand& b) {
  return std::tie(a.command.tick, a.command.entity, a.submitter, a.sequence) <
         std::tie(b.command.tick, b.command.entity, b.submitter, b.sequence);
}

void CommandQueue::submit(uint32_t submitter, Command command) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t sequence = next_sequence_[submitter]++;
  pending_.push_back(QueuedCommand{std::move(command), submitter, sequence});
}

void CommandQueue::take_due(uint64_t tick, std::vector<QueuedCommand>& out) {
  const std::size_t first_new = out.size();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // In-place compaction: due commands move to `out`, the rest keep their queue order.
    // Allocates only when `out` must grow.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (pending_[i].command.tick <= tick) {
        out.push_back(std::move(pending_[i]));
      } else {
        if (kept != i) pending_[kept] = std::move(pending_[i]);
        ++kept;
      }
    }
    pending_.resize(kept);
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first_new), out.end(), command_order);
}

std::size_t CommandQueue::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

void CommandQueue::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.clear();
}

}  // namespace posecast::sim
