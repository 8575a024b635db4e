// NetClient hit queries over real loopback UDP (issue #35 point 5, docs/hit-queries.md): a
// client the embedder allowed fires rays at the entities it presents, at its render time, and
// gets the answers Server::hit_query gives for the same ray and view time as that client; a
// client without the right gets refusals; a NaN ray is refused as a bad ray.

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <map>

#include "loopback_session.h"
#include "posecast/hit_geometry.h"

namespace posecast::client::testing {
namespace {

uint8_t refusal(server::HitRefusal r) { return static_cast<uint8_t>(r); }

TEST(NetClientHits, AnswersMatchTheServersQueryAtTheRenderTimeAndRefuseWithoutTheRight) {
  SessionSetup setup;
  setup.entities = 6;
  setup.server.hit_queries_per_second = 1000;  // several shots a frame, well under this
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClient& shooter = session.add_client(session.client_options(51));
  NetClient& other = session.add_client(session.client_options(52));
  EXPECT_EQ(shooter.fire_hit_query(HitRay{{0, 1, -5}, {0, 0, 1}, 10}, 0, session.now()), 0u);  // not connected
  session.run_until(500'000);
  ASSERT_TRUE(shooter.connected());
  ASSERT_TRUE(other.connected());
  session.server().allow_hit_queries(shooter.client_id(), true);
  session.run_until(1'000'000);

  // What the server answers for the same ray at the same view time as the shooter, asked on
  // the ticking thread when the shot is fired, by sequence.
  std::map<uint32_t, server::HitResult> expected;
  std::vector<protocol::HitResult> answers, refused;
  uint32_t last_sequence = 0, other_fired = 0;
  const int kShots = 120;
  int frame = 0;
  session.run_until(session.now() + 1'000'000, [&] {
    for (const protocol::HitResult& r : shooter.take_hit_results()) answers.push_back(r);
    for (const protocol::HitResult& r : other.take_hit_results()) refused.push_back(r);
    if (static_cast<int>(expected.size()) >= kShots || shooter.entities().empty()) return;
    const int64_t view = shooter.render_time_us();
    for (int k = 0; k < 2; ++k, ++frame) {
      // Across a presented entity's body at a height that walks up and down it, some rays
      // past its side (misses).
      const PresentedEntity& target = shooter.entities()[static_cast<std::size_t>(frame) % shooter.entities().size()];
      const float side = frame % 5 == 4 ? 0.9f : 0.0f;
      const glm::vec3 aim(target.root.x + side, 0.2f + 0.1f * static_cast<float>(frame % 14), target.root.z);
      const HitRay ray{aim - glm::vec3(0.0f, 0.0f, 6.0f), {0.0f, 0.0f, 1.0f}, 12.0f};
      const uint32_t sequence = shooter.fire_hit_query(ray, view, session.now());
      ASSERT_EQ(sequence, last_sequence + 1);  // 1, 2, 3, ... per client
      last_sequence = sequence;
      expected[sequence] = session.server().hit_query(ray, view, shooter.client_id());
    }
    if (other_fired < 3) {
      const HitRay ray{{0.0f, 1.0f, -6.0f}, {0.0f, 0.0f, 1.0f}, 12.0f};
      if (other.fire_hit_query(ray, other.render_time_us(), session.now()) != 0) ++other_fired;
    }
  });
  ASSERT_EQ(static_cast<int>(expected.size()), kShots);

  int hits = 0;
  ASSERT_EQ(answers.size(), expected.size());  // loopback loses nothing
  for (const protocol::HitResult& a : answers) {
    SCOPED_TRACE(a.sequence);
    const auto it = expected.find(a.sequence);
    ASSERT_NE(it, expected.end());
    const server::HitResult& e = it->second;
    ASSERT_EQ(e.refusal, server::HitRefusal::kNone);
    EXPECT_FALSE(e.clamped);
    EXPECT_EQ(a.outcome, e.hit ? protocol::HitOutcome::kHit : protocol::HitOutcome::kMiss);
    EXPECT_EQ(a.refusal, 0);
    EXPECT_EQ(a.clamped, e.clamped);
    EXPECT_EQ(a.view_us, e.view_us);
    if (!e.hit) continue;
    ++hits;
    EXPECT_EQ(a.entity_id, e.entity);
    EXPECT_EQ(a.joint, e.joint);
    EXPECT_EQ(a.distance, e.distance);  // the same evaluation; the float crosses the wire as is
  }
  std::printf("shots %d, hits %d (each answer the server's own for that ray and view time)\n", kShots, hits);
  EXPECT_GT(hits, kShots / 2);          // aimed at bodies: most meet one
  EXPECT_LT(hits, kShots);              // and the side shots miss

  ASSERT_EQ(other_fired, 3u);
  ASSERT_EQ(refused.size(), 3u);
  for (const protocol::HitResult& r : refused) {
    EXPECT_EQ(r.outcome, protocol::HitOutcome::kRefused);
    EXPECT_EQ(r.refusal, refusal(server::HitRefusal::kNoRight));
  }

  // A NaN ray from the client allowed to fire: refused as a bad ray, not a malformed datagram.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const uint32_t bad = shooter.fire_hit_query(HitRay{{0, nan, -5}, {0, 0, 1}, 10}, shooter.render_time_us(), session.now());
  ASSERT_EQ(bad, last_sequence + 1);
  session.run_until(session.now() + 100'000);
  const std::vector<protocol::HitResult> last = shooter.take_hit_results();
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].sequence, bad);
  EXPECT_EQ(last[0].outcome, protocol::HitOutcome::kRefused);
  EXPECT_EQ(last[0].refusal, refusal(server::HitRefusal::kBadRay));

  const ClientStats s = shooter.stats(session.now());
  EXPECT_EQ(s.hit_queries_fired, static_cast<uint64_t>(kShots) + 1);
  EXPECT_EQ(s.hit_answers_hit, static_cast<uint64_t>(hits));
  EXPECT_EQ(s.hit_answers_miss, static_cast<uint64_t>(kShots - hits));
  EXPECT_EQ(s.hit_answers_refused, 1u);
  EXPECT_EQ(s.hit_answers_dropped, 0u);
  EXPECT_EQ(s.hit_answers_unexpected, 0u);
  EXPECT_EQ(s.dropped_unexpected, 0u);
  const ClientStats o = other.stats(session.now());
  EXPECT_EQ(o.hit_queries_fired, 3u);
  EXPECT_EQ(o.hit_answers_refused, 3u);
  EXPECT_EQ(o.hit_answers_hit + o.hit_answers_miss, 0u);
  const server::ServerMetrics m = session.server().metrics();
  EXPECT_EQ(m.hit_refused[static_cast<std::size_t>(server::HitRefusal::kNoRight)], 3u);
  EXPECT_EQ(m.hit_refused[static_cast<std::size_t>(server::HitRefusal::kBadRay)], 1u);
}

}  // namespace
}  // namespace posecast::client::testing
