#include "root_hold.h"

namespace posecast::server {

protocol::RootValue world_root(const sim::EntityState& state) {
  return protocol::RootValue{state.root.x, state.root.y, state.root.z, state.root.yaw};
}

protocol::QuantizedRoot hold_root_for(const EntityRecord& entity, uint32_t tick, uint32_t reference_ticks,
                                      const protocol::RootValue& exact,
                                      const protocol::QuantizedRoot& exact_codes) {
  // The newest entry older than `tick` (the history holds only sent ticks, oldest first).
  std::size_t k = entity.history_size;
  while (k > 0 && entity.history_entry(k - 1).tick >= tick) --k;
  if (k == 0) return protocol::hold_root(exact_codes, protocol::RootReference{}, protocol::QuantizedRoot{});
  // The newest entry a send interval old, where there is one.
  std::size_t r = k;
  while (r > 0 && tick - entity.history_entry(r - 1).tick < reference_ticks) --r;
  const HistoryEntry& baseline = entity.history_entry(r > 0 ? r - 1 : k - 1);
  // The velocity over kRootVelocitySpan ticks or more where the history reaches that far.
  std::size_t span_entry = k - 1;
  while (span_entry > 0 && tick - entity.history_entry(span_entry).tick < protocol::kRootVelocitySpan) --span_entry;
  const HistoryEntry& anchor = entity.history_entry(span_entry);
  const protocol::QuantizedRoot velocity = protocol::measure_root_velocity(exact, anchor.exact_root, tick - anchor.tick);
  return protocol::hold_root(exact_codes, {&baseline.pose.root, tick - baseline.tick}, velocity);
}

}  // namespace posecast::server
