// Interest by radius follows the World: an entity is replicated to a client whose interest is a
// radius around a point while its root stands within it, whether it walked there (a move
// command), was teleported (Server::set_position) or spawned there (Server::spawn's position).

#include <algorithm>
#include <set>

#include "server_fixture.h"

namespace posecast::test {
namespace {

class InterestFollowsRoots : public ServerFixture {
 protected:
  // The entity ids carried by the snapshots received from index `from` on.
  static std::set<sim::EntityId> replicated_since(RawClient& client, std::size_t from) {
    std::set<sim::EntityId> ids;
    std::vector<Received>& received = client.received();
    for (std::size_t i = from; i < received.size(); ++i) {
      if (!received[i].message) continue;
      if (const auto* s = std::get_if<protocol::Snapshot>(&*received[i].message)) {
        for (const protocol::EntityPose& e : s->entities) ids.insert(e.entity_id);
      }
    }
    return ids;
  }
};

TEST_F(InterestFollowsRoots, AnEntityIsSentOnlyWhileItsRootIsWithinTheRadius) {
  start();
  const std::shared_ptr<const Model> rig = generated_rig();
  const sim::EntityId near = server->spawn(0, 0, server::Vec3{1.0f, 0.0f, 0.0f});
  const sim::EntityId walker = server->spawn(0, 0, server::Vec3{0.0f, 0.0f, -30.0f});  // faces +Z
  const sim::EntityId far = server->spawn(0, 0, server::Vec3{200.0f, 0.0f, 0.0f});
  RawClient& client = add_client();
  client.set_formats({server->pose_format(0, 0)}, {&rig->rigs[0]}, server->options().tick_rate_hz);
  client.auto_ack = true;
  const uint32_t client_id = connect(client, 1).client_id;
  ASSERT_NE(client_id, 0u);
  server->set_interest(client_id, server::Interest{{}, true, server::Vec3{}, 10.0f});
  step(30);
  std::size_t from = client.received().size();
  step(30);
  EXPECT_EQ(replicated_since(client, from), (std::set<sim::EntityId>{near}));

  // The walker runs towards the centre (+Z) and comes within the radius.
  sim::Command run{0, walker, sim::MoveCommand{3.0f, 0.0f}};
  server->submit(run);
  for (int i = 0; i < 600 && server->world().find_entity(walker)->root.z < -5.0f; ++i) step(1);
  ASSERT_GE(server->world().find_entity(walker)->root.z, -5.0f) << "the walker never arrived";
  from = client.received().size();
  step(20);
  EXPECT_TRUE(replicated_since(client, from).count(walker)) << "walked into the radius";

  // The far one is teleported in; the near one out.
  server->set_position(far, server::Vec3{-2.0f, 0.0f, 2.0f});
  server->set_position(near, server::Vec3{500.0f, 0.0f, 0.0f});
  step(5);
  EXPECT_FLOAT_EQ(server->world().find_entity(far)->root.x, -2.0f);
  from = client.received().size();
  step(20);
  const std::set<sim::EntityId> after = replicated_since(client, from);
  EXPECT_TRUE(after.count(far)) << "teleported into the radius";
  EXPECT_FALSE(after.count(near)) << "teleported out of the radius";
}

}  // namespace
}  // namespace posecast::test
