// Server::hit_query: lag compensation against the history, and its bad input (docs/hit-queries.md).

#include <limits>

#include "posecast/pose_evaluation.h"
#include "posecast/sim/playback_time.h"
#include "server_fixture.h"

namespace posecast::test {
namespace {

class HitQueryTest : public ServerFixture {
 protected:
  // The middle of the generated rig's thickest capsule in the rest pose, in entity space: a
  // point inside the body whatever the idle clip does to the limbs.
  glm::vec3 torso() {
    const HitRig* hit = server->hit_rig(0, 0);
    EXPECT_NE(hit, nullptr);
    const std::vector<glm::mat4> rest = rest_model_matrices(generated_rig()->rigs[0].skeleton);
    std::vector<PosedCapsule> posed(hit->capsules.size());
    EXPECT_TRUE(pose_capsules(*hit, rest, glm::mat4(1.0f), posed));
    std::size_t best = 0;
    for (std::size_t i = 0; i < posed.size(); ++i) {
      if (posed[i].radius > posed[best].radius) best = i;
    }
    return (posed[best].a + posed[best].b) * 0.5f;
  }
  // A ray along +Z through `at` (world space) from 10 units before it.
  static HitRay ray_through(glm::vec3 at) { return HitRay{at - glm::vec3(0, 0, 10), {0, 0, 1}, 20}; }
  int64_t tick_us(uint32_t tick) const { return sim::tick_start_us(tick, server->options().tick_rate_hz); }
  uint32_t last_tick() const { return static_cast<uint32_t>(server->metrics().ticks - 1); }
  uint64_t refused(server::HitRefusal r) { return server->metrics().hit_refused[static_cast<std::size_t>(r)]; }

  sim::EntityId spawn_idle(server::Vec3 at) {
    const sim::EntityId id = server->spawn(0, 0, at);
    server->play(id, 0, clip_motion(static_cast<uint16_t>(generated_rig()->find_clip("idle"))));
    return id;
  }
};

TEST_F(HitQueryTest, AnswersAtThePastViewTimeWhereTheEntityStoodThen) {
  start();
  const sim::EntityId a = spawn_idle({0, 0, 0});
  const sim::EntityId b = spawn_idle({5, 0, 0});
  step(20);
  const uint32_t before = last_tick();
  server->set_position(a, {30, 0, 0});  // a leaves: at `before` it stood at the origin
  step(10);
  const glm::vec3 body = torso();
  server::HitResult then = server->hit_query(ray_through(body), tick_us(before));
  EXPECT_EQ(then.refusal, server::HitRefusal::kNone);
  ASSERT_TRUE(then.hit);
  EXPECT_EQ(then.entity, a);
  EXPECT_FALSE(then.clamped);
  EXPECT_GT(then.distance, 0.0f);
  EXPECT_LT(then.distance, 10.0f);
  server::HitResult now = server->hit_query(ray_through(body), tick_us(last_tick()));
  EXPECT_FALSE(now.hit);
  now = server->hit_query(ray_through(body + glm::vec3(30, 0, 0)), tick_us(last_tick()));
  ASSERT_TRUE(now.hit);
  EXPECT_EQ(now.entity, a);
  // b never moved: hit at both times; the nearer of two in line wins.
  EXPECT_EQ(server->hit_query(ray_through(body + glm::vec3(5, 0, 0)), tick_us(before)).entity, b);
  const HitRay along_x{body + glm::vec3(-10, 0, 0), {1, 0, 0}, 40};
  EXPECT_EQ(server->hit_query(along_x, tick_us(before)).entity, a);
  EXPECT_EQ(server->hit_query(along_x, tick_us(last_tick())).entity, b);
  step();  // metrics are published at the end of a tick
  const server::ServerMetrics m = server->metrics();
  EXPECT_EQ(m.hit_queries, 6u);
  EXPECT_EQ(m.hit_hits, 5u);
  EXPECT_EQ(m.hit_unevaluable, 0u);
  EXPECT_GT(m.hit_history_bytes_per_entity, 0u);
}

TEST_F(HitQueryTest, ViewTimesOutsideTheHistoryAreClampedAndCounted) {
  server::ServerOptions options;
  options.hit_history_us = 200'000;  // 13 ticks at 60 Hz
  start(options);
  spawn_idle({0, 0, 0});
  step(40);
  const glm::vec3 body = torso();
  server::HitResult old = server->hit_query(ray_through(body), tick_us(5));
  EXPECT_TRUE(old.clamped);
  EXPECT_TRUE(old.hit);
  EXPECT_EQ(old.view_us, tick_us(last_tick() + 1 - 13));
  server::HitResult ahead = server->hit_query(ray_through(body), tick_us(last_tick() + 30));
  EXPECT_TRUE(ahead.clamped);
  EXPECT_EQ(ahead.view_us, tick_us(last_tick()));
  EXPECT_TRUE(server->hit_query(ray_through(body), -5).clamped);
  EXPECT_FALSE(server->hit_query(ray_through(body), tick_us(last_tick() - 3) + 7'000).clamped);
  step();
  EXPECT_EQ(server->metrics().hit_view_clamped, 3u);
}

TEST_F(HitQueryTest, BadRaysAreRefusedAndCounted) {
  start();
  spawn_idle({0, 0, 0});
  step(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t t = tick_us(last_tick());
  EXPECT_EQ(server->hit_query(HitRay{{0, nan, 0}, {0, 0, 1}, 10}, t).refusal, server::HitRefusal::kBadRay);
  EXPECT_EQ(server->hit_query(HitRay{{0, 1, 0}, {0, 0, 1}, 0}, t).refusal, server::HitRefusal::kBadRay);
  EXPECT_EQ(server->hit_query(HitRay{{0, 1, 0}, {0, 0, 0}, 10}, t).refusal, server::HitRefusal::kBadRay);
  EXPECT_EQ(server->hit_query(HitRay{{0, 1, 0}, {0, 0, 1}, 1e9f}, t).refusal, server::HitRefusal::kBadRay);
  step();
  EXPECT_EQ(refused(server::HitRefusal::kBadRay), 4u);
  EXPECT_EQ(server->metrics().hit_queries, 0u);
}

TEST_F(HitQueryTest, WithoutHistoryQueriesAreRefused) {
  server::ServerOptions options;
  options.hit_history_us = 0;
  start(options);
  spawn_idle({0, 0, 0});
  step(5);
  EXPECT_EQ(server->hit_query(HitRay{{0, 1, -5}, {0, 0, 1}, 10}, 0).refusal, server::HitRefusal::kDisabled);
  step();
  EXPECT_EQ(refused(server::HitRefusal::kDisabled), 1u);
  EXPECT_EQ(server->hit_rig(0, 0), nullptr);
}

}  // namespace
}  // namespace posecast::test
