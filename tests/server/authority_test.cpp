// Commands with authority (docs/session.md, "Commands and authority").

#include "server_fixture.h"

namespace posecast::test {
namespace {

using server::DropReason;

class Authority : public ServerFixture {
 protected:
  void SetUp() override {
    start();
    entity = server->spawn(0, 0, {});
    server->play(entity, 0, clip_motion(0));
    step();
    generation = 1;  // the first entity with an id
  }

  protocol::ClientCommand play(uint32_t sequence, int16_t clip) {
    protocol::ClientCommand command;
    command.sequence = sequence;
    command.entity_id = entity;
    command.generation = generation;
    command.op = protocol::CommandOp::kPlay;
    command.clip = clip;
    return command;
  }

  uint16_t playing() { return server->world().find_entity(entity)->layers[0].target.slots[0].clip; }

  sim::EntityId entity = 0;
  uint16_t generation = 0;
};

TEST_F(Authority, CommandForAnUnownedEntityIsDroppedCountedAndNotApplied) {
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  client.send(play(1, 2), address);
  step(2);
  EXPECT_EQ(drops(DropReason::kUnownedCommand), 1u);
  EXPECT_EQ(playing(), 0);
  EXPECT_EQ(server->metrics().commands_applied, 0u);
}

TEST_F(Authority, OwnerCommandIsAppliedAtTheNextTick) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  ASSERT_NE(id, 0u);
  server->grant_ownership(id, entity);
  step();
  client.send(play(1, 2), address);
  step(2);
  EXPECT_EQ(playing(), 2);
  EXPECT_EQ(server->metrics().commands_applied, 1u);
}

TEST_F(Authority, AnotherClientsOwnershipDoesNotCount) {
  RawClient& owner = add_client();
  RawClient& other = add_client();
  const uint32_t owner_id = connect(owner, 1).client_id;
  ASSERT_NE(connect(other, 2).client_id, 0u);
  server->grant_ownership(owner_id, entity);
  step();
  other.send(play(1, 2), address);
  step(2);
  EXPECT_EQ(drops(DropReason::kUnownedCommand), 1u);
  EXPECT_EQ(playing(), 0);
}

TEST_F(Authority, RevokedOwnershipRefusesLaterCommands) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  server->grant_ownership(id, entity);
  step();
  server->revoke_ownership(entity);
  step();
  client.send(play(1, 2), address);
  step(2);
  EXPECT_EQ(drops(DropReason::kUnownedCommand), 1u);
  EXPECT_EQ(playing(), 0);
}

TEST_F(Authority, RepeatedOrOldSequencesAreIgnored) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  server->grant_ownership(id, entity);
  step();
  client.send(play(5, 1), address);
  step();
  client.send(play(5, 2), address);  // repeat
  client.send(play(4, 2), address);  // old
  step(2);
  EXPECT_EQ(playing(), 1);
  EXPECT_EQ(drops(DropReason::kStaleCommand), 2u);
}

TEST_F(Authority, CommandForAnEarlierGenerationIsRefused) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  server->grant_ownership(id, entity);
  step();
  protocol::ClientCommand old = play(1, 2);
  old.generation = static_cast<uint16_t>(generation + 7);
  client.send(old, address);
  step(2);
  EXPECT_EQ(playing(), 0);
  EXPECT_EQ(drops(DropReason::kStaleCommand), 1u);
}

TEST_F(Authority, CommandTheAnimatorCannotExpressIsABadCommand) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  server->grant_ownership(id, entity);
  step();
  client.send(play(1, 999), address);  // no such clip
  step(2);
  EXPECT_EQ(drops(DropReason::kBadCommand), 1u);
  EXPECT_EQ(playing(), 0);
}

TEST_F(Authority, CommandFromAnUnconnectedAddressIsAnUnknownSource) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  server->grant_ownership(id, entity);
  step();
  RawClient& forger = add_client();
  forger.send(play(1, 2), address);
  step(2);
  EXPECT_EQ(drops(DropReason::kUnknownSource), 1u);
  EXPECT_EQ(playing(), 0);
}

TEST_F(Authority, OwnershipEndsWithTheConnection) {
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  server->grant_ownership(id, entity);
  step();
  client.send(protocol::Disconnect{protocol::DisconnectReason::kClientLeft, ""}, address);
  step();
  RawClient& again = add_client();
  ASSERT_NE(connect(again, 2).client_id, 0u);
  again.send(play(1, 2), address);
  step(2);
  EXPECT_EQ(drops(DropReason::kUnownedCommand), 1u);
  EXPECT_EQ(playing(), 0);
}

}  // namespace
}  // namespace posecast::test
