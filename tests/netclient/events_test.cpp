// Animation events end to end (docs/events.md): a real server and NetClients over loopback UDP,
// links impaired by the network simulator. Every event the World emitted for a client's
// interest reaches it exactly once, in order, at its render time; a late joiner gets none from
// before it joined.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "loopback_session.h"

namespace posecast::client::testing {
namespace {

struct Truth {
  uint32_t tick;
  uint32_t entity;
  uint16_t clip, marker;
};

net::SimulatorConfig ten_percent_loss(uint64_t seed) {
  net::SimulatorConfig link;
  link.seed = seed;
  link.inbound.latency_us = 20'000;
  link.inbound.jitter_us = 5'000;
  link.inbound.loss_percent = 10;
  link.inbound.duplicate_percent = 2;
  link.inbound.reorder_percent = 2;
  link.outbound = link.inbound;
  return link;
}

struct Received {
  FiredEvent fired;
  int64_t render_us;
};

TEST(EventsLoopback, EveryEventArrivesOnceInOrderAtTenPercentLossAndLateJoinersGetNoneFromBefore) {
  SessionSetup setup;
  setup.entities = 8;  // walking and running: two footsteps per cycle each
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());

  // The truth: every event the World emitted, with its (session = World) tick.
  std::vector<Truth> truth;
  uint64_t seen_tick = 0;
  const auto record_truth = [&] {
    sim::World& world = session.server().world();
    if (world.tick_index() == seen_tick) return;
    seen_tick = world.tick_index();
    for (const sim::AnimationEvent& e : world.last_tick_events())
      truth.push_back(Truth{static_cast<uint32_t>(e.tick), e.entity, e.clip, e.marker});
  };

  std::vector<std::vector<Received>> got(2);
  std::vector<uint32_t> joined_tick(2, 0);
  std::vector<uint32_t> connected_tick(2, UINT32_MAX);  // the server's tick when the client saw its Welcome
  const auto collect = [&] {
    record_truth();
    for (std::size_t c = 0; c < session.clients().size(); ++c) {
      NetClient& client = *session.clients()[c];
      if (client.connected() && connected_tick[c] == UINT32_MAX)
        connected_tick[c] = static_cast<uint32_t>(session.server().world().tick_index());
      for (const FiredEvent& f : client.fired_events()) got[c].push_back(Received{f, client.render_time_us()});
    }
  };

  NetClientOptions early = session.client_options(11);
  early.simulator = ten_percent_loss(3);
  session.add_client(early);
  session.run_until(1'500'000, collect);
  ASSERT_TRUE(session.clients()[0]->connected());

  // The late joiner connects at 1.5 s.
  joined_tick[1] = static_cast<uint32_t>(session.server().world().tick_index());
  NetClientOptions late = session.client_options(12);
  late.simulator = ten_percent_loss(4);
  session.add_client(late);
  session.run_until(6'000'000, collect);
  for (auto& client : session.clients()) ASSERT_TRUE(client->connected());
  ASSERT_GT(truth.size(), 100u);

  const int64_t end_render = std::min(session.clients()[0]->render_time_us(), session.clients()[1]->render_time_us());
  for (std::size_t c = 0; c < 2; ++c) {
    SCOPED_TRACE("client " + std::to_string(c));
    const std::vector<Received>& events = got[c];
    ASSERT_FALSE(events.empty());
    // Sequences 1, 2, 3, ... each once, in order.
    for (std::size_t i = 0; i < events.size(); ++i) ASSERT_EQ(events[i].fired.sequence, i + 1);
    // The late joiner's first event is from after it joined; the early one's from its start.
    const uint32_t first_tick = events.front().fired.event.tick;
    if (c == 1) {
      EXPECT_GE(first_tick, joined_tick[1]);
    }
    // Exactly the World's events from the first one on, until the render time at the end.
    std::vector<Truth> expected;
    for (const Truth& t : truth) {
      if (t.tick >= first_tick && session.tick_time(t.tick) <= end_render) expected.push_back(t);
    }
    // Nothing missing at the start: no event of the World between the client's Welcome (the
    // server took it on before it sent that) and the first one received.
    std::size_t before = 0;
    for (const Truth& t : truth) before += t.tick < first_tick && t.tick >= connected_tick[c] ? 1 : 0;
    EXPECT_EQ(before, 0u) << "events between connecting and the first one received";
    ASSERT_LE(expected.size(), events.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const protocol::WireEvent& e = events[i].fired.event;
      ASSERT_EQ(e.tick, expected[i].tick) << "event " << i;
      ASSERT_EQ(e.entity_id, expected[i].entity) << "event " << i;
      ASSERT_EQ(e.clip, expected[i].clip) << "event " << i;
      ASSERT_EQ(e.marker, expected[i].marker) << "event " << i;
    }
    // Fired at the render time of their tick: never before it, and late only while a lost
    // message is repeated.
    std::vector<int64_t> lateness;
    for (const Received& r : events) {
      EXPECT_GE(r.render_us, r.fired.time_us);
      lateness.push_back(r.render_us - r.fired.time_us);
      ASSERT_NE(r.fired.marker, nullptr);  // named from the client's own model
      EXPECT_TRUE(r.fired.marker->name == "footstep_l" || r.fired.marker->name == "footstep_r");
    }
    std::sort(lateness.begin(), lateness.end());
    EXPECT_LE(lateness[lateness.size() / 2], 20'000) << "median lateness";
    EXPECT_LE(lateness.back(), 400'000) << "worst lateness";
    const ClientStats stats = session.clients()[c]->stats(session.now());
    EXPECT_GT(stats.events_duplicates, 0u) << "repeats until acked";
    std::printf("client %zu: %zu events, %llu copies dropped, lateness median %lld us, worst %lld us\n", c,
                events.size(), static_cast<unsigned long long>(stats.events_duplicates),
                static_cast<long long>(lateness[lateness.size() / 2]), static_cast<long long>(lateness.back()));
  }
  const server::ServerMetrics m = session.server().metrics();
  EXPECT_EQ(m.events_dropped, 0u);
  EXPECT_GT(m.events_sent, m.events_queued);  // repeats
}

TEST(EventsLoopback, InterestLimitsEventsToTheEntitiesAClientSees) {
  SessionSetup setup;
  setup.entities = 6;
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  NetClient& client = session.add_client(session.client_options(21));
  session.run_until(300'000);
  ASSERT_TRUE(client.connected());
  server::Interest interest;
  interest.subscribed = {session.entities()[1]};
  session.server().set_interest(client.client_id(), interest);
  std::map<uint32_t, int> per_entity;
  session.run_until(800'000);
  session.run_until(4'000'000, [&] {
    for (const FiredEvent& f : client.fired_events()) ++per_entity[f.event.entity_id];
  });
  ASSERT_EQ(per_entity.size(), 1u);
  EXPECT_EQ(per_entity.begin()->first, session.entities()[1]);
  EXPECT_GE(per_entity.begin()->second, 4);
}

}  // namespace
}  // namespace posecast::client::testing
