// A live server session recorded while 8 network clients (real NetClients over loopback UDP)
// command their own entities, then replayed: every tick's world hash equal to the live one.
// Uses the netclient tests' LoopbackSession (a real server driven in simulated time).
#include <gtest/gtest.h>

#include <set>

#include "../netclient/loopback_session.h"
#include "posecast/hash.h"
#include "posecast/replay/recorder.h"
#include "posecast/replay/replayer.h"
#include "replay_test_support.h"

namespace posecast::test {
namespace {

using client::testing::LoopbackSession;
using client::testing::SessionSetup;

TEST(LiveServerRecording, EightClientsCommandingTheirEntitiesReplayBitExactly) {
  SessionSetup setup;
  setup.entities = 8;
  setup.server.world_palettes = true;  // a recording's palette checks are palette hashes
  setup.server.tick_checks = true;    // what every recorded tick holds
  LoopbackSession session(setup);
  ASSERT_TRUE(session.ok());
  TempFile file("live.pcrec");
  replay::RecorderConfig config;
  config.producer = "test: LoopbackSession";
  auto recorder = replay::Recorder::create(file.path, session.server().world(), {kRigSource}, config);
  ASSERT_TRUE(recorder.ok()) << recorder.error().message;
  std::vector<uint64_t> live;
  // Frames (4 ms) are shorter than ticks (16.7 ms): each tick is seen once, right after it ran.
  auto record = [&] {
    sim::World& world = session.server().world();
    if (world.tick_index() <= recorder.value()->next_tick()) return;
    // The server's World does not hash every palette (the recording holds tick checks): hash
    // them here, as the World defines its hash, for a reference independent of the recorder.
    Hasher h;
    for (std::size_t i = 0; i < world.entity_count(); ++i) {
      h.add_u32(world.entity_id_at(i));
      h.add_u64(hash_palette(world.palette_at(i)));
      const sim::RootTransform& root = world.entity_at(i)->root;
      h.add_float(root.x);
      h.add_float(root.y);
      h.add_float(root.z);
      h.add_float(root.yaw);
    }
    // Then the tick's animation events, when there are any (docs/events.md).
    if (!world.last_tick_events().empty()) {
      h.add_u32(static_cast<uint32_t>(world.last_tick_events().size()));
      for (const sim::AnimationEvent& e : world.last_tick_events()) {
        h.add_u32(e.entity);
        h.add_u32((uint32_t{e.clip} << 16) | e.marker);
        h.add_u32(e.layer);
      }
    }
    live.push_back(h.value());
    const Status s = recorder.value()->record_tick(world);
    ASSERT_TRUE(s.ok()) << s.error().message;
  };

  for (uint64_t i = 0; i < 8; ++i) session.add_client(session.client_options(100 + i));
  session.run_until(600'000, record);
  auto& clients = session.clients();
  for (std::size_t i = 0; i < clients.size(); ++i) {
    ASSERT_TRUE(clients[i]->connected()) << "client " << i;
    session.server().grant_ownership(clients[i]->client_id(), session.entities()[i]);
  }
  session.run_until(700'000, record);

  // Each client sends a command for its entity about every 100 ms, the kinds in turn.
  uint64_t sent = 0;
  int64_t next_send = session.now();
  auto drive = [&] {
    record();
    if (session.now() < next_send) return;
    next_send += 100'000;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      const uint32_t id = session.entities()[i];
      const client::ClientEntity* known = clients[i]->registry().find(id);
      if (known == nullptr) continue;
      protocol::ClientCommand c;
      c.entity_id = id;
      c.generation = known->generation;
      switch ((sent + i) % 4) {
        case 0: c.op = protocol::CommandOp::kCrossfade; c.clip = static_cast<int16_t>((sent + i) % 3); c.time_us = 200'000; break;
        case 1: c.op = protocol::CommandOp::kSetSpeed; c.value = static_cast<int32_t>(40'000 + 5'000 * ((sent + i) % 9)); break;
        case 2: c.op = protocol::CommandOp::kPlay; c.clip = static_cast<int16_t>((sent + 2 * i) % 4); c.time_us = 50'000; break;
        default: c.op = protocol::CommandOp::kSetLayerWeight; c.layer = 0; c.value = 1 << 16; break;
      }
      if (clients[i]->send_command(c, session.now()) != 0) ++sent;
    }
  };
  session.run_until(4'000'000, drive);
  ASSERT_TRUE(recorder.value()->close().ok());
  EXPECT_GT(session.server().metrics().commands_applied, 100u);

  const auto recording = read_ok(read_bytes(file.path));
  ASSERT_TRUE(recording);
  EXPECT_EQ(recording->ticks.size(), live.size());
  // Client commands reach the World under the clients' own submitter ids.
  std::set<uint32_t> submitters;
  for (const replay::RecordedCommand& c : recording->commands) submitters.insert(c.submitter);
  EXPECT_GE(submitters.size(), 9u) << "the API submitter and eight clients";
  auto replayer = replay::Replayer::create(recording, rig_loader());
  ASSERT_TRUE(replayer.ok()) << replayer.error().message;
  for (std::size_t t = 0; t < live.size(); ++t) {
    const replay::ReplayStep s = replayer.value()->step();
    ASSERT_TRUE(s.matches()) << "tick " << s.tick;
    ASSERT_EQ(s.world_hash, live[t]) << "tick " << s.tick;
  }
  EXPECT_EQ(replayer.value()->world().snapshot(), session.server().world().snapshot());
}

}  // namespace
}  // namespace posecast::test
