// EntityRecord's pose history ring (server/src/entity_record.h): entries stay oldest first and
// findable by tick through drops and growth, whichever slot the oldest sits in.

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>

#include "entity_record.h"

namespace posecast::server {
namespace {

// Pushes `tick` as the newest entry, its pose values tagged with the tick.
void push(EntityRecord& record, uint32_t tick) {
  HistoryEntry& slot = record.push_history();
  slot.tick = tick;
  slot.pose.values.assign(3, static_cast<int32_t>(tick));
}

// The record's history matches `expected` (oldest first): order, and pose_at for each tick.
void expect_history(const EntityRecord& record, const std::deque<uint32_t>& expected) {
  ASSERT_EQ(record.history_size, expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(record.history_entry(k).tick, expected[k]) << "entry " << k;
    const protocol::QuantizedPose* pose = record.pose_at(expected[k]);
    ASSERT_NE(pose, nullptr) << "tick " << expected[k];
    EXPECT_EQ(pose->values.at(0), static_cast<int32_t>(expected[k]));
  }
}

TEST(HistoryRing, KeepsOrderAndLookupsThroughDropsAndGrowth) {
  EntityRecord record;
  std::deque<uint32_t> expected;
  uint32_t tick = 100;
  // Grow to 4, drop 3 (the oldest now sits in slot 3), refill and grow past the capacity with
  // the ring wrapped: the growth must straighten it.
  for (int i = 0; i < 4; ++i) {
    push(record, tick);
    expected.push_back(tick++);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(record.pose_at(expected.front()), nullptr);
    record.drop_oldest_history();
    EXPECT_EQ(record.pose_at(expected.front()), nullptr) << "dropped tick still found";
    expected.pop_front();
  }
  expect_history(record, expected);
  for (int i = 0; i < 6; ++i) {
    push(record, tick);
    expected.push_back(tick++);
    expect_history(record, expected);
  }
  EXPECT_EQ(record.history.size(), 7u);  // grew by exactly what it needed
  // Steady state: one in, one out, for several laps of the ring; no growth.
  for (int i = 0; i < 30; ++i) {
    record.drop_oldest_history();
    expected.pop_front();
    push(record, tick);
    expected.push_back(tick++);
    expect_history(record, expected);
  }
  EXPECT_EQ(record.history.size(), 7u);
  while (!expected.empty()) {
    record.drop_oldest_history();
    expected.pop_front();
  }
  expect_history(record, expected);
  EXPECT_EQ(record.pose_at(tick - 1), nullptr);
}

}  // namespace
}  // namespace posecast::server
