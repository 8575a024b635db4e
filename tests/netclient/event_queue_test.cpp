// EventQueue (docs/events.md): repeated, reordered and lost copies of the server's numbered
// events become each event once, in order, at its render time; and the wire message itself.
#include <gtest/gtest.h>

#include "posecast/client/event_queue.h"
#include "posecast/client/presenter.h"

namespace posecast::client {
namespace {

protocol::WireEvent event_at(uint32_t tick, uint32_t entity = 1) {
  protocol::WireEvent e;
  e.tick = tick;
  e.entity_id = entity;
  e.clip = 1;
  e.marker = 0;
  e.weight_q8 = 255;
  e.x = 1.5f;
  e.z = -2.0f;
  return e;
}

protocol::AnimationEvents message(uint32_t first, std::vector<uint32_t> ticks) {
  protocol::AnimationEvents m;
  m.first_sequence = first;
  for (uint32_t t : ticks) m.events.push_back(event_at(t));
  return m;
}

TEST(EventQueue, DuplicatesAreDroppedGapsHoldLaterEventsAndEachFiresOnceInOrder) {
  EventQueue q;
  q.start(60);
  EXPECT_EQ(q.receive(message(1, {6, 12})), 2u);
  EXPECT_EQ(q.receive(message(1, {6, 12})), 0u);  // the repeat
  EXPECT_EQ(q.duplicates(), 2u);
  EXPECT_EQ(q.received_through(), 2u);
  EXPECT_EQ(q.receive(message(4, {30})), 1u);     // 3 lost so far
  EXPECT_EQ(q.received_through(), 2u);

  std::vector<QueuedEvent> out;
  q.take_due(q.tick_time_us(5), out);
  EXPECT_TRUE(out.empty());                      // tick 6 is not due yet
  q.take_due(q.tick_time_us(12), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].sequence, 1u);
  EXPECT_EQ(out[1].sequence, 2u);
  EXPECT_EQ(out[1].time_us, q.tick_time_us(12));
  out.clear();
  q.take_due(q.tick_time_us(40), out);
  EXPECT_TRUE(out.empty());                      // 4 waits for 3
  EXPECT_EQ(q.receive(message(2, {12, 20, 30})), 1u);  // 3 arrives with repeats of 2 and 4
  EXPECT_EQ(q.received_through(), 4u);
  q.take_due(q.tick_time_us(40), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].sequence, 3u);
  EXPECT_EQ(out[1].sequence, 4u);
  out.clear();
  EXPECT_EQ(q.receive(message(1, {6, 12, 20, 30})), 0u);  // everything again: nothing fires twice
  q.take_due(q.tick_time_us(100), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(q.fired(), 4u);
}

TEST(EventQueue, SequencesFarAheadAreRefusedAndStartForgetsTheSession) {
  EventQueue q;
  q.start(60);
  EXPECT_EQ(q.receive(message(EventQueue::kMaxAhead + 1, {1})), 0u);
  EXPECT_EQ(q.refused(), 1u);
  EXPECT_EQ(q.receive(message(1, {1})), 1u);
  q.start(30);
  EXPECT_EQ(q.received_through(), 0u);
  EXPECT_EQ(q.waiting(), 0u);
  EXPECT_EQ(q.receive(message(1, {1})), 1u);  // a new session numbers from 1 again
}

TEST(EventQueue, MessagesRoundTripAndBadOnesAreRefused) {
  protocol::AnimationEvents m = message(7, {3, 4, 5});
  m.events[1].generation = 9;
  m.events[1].layer = 2;
  m.events[1].marker = 300;
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(m);
  ASSERT_TRUE(bytes.ok());
  EXPECT_LE(bytes->size(), 64u + 3 * 24u);
  Result<protocol::Message> back = protocol::decode_message(bytes.value());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(std::get<protocol::AnimationEvents>(back.value()), m);

  protocol::AnimationEvents full = message(1, std::vector<uint32_t>(protocol::kMaxEventsPerMessage, 1));
  Result<std::vector<uint8_t>> full_bytes = protocol::encode_message(full);
  ASSERT_TRUE(full_bytes.ok());
  EXPECT_LE(full_bytes->size(), protocol::kMaxPacketBytes);
  full.events.push_back(event_at(2));
  EXPECT_FALSE(protocol::encode_message(full).ok());
  EXPECT_FALSE(protocol::encode_message(protocol::AnimationEvents{}).ok());
  EXPECT_FALSE(protocol::encode_message(message(0, {1})).ok());

  protocol::Ack ack;
  ack.newest_tick = 10;
  ack.events_received = 1234;
  Result<std::vector<uint8_t>> ack_bytes = protocol::encode_message(ack);
  ASSERT_TRUE(ack_bytes.ok());
  EXPECT_EQ(std::get<protocol::Ack>(protocol::decode_message(ack_bytes.value()).value()), ack);
}

TEST(EventQueue, ThePresenterAcksWhatArrivedAndFiresAtTheRenderTime) {
  Presenter presenter;
  presenter.start(60, 20, AssetBinding{});
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(message(1, {0, 1}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(presenter.receive(bytes.value(), 0), PayloadOutcome::kTaken);
  EXPECT_EQ(presenter.ack().events_received, 2u);
  EXPECT_EQ(presenter.stats(0).events_received, 2u);
  EXPECT_EQ(presenter.stats(0).events_waiting, 2u);
}

}  // namespace
}  // namespace posecast::client
