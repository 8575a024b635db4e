#include "root_hold.h"

namespace posecast::server {

protocol::RootValue world_root(const sim::EntityState& state) {
  (void)state;
  return protocol::RootValue{};
}

protocol::QuantizedRoot hold_root_for(const EntityRecord& entity, uint32_t tick,
                                      const protocol::RootValue& exact,
                                      const protocol::QuantizedRoot& exact_codes) {
  // The newest entry older than `tick` (the history holds only sent ticks, oldest first).
  std::size_t k = entity.history_size;
  while (k > 0 && entity.history_entry(k - 1).tick >= tick) --k;
  if (k == 0) return protocol::hold_root(exact_codes, protocol::QuantizedRoot{}, protocol::QuantizedRoot{});
  const HistoryEntry& baseline = entity.history_entry(k - 1);
  const uint32_t age = tick - baseline.tick;
  return protocol::hold_root(exact_codes, protocol::predict_root({&baseline.pose.root, age}),
                             protocol::measure_root_velocity(exact, baseline.exact_root, age));
}

}  // namespace posecast::server
