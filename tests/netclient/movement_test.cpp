// Moving characters over real loopback UDP with the real server: a client steers the entity it
// owns with Move commands and sees it move across snapshots where the World puts it; movement
// commands it may not give, or with absurd values, are refused and counted, the World
// unaffected.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "loopback_session.h"
#include "posecast/protocol/root_coding.h"

namespace posecast::client::testing {
namespace {

SessionSetup travelling_setup() {
  SessionSetup setup;
  setup.model_source = "gen-rig:24:travel";  // walk and run clips that carry the root
  setup.entities = 3;
  return setup;
}

protocol::ClientCommand move_command(const ClientEntity& entity, float speed, float turn_rate) {
  protocol::ClientCommand command;
  command.entity_id = entity.id;
  command.generation = entity.generation;
  command.op = protocol::CommandOp::kMove;
  command.speed = speed;
  command.turn_rate = turn_rate;
  return command;
}

uint64_t drops(LoopbackSession& session, server::DropReason reason) {
  return session.server().metrics().drops[static_cast<std::size_t>(reason)];
}

TEST(Movement, OwnerSteersItsEntityAndSeesItMoveWhereTheWorldPutsIt) {
  LoopbackSession session(travelling_setup());
  ASSERT_TRUE(session.ok());
  NetClient& client = session.add_client(session.client_options(41));
  session.run_until(600'000);
  ASSERT_TRUE(client.connected());
  const uint32_t target = session.entities()[1];
  session.server().grant_ownership(client.client_id(), target);
  session.run_until(900'000);
  ASSERT_TRUE(client.owns(target));
  const ClientEntity* known = client.registry().find(target);
  ASSERT_NE(known, nullptr);
  ASSERT_NE(client.find(target), nullptr);
  const protocol::RootValue start = client.find(target)->root;

  // Walk forward turning slowly for 1.5 s: the shown root moves on every few frames, never
  // jumps further than the walk covers, and keeps up with the World's.
  ASSERT_NE(client.send_command(move_command(*known, 1.2f, 0.8f), session.now()), 0u);
  float previous_x = start.x, previous_z = start.z;
  int moved_frames = 0, frames = 0;
  float largest_step = 0.0f;
  session.run_until(2'400'000, [&] {
    const PresentedEntity* shown = client.find(target);
    if (shown == nullptr) return;
    const float step = std::hypot(shown->root.x - previous_x, shown->root.z - previous_z);
    largest_step = std::max(largest_step, step);
    if (step > 0.0f) ++moved_frames;
    ++frames;
    previous_x = shown->root.x;
    previous_z = shown->root.z;
  });
  const PresentedEntity* shown = client.find(target);
  ASSERT_NE(shown, nullptr);
  const float travelled = std::hypot(shown->root.x - start.x, shown->root.z - start.z);
  std::printf("travelled %.3f units in %d frames (%d moved), largest frame step %.4f, yaw %.3f\n",
              static_cast<double>(travelled), frames, moved_frames, static_cast<double>(largest_step),
              static_cast<double>(shown->root.yaw));
  EXPECT_GT(travelled, 0.8f);                    // ~1.2 units/s for about 1.4 s, on a curve
  EXPECT_GT(moved_frames, frames * 3 / 4);       // moving through interpolation, not in jumps
  EXPECT_LT(largest_step, 0.05f);                // a 4 ms frame at 1.2-3.5 units/s, with slack
  EXPECT_GT(std::fabs(shown->root.yaw), 0.3f);   // it turned

  // The World's root at the render time's tick is within the held tolerance plus one tick's
  // motion of what the client shows (the shown root is interpolated between held roots).
  const sim::EntityState* state = session.server().world().find_entity(target);
  ASSERT_NE(state, nullptr);
  EXPECT_GT(std::hypot(state->root.x - start.x, state->root.z - start.z), 0.8f);
  // What the client shows trails the World by the interpolation delay (~0.1 s of motion).
  EXPECT_LT(std::hypot(state->root.x - shown->root.x, state->root.z - shown->root.z), 0.5f);
}

TEST(Movement, MoveForAnUnownedEntityOrWithAbsurdValuesIsRefusedAndCounted) {
  LoopbackSession session(travelling_setup());
  ASSERT_TRUE(session.ok());
  NetClient& client = session.add_client(session.client_options(43));
  session.run_until(600'000);
  ASSERT_TRUE(client.connected());
  const uint32_t target = session.entities()[0];
  const ClientEntity* known = client.registry().find(target);
  ASSERT_NE(known, nullptr);

  // Not owned: refused.
  ASSERT_NE(client.send_command(move_command(*known, 1.0f, 0.0f), session.now()), 0u);
  session.run_until(800'000);
  EXPECT_GE(drops(session, server::DropReason::kUnownedCommand), 1u);

  session.server().grant_ownership(client.client_id(), target);
  session.run_until(1'000'000);
  ASSERT_TRUE(client.owns(target));
  const uint64_t bad_before = drops(session, server::DropReason::kBadCommand);
  const uint64_t malformed_before = drops(session, server::DropReason::kMalformed);
  ASSERT_NE(client.send_command(move_command(*known, 1e9f, 0.0f), session.now()), 0u);  // absurd speed
  protocol::ClientCommand far = move_command(*known, 1.0f, 0.0f);
  far.op = protocol::CommandOp::kTeleport;
  far.x = 1e7f;  // outside the world
  ASSERT_NE(client.send_command(far, session.now()), 0u);
  protocol::ClientCommand nan = move_command(*known, NAN, 0.0f);
  ASSERT_NE(client.send_command(nan, session.now()), 0u);
  session.run_until(1'500'000);
  EXPECT_GE(drops(session, server::DropReason::kBadCommand), bad_before + 2);
  EXPECT_GE(drops(session, server::DropReason::kMalformed), malformed_before + 1);  // NaN: not a message
  EXPECT_EQ(session.server().metrics().commands_applied, 0u);
  const sim::EntityState* state = session.server().world().find_entity(target);
  ASSERT_NE(state, nullptr);
  EXPECT_LT(std::fabs(state->root.x), 100.0f);  // not teleported (its walk clip carries it a little)
  EXPECT_EQ(state->locomotion.mode, sim::LocomotionMode::kNone);

  // A teleport in range lands: a late joiner sees the entity there in its first frame.
  protocol::ClientCommand jump = far;
  jump.x = 12.5f;
  jump.z = -7.25f;
  jump.yaw = 1.0f;
  ASSERT_NE(client.send_command(jump, session.now()), 0u);
  session.run_until(1'800'000);
  NetClient& late = session.add_client(session.client_options(44));
  bool seen = false;
  session.run_until(2'600'000, [&] {
    const PresentedEntity* shown = late.find(target);
    if (seen || shown == nullptr) return;
    seen = true;
    // Where the World has it (its walk clip carries it on from the teleport), to within the
    // interpolation delay's motion: never at the origin it was spawned at.
    const sim::EntityState* now = session.server().world().find_entity(target);
    ASSERT_NE(now, nullptr);
    EXPECT_LT(std::hypot(shown->root.x - now->root.x, shown->root.z - now->root.z), 0.5f);
    EXPECT_GT(std::hypot(shown->root.x, shown->root.z), 10.0f);
  });
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace posecast::client::testing
