// Animation events on the server side (docs/events.md): a client that never acknowledges
// events costs bounded memory (kMaxPendingEvents), the overflow is counted, and what it is sent
// stays the same unacknowledged prefix; a client that acknowledges gets every event once.

#include <set>

#include "client_replica.h"
#include "server_fixture.h"

namespace posecast::test {
namespace {

constexpr uint16_t kRun = 2;  // the generated rig's clips: idle, walk, run, ...

class ServerEvents : public ServerFixture {};

TEST_F(ServerEvents, ANeverAcknowledgingClientIsBoundedAndCountedWhileAnAcknowledgingOneGetsEverything) {
  start();
  for (int i = 0; i < 40; ++i) {
    const sim::EntityId id = server->spawn(0, 0, server::Vec3{static_cast<float>(i), 0.0f, 0.0f});
    sim::MotionSpec motion = clip_motion(kRun);
    motion.start_offset_us = i * 17'000;
    server->play(id, 0, motion);
  }
  RawClient& silent = add_client();  // acks snapshots, never events
  silent.auto_ack = true;
  use_formats(silent);
  RawClient& acking = add_client();
  use_formats(acking);
  ASSERT_NE(connect(silent, 1).client_id, 0u);
  ASSERT_NE(connect(acking, 2).client_id, 0u);

  uint64_t emitted = 0;
  std::set<uint32_t> acking_sequences;
  std::size_t read = 0;
  for (int t = 0; t < 600; ++t) {  // 10 s: 40 runners step about 1,100 times
    step();
    emitted += server->world().last_tick_events().size();
    const std::vector<protocol::AnimationEvents> got = acking.all<protocol::AnimationEvents>();
    for (std::size_t m = read; m < got.size(); ++m) {
      for (std::size_t i = 0; i < got[m].events.size(); ++i) acking_sequences.insert(got[m].first_sequence + static_cast<uint32_t>(i));
    }
    read = got.size();
    uint32_t through = 0;
    while (acking_sequences.count(through + 1) != 0) ++through;
    protocol::Ack ack = acking.ack();
    ack.events_received = through;
    acking.send(ack, address);
  }
  ASSERT_GT(emitted, 2 * server::kMaxPendingEvents);

  // The silent client: always the same first events, never more than kMaxPendingEvents queued.
  const std::vector<protocol::AnimationEvents> silent_got = silent.all<protocol::AnimationEvents>();
  ASSERT_FALSE(silent_got.empty());
  for (const protocol::AnimationEvents& m : silent_got) {
    EXPECT_EQ(m.first_sequence, 1u);
    EXPECT_LE(m.events.size(), protocol::kMaxEventsPerMessage);
  }
  const server::ServerMetrics metrics = server->metrics();
  // The silent client took kMaxPendingEvents and every later one was dropped and counted
  // (`emitted` counts from after both connected; the handshake's ticks add a few).
  EXPECT_GE(metrics.events_dropped, emitted - server::kMaxPendingEvents);
  EXPECT_LE(metrics.events_dropped, emitted - server::kMaxPendingEvents + 20);
  EXPECT_GE(metrics.events_queued, emitted + server::kMaxPendingEvents);
  EXPECT_LE(metrics.events_queued, emitted + server::kMaxPendingEvents + 20);
  // The acking client received every sequence, without a gap.
  ASSERT_FALSE(acking_sequences.empty());
  EXPECT_EQ(*acking_sequences.rbegin(), acking_sequences.size());
  EXPECT_GE(acking_sequences.size() + 40, emitted);  // the last few ticks' may still be on their way
}

}  // namespace
}  // namespace posecast::test
