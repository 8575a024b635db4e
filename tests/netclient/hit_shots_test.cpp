// HitShots (client/net hit_shots.h): sequences per connection, the bounded answer queue, and
// answers that were never asked for. The same over real UDP: netclient_hits_test.cpp.

#include <gtest/gtest.h>

#include <vector>

#include "posecast/client/hit_shots.h"

namespace posecast::client {
namespace {

protocol::HitResult answer(uint32_t sequence, protocol::HitOutcome outcome) {
  protocol::HitResult r;
  r.sequence = sequence;
  r.outcome = outcome;
  return r;
}

TEST(HitShots, FullQueueDropsTheOldestAndCountsIt) {
  HitShots shots;
  const uint32_t n = HitShots::kMaxWaiting + 6;
  for (uint32_t i = 1; i <= n; ++i) ASSERT_EQ(shots.next_sequence(), i);
  for (uint32_t i = 1; i <= n; ++i) {
    EXPECT_TRUE(shots.receive(answer(i, i % 3 == 0 ? protocol::HitOutcome::kHit : protocol::HitOutcome::kMiss)));
  }
  EXPECT_EQ(shots.waiting(), HitShots::kMaxWaiting);
  std::vector<protocol::HitResult> out;
  shots.take(out);
  ASSERT_EQ(out.size(), HitShots::kMaxWaiting);
  EXPECT_EQ(out.front().sequence, 7u);  // 1..6 pushed out
  EXPECT_EQ(out.back().sequence, n);
  EXPECT_EQ(shots.waiting(), 0u);
  const HitShotStats& s = shots.stats();
  EXPECT_EQ(s.hit_queries_fired, n);
  EXPECT_EQ(s.hit_answers_hit, n / 3);
  EXPECT_EQ(s.hit_answers_miss, n - n / 3);
  EXPECT_EQ(s.hit_answers_dropped, 6u);
  EXPECT_EQ(s.hit_answers_unexpected, 0u);
}

TEST(HitShots, RefusesAnswersNeverAskedForOrRepeated) {
  HitShots shots;
  EXPECT_FALSE(shots.receive(answer(1, protocol::HitOutcome::kHit)));  // nothing fired
  ASSERT_EQ(shots.next_sequence(), 1u);
  ASSERT_EQ(shots.next_sequence(), 2u);
  EXPECT_FALSE(shots.receive(answer(0, protocol::HitOutcome::kMiss)));
  EXPECT_FALSE(shots.receive(answer(3, protocol::HitOutcome::kMiss)));  // not fired yet
  EXPECT_TRUE(shots.receive(answer(2, protocol::HitOutcome::kRefused)));
  EXPECT_FALSE(shots.receive(answer(2, protocol::HitOutcome::kRefused)));  // duplicated datagram
  EXPECT_TRUE(shots.receive(answer(1, protocol::HitOutcome::kMiss)));      // reordered: still kept
  EXPECT_EQ(shots.stats().hit_answers_unexpected, 4u);
  EXPECT_EQ(shots.stats().hit_answers_refused, 1u);
  EXPECT_EQ(shots.stats().hit_answers_miss, 1u);
  EXPECT_EQ(shots.waiting(), 2u);

  // Far behind the newest shot: outside the window of remembered answers.
  for (uint32_t i = 0; i < 300; ++i) shots.next_sequence();
  EXPECT_FALSE(shots.receive(answer(10, protocol::HitOutcome::kMiss)));
  EXPECT_TRUE(shots.receive(answer(302, protocol::HitOutcome::kMiss)));

  // A new connection numbers from 1 again and forgets what waited.
  shots.clear();
  EXPECT_EQ(shots.waiting(), 0u);
  EXPECT_FALSE(shots.receive(answer(1, protocol::HitOutcome::kMiss)));
  EXPECT_EQ(shots.next_sequence(), 1u);
  EXPECT_TRUE(shots.receive(answer(1, protocol::HitOutcome::kMiss)));
}

}  // namespace
}  // namespace posecast::client
