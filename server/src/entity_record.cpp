#include "entity_record.h"

#include <algorithm>
#include <utility>

namespace posecast::server {

const protocol::QuantizedPose* EntityRecord::pose_at(uint32_t tick) const {
  for (std::size_t k = 0; k < history_size; ++k) {
    const HistoryEntry& entry = history_entry(k);
    if (entry.tick == tick) return &entry.pose;
  }
  return nullptr;
}

const HistoryEntry& EntityRecord::history_entry(std::size_t k) const {
  const std::size_t at = history_head + k;  // < 2 * history.size()
  return history[at < history.size() ? at : at - history.size()];
}

HistoryEntry& EntityRecord::history_entry(std::size_t k) {
  return const_cast<HistoryEntry&>(std::as_const(*this).history_entry(k));
}

void EntityRecord::drop_oldest_history() {
  history_head = history_head + 1 == history.size() ? 0 : history_head + 1;
  --history_size;
}

const protocol::QuantizedPose& EntityRecord::last_quantized() const {
  return current_in_history ? history_entry(history_size - 1).pose : current;
}

HistoryEntry& EntityRecord::push_history() {
  if (history_size == history.size()) {
    // Full ring: straighten it (oldest first) and add a slot. Only while the history grows to
    // its steady depth.
    std::rotate(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(history_head),
                history.end());
    history_head = 0;
    history.emplace_back();
  }
  return history_entry(history_size++);
}

void EntityRecord::prune_history(uint32_t oldest_needed) {
  const std::size_t keep = current_in_history ? 1 : 0;
  while (history_size > keep && history_entry(0).tick < oldest_needed) drop_oldest_history();
}

void EntityRecord::commit_sent(uint32_t tick, uint32_t oldest_needed) {
  if (sent_this_tick) {
    if (history_size == kMaxHistory) drop_oldest_history();
    // The pose moves into the history (with its recipe: the next records predict clip times
    // from it); `current` takes the recycled slot's value buffer. The values are swapped, not
    // copied: a copy writes a cold kilobyte per entity.
    HistoryEntry& slot = push_history();
    slot.tick = tick;
    slot.pose.values.swap(current.values);
    slot.pose.off_layout = current.off_layout;
    slot.pose.recipe = current.recipe;
    slot.pose.root = current.root;
    slot.exact_root = current_exact_root;
    current_in_history = true;
    sent_this_tick = false;
  }
  prune_history(oldest_needed);
  variant_count = 0;
  encoded.clear();
}

}  // namespace posecast::server
