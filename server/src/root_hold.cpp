#include "root_hold.h"

#include <cstdlib>

namespace posecast::server {

protocol::RootValue world_root(const sim::EntityState& state) {
  return protocol::RootValue{state.root.x, state.root.y, state.root.z, state.root.yaw};
}

protocol::QuantizedRoot hold_root_for(const EntityRecord& entity, uint32_t tick,
                                      const protocol::RootValue& exact,
                                      const protocol::QuantizedRoot& exact_codes) {
  // The newest entry older than `tick` (the history holds only sent ticks, oldest first).
  std::size_t k = entity.history_size;
  while (k > 0 && entity.history_entry(k - 1).tick >= tick) --k;
  if (k == 0) return protocol::hold_root(exact_codes, protocol::QuantizedRoot{}, protocol::QuantizedRoot{});
  const HistoryEntry& baseline = entity.history_entry(k - 1);
  // The velocity over kRootVelocitySpan ticks or more where the history reaches that far.
  std::size_t span_entry = k - 1;
  while (span_entry > 0 && tick - entity.history_entry(span_entry).tick < protocol::kRootVelocitySpan) --span_entry;
  const HistoryEntry& anchor = entity.history_entry(span_entry);
  const protocol::QuantizedRoot predicted = protocol::predict_root({&baseline.pose.root, tick - baseline.tick});
  protocol::QuantizedRoot velocity = protocol::measure_root_velocity(exact, anchor.exact_root, tick - anchor.tick);
  // A component whose prediction missed by far more than the tolerance changed its motion (a
  // fade, a turn, a new speed): its velocity over the long span would still hold the old
  // motion, so it takes the velocity since the baseline instead.
  const protocol::QuantizedRoot recent = protocol::measure_root_velocity(exact, baseline.exact_root, tick - baseline.tick);
  const int64_t far = 8 * protocol::kRootTolerance;
  const auto missed = [&](int32_t e, int32_t p) { return std::llabs(int64_t{e} - int64_t{p}) > far; };
  if (missed(exact_codes.x, predicted.x)) velocity.vx = recent.vx;
  if (missed(exact_codes.y, predicted.y)) velocity.vy = recent.vy;
  if (missed(exact_codes.z, predicted.z)) velocity.vz = recent.vz;
  // Yaw wraps: its miss is taken the shorter way round.
  const int32_t yaw_miss = static_cast<int16_t>(static_cast<uint16_t>(exact_codes.yaw - predicted.yaw));
  if (std::abs(yaw_miss) > far) velocity.vyaw = recent.vyaw;
  return protocol::hold_root(exact_codes, predicted, velocity);
}

}  // namespace posecast::server
