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

// The message: a client fires over real UDP on loopback; the server answers hit, miss or
// refused, and counts every refusal.
TEST_F(HitQueryTest, ClientsFireOverTheWireWithARightAndARate) {
  server::ServerOptions options;
  options.hit_queries_per_second = 3;
  start(options);
  const sim::EntityId target = spawn_idle({0, 0, 0});
  RawClient& client = add_client();
  const protocol::Welcome welcome = connect(client, 11);
  ASSERT_NE(welcome.client_id, 0u);
  step(10);
  const glm::vec3 body = torso();
  std::size_t answered = 0;
  auto fire = [&](uint32_t sequence, glm::vec3 origin, float length) {
    protocol::HitQuery q;
    q.sequence = sequence;
    q.origin_x = origin.x, q.origin_y = origin.y, q.origin_z = origin.z;
    q.direction_x = 0, q.direction_y = 0, q.direction_z = 1;
    q.length = length;
    q.view_us = tick_us(last_tick()) - 50'000;
    client.send(q, address);
    step();
    const std::vector<protocol::HitResult> answers = client.all<protocol::HitResult>();
    EXPECT_EQ(answers.size(), ++answered);  // one answer per shot
    return answers.empty() ? protocol::HitResult{} : answers.back();
  };
  const glm::vec3 from = body - glm::vec3(0, 0, 10);
  protocol::HitResult r = fire(1, from, 20);  // not allowed yet
  EXPECT_EQ(r.sequence, 1u);
  EXPECT_EQ(r.outcome, protocol::HitOutcome::kRefused);
  EXPECT_EQ(r.refusal, static_cast<uint8_t>(server::HitRefusal::kNoRight));
  server->allow_hit_queries(welcome.client_id, true);
  step();
  r = fire(2, from, 20);
  EXPECT_EQ(r.sequence, 2u);
  ASSERT_EQ(r.outcome, protocol::HitOutcome::kHit);
  EXPECT_EQ(r.entity_id, target);
  EXPECT_GT(r.distance, 0.0f);
  EXPECT_FALSE(r.clamped);
  r = fire(3, from + glm::vec3(50, 0, 0), 20);
  EXPECT_EQ(r.outcome, protocol::HitOutcome::kMiss);
  r = fire(4, from, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(r.outcome, protocol::HitOutcome::kRefused);
  EXPECT_EQ(r.refusal, static_cast<uint8_t>(server::HitRefusal::kBadRay));
  // Four fired within this second (the bad ray counts against the rate): the fifth is refused.
  r = fire(5, from, 20);
  EXPECT_EQ(r.refusal, static_cast<uint8_t>(server::HitRefusal::kRateLimited));
  step(61);  // a second later the window has moved on
  r = fire(6, from, 20);
  EXPECT_EQ(r.outcome, protocol::HitOutcome::kHit);
  const server::ServerMetrics m = server->metrics();
  EXPECT_EQ(refused(server::HitRefusal::kNoRight), 1u);
  EXPECT_EQ(refused(server::HitRefusal::kBadRay), 1u);
  EXPECT_EQ(refused(server::HitRefusal::kRateLimited), 1u);
  EXPECT_EQ(m.hit_queries, 3u);
  EXPECT_EQ(m.hit_hits, 2u);
  EXPECT_EQ(m.received.datagrams[12], 6u);  // hit_query
  EXPECT_EQ(m.sent.datagrams[13], 6u);      // hit_result
  EXPECT_STREQ(server::message_kind_name(12), "hit_query");
}

// ServerOptions::hit_right gives the right without an allow_hit_queries call (posecast-server's
// --hit-right); the embedder's word still overrides it per client, either way.
class HitRightTest : public HitQueryTest {
 protected:
  // One shot through the body from `client`, its `sequence`-th (1, 2, ...): its answer's
  // refusal (kNone: answered with a hit).
  server::HitRefusal fire(RawClient& client, uint32_t sequence) {
    const glm::vec3 from = torso() - glm::vec3(0, 0, 10);
    protocol::HitQuery q;
    q.sequence = sequence;
    q.origin_x = from.x, q.origin_y = from.y, q.origin_z = from.z;
    q.direction_x = 0, q.direction_y = 0, q.direction_z = 1;
    q.length = 20;
    q.view_us = tick_us(last_tick()) - 50'000;
    client.send(q, address);
    step();
    const std::vector<protocol::HitResult> answers = client.all<protocol::HitResult>();  // all so far
    EXPECT_EQ(answers.size(), sequence);  // one answer per shot
    if (answers.empty()) return server::HitRefusal::kDisabled;
    EXPECT_EQ(answers.back().sequence, sequence);
    if (answers.back().outcome != protocol::HitOutcome::kRefused) {
      EXPECT_EQ(answers.back().outcome, protocol::HitOutcome::kHit);
      return server::HitRefusal::kNone;
    }
    return static_cast<server::HitRefusal>(answers.back().refusal);
  }
};

TEST_F(HitRightTest, OwnersMayFireOthersNotAndTheEmbedderOverrides) {
  server::ServerOptions options;
  options.hit_right = server::HitRight::kOwners;
  start(options);
  const sim::EntityId target = spawn_idle({0, 0, 0});
  RawClient& owner = add_client();
  RawClient& watcher = add_client();
  const uint32_t owner_id = connect(owner, 21).client_id;
  const uint32_t watcher_id = connect(watcher, 22).client_id;
  ASSERT_NE(owner_id, 0u);
  ASSERT_NE(watcher_id, 0u);
  step(10);
  EXPECT_EQ(fire(owner, 1), server::HitRefusal::kNoRight);  // owns nothing yet
  server->grant_ownership(owner_id, target);
  step();
  EXPECT_EQ(fire(owner, 2), server::HitRefusal::kNone);
  EXPECT_EQ(fire(watcher, 1), server::HitRefusal::kNoRight);
  server->allow_hit_queries(watcher_id, true);
  server->allow_hit_queries(owner_id, false);
  step();
  EXPECT_EQ(fire(watcher, 2), server::HitRefusal::kNone);
  EXPECT_EQ(fire(owner, 3), server::HitRefusal::kNoRight);
  EXPECT_EQ(refused(server::HitRefusal::kNoRight), 3u);
}

TEST_F(HitRightTest, AllGivesEveryClientTheRight) {
  server::ServerOptions options;
  options.hit_right = server::HitRight::kAll;
  start(options);
  spawn_idle({0, 0, 0});
  RawClient& client = add_client();
  const uint32_t id = connect(client, 23).client_id;
  ASSERT_NE(id, 0u);
  step(10);
  EXPECT_EQ(fire(client, 1), server::HitRefusal::kNone);
  server->allow_hit_queries(id, false);
  step();
  EXPECT_EQ(fire(client, 2), server::HitRefusal::kNoRight);
}

TEST(ServerOptionsCheck, RefusesAHitRightOutOfRange) {
  asio::io_context io;
  server::ServerOptions options;
  options.listen = net::Endpoint(asio::ip::make_address("127.0.0.1"), 0);
  options.hit_right = static_cast<server::HitRight>(7);
  const auto created = server::Server::create(io, options, {generated_rig()});
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("hit_right"), std::string::npos) << created.error().message;
}

}  // namespace
}  // namespace posecast::test
