// Snapshots: Quake 3 style delta coding against acked baselines, shared send ticks, late
// joiners, despawns, interest and the bandwidth budget.

#include <map>
#include <set>

#include "posecast/hash.h"
#include "server_fixture.h"

namespace posecast::test {
namespace {

class Snapshots : public ServerFixture {
 protected:
  // Spawns `count` entities at x = 0, 2, 4, ... playing clips in turn (the generated rig has
  // several looping clips), and returns their ids.
  std::vector<sim::EntityId> spawn_crowd(int count) {
    std::vector<sim::EntityId> ids;
    for (int i = 0; i < count; ++i) {
      const sim::EntityId id = server->spawn(0, 0, server::Vec3{2.0f * static_cast<float>(i), 0, 0});
      server->play(id, 0, clip_motion(static_cast<uint16_t>(i % 3)));
      ids.push_back(id);
    }
    return ids;
  }

  // Records every quantised pose the server produced, by (tick, id).
  void record_poses() {
    server->on_pose_quantized([this](uint32_t tick, sim::EntityId id, uint16_t, const protocol::QuantizedPose& pose) {
      quantized[{tick, id}] = pose;
    });
  }

  std::map<std::pair<uint32_t, sim::EntityId>, protocol::QuantizedPose> quantized;
};

TEST_F(Snapshots, EveryDecodedPoseEqualsTheServersQuantisedPoseAcrossAcks) {
  start();
  record_poses();
  spawn_crowd(6);
  RawClient& client = add_client();
  use_formats(client);
  client.auto_ack = true;
  ASSERT_NE(connect(client, 1).client_id, 0u);
  step(120);
  ASSERT_EQ(client.decode_failures, 0u) << client.first_failure;
  std::size_t checked = 0, delta_views = 0, predicted_views = 0, three_reference_views = 0, with_recipe = 0;
  for (const auto& [tick, view] : client.views) {
    if (!view.complete) continue;
    delta_views += view.baseline != protocol::kNoTick;
    predicted_views += view.prior != protocol::kNoTick;
    three_reference_views += view.older != protocol::kNoTick;
    for (const auto& [id, entry] : view.poses) {
      if (!view.decoded.count(id)) continue;
      with_recipe += entry.second.recipe.count > 0;
      auto it = quantized.find({tick, id});
      ASSERT_NE(it, quantized.end()) << "tick " << tick << " entity " << id;
      EXPECT_EQ(entry.second, it->second) << "tick " << tick << " entity " << id;
      ++checked;
    }
  }
  EXPECT_GT(checked, 6u * 30);
  EXPECT_GT(delta_views, 30u) << "snapshots after the first acks use a baseline";
  EXPECT_GT(predicted_views, 20u) << "and a prior";
  EXPECT_GT(three_reference_views, 20u) << "and an older one";
  EXPECT_EQ(with_recipe, checked) << "every entity plays a plain clip: every pose carries its recipe";
  const server::ServerMetrics m = server->metrics();
  EXPECT_LT(m.records_from_rest, m.records / 4);
}

TEST_F(Snapshots, UnderSimulatedLossDelayAndReorderingEveryDecodedPoseStillMatches) {
  server::ServerOptions options;
  net::SimulatorConfig simulator;
  simulator.seed = 7;
  simulator.outbound.latency_us = 50'000;
  simulator.outbound.jitter_us = 20'000;
  simulator.outbound.loss_percent = 10;
  simulator.outbound.reorder_percent = 5;
  simulator.outbound.duplicate_percent = 2;
  simulator.inbound.latency_us = 30'000;
  simulator.inbound.loss_percent = 10;
  options.simulator = simulator;
  start(options);
  record_poses();
  spawn_crowd(12);
  RawClient& client = add_client();
  use_formats(client);
  client.auto_ack = true;
  // The handshake itself may lose datagrams: retry like a client does.
  for (int attempt = 0; attempt < 20 && client.all<protocol::Welcome>().empty(); ++attempt) {
    client.send(protocol::ClientHello{protocol::kProtocolVersion, 5, "lossy"}, address, kHelloPad);
    step(10);
    auto challenges = client.all<protocol::ServerChallenge>();
    if (!challenges.empty()) client.send(protocol::ChallengeResponse{5, challenges.back().challenge_token}, address);
    step(10);
  }
  ASSERT_FALSE(client.all<protocol::Welcome>().empty());
  step(60 * 8);
  EXPECT_EQ(client.decode_failures, 0u) << client.first_failure;
  std::size_t complete = 0, delta = 0, checked = 0;
  for (const auto& [tick, view] : client.views) {
    if (!view.complete) continue;
    ++complete;
    delta += view.baseline != protocol::kNoTick;
    for (const auto& [id, entry] : view.poses) {
      if (!view.decoded.count(id)) continue;
      auto it = quantized.find({tick, id});
      ASSERT_NE(it, quantized.end());
      EXPECT_EQ(entry.second, it->second) << "tick " << tick << " entity " << id;
      ++checked;
    }
  }
  EXPECT_GT(complete, 100u) << "most of 160 snapshots complete despite 10 % loss";
  EXPECT_EQ(client.unknown_entities > 0, true) << "some spawns were lost (and repeated)";
  EXPECT_GT(delta, 80u);
  EXPECT_GT(checked, 1000u);
}

TEST_F(Snapshots, RecipesMakeRecordsSmallerAndCoverACrossfade) {
  uint64_t bytes[2] = {0, 0};
  for (const bool recipes : {false, true}) {
    server::ServerOptions options;
    options.attach_recipes = recipes;
    start(options);
    record_poses();
    auto ids = spawn_crowd(6);
    RawClient& client = add_client();
    use_formats(client);
    client.auto_ack = true;
    ASSERT_NE(connect(client, 1).client_id, 0u);
    step(60);
    server->crossfade(ids[0], 0, clip_motion(2), 2'000'000);
    step(30);
    for (const auto& s : client.all<protocol::Snapshot>()) {
      for (const auto& e : s.entities) bytes[recipes] += e.pose.size();
    }
    EXPECT_EQ(client.decode_failures, 0u) << client.first_failure;
    const auto& newest = std::prev(client.views.end())->second;
    ASSERT_TRUE(newest.poses.count(ids[0]));
    if (recipes) {
      EXPECT_TRUE(newest.poses.at(ids[0]).second.recipe.crossfade()) << "a crossfade recipe while fading";
      EXPECT_GT(newest.poses.at(ids[1]).second.recipe.count, 0);
    } else {
      EXPECT_EQ(newest.poses.at(ids[0]).second.recipe.count, 0);
    }
    server.reset();
    owned.clear();
    clients.clear();
    quantized.clear();
  }
  EXPECT_LT(bytes[1] * 2, bytes[0]) << "with recipes " << bytes[1] << " bytes, without " << bytes[0];
}

TEST_F(Snapshots, SharedPhasesServeTwentyHertzClientsOnTheTicksDivisibleByThree) {
  server::ServerOptions options;
  options.spread_send_phases = false;
  start(options);
  spawn_crowd(2);
  RawClient& a = add_client();
  RawClient& b = add_client();
  ASSERT_NE(connect(a, 1).client_id, 0u);
  step(1);
  ASSERT_NE(connect(b, 2).client_id, 0u);
  step(30);
  std::set<uint32_t> ticks_a, ticks_b;
  for (const auto& s : a.all<protocol::Snapshot>()) ticks_a.insert(s.server_tick);
  for (const auto& s : b.all<protocol::Snapshot>()) ticks_b.insert(s.server_tick);
  ASSERT_GE(ticks_a.size(), 9u);
  for (uint32_t t : ticks_a) EXPECT_EQ(t % 3, 0u);
  for (uint32_t t : ticks_b) {
    EXPECT_EQ(t % 3, 0u);
    EXPECT_TRUE(ticks_a.count(t));
  }
}

// The default: client k sends on the ticks where (tick + k mod 3) % 3 == 0, so clients 1 and 2
// never share a send tick and the snapshot work is spread over the interval.
TEST_F(Snapshots, SpreadPhasesServeClientsOnDifferentTicksOfTheInterval) {
  start();
  spawn_crowd(2);
  RawClient& a = add_client();
  RawClient& b = add_client();
  const uint32_t id_a = connect(a, 1).client_id;
  ASSERT_NE(id_a, 0u);
  step(1);
  const uint32_t id_b = connect(b, 2).client_id;
  ASSERT_NE(id_b, 0u);
  step(30);
  std::set<uint32_t> ticks_a, ticks_b;
  for (const auto& s : a.all<protocol::Snapshot>()) ticks_a.insert(s.server_tick);
  for (const auto& s : b.all<protocol::Snapshot>()) ticks_b.insert(s.server_tick);
  ASSERT_GE(ticks_a.size(), 9u);
  ASSERT_GE(ticks_b.size(), 9u);
  for (uint32_t t : ticks_a) EXPECT_EQ((t + id_a % 3) % 3, 0u) << t;
  for (uint32_t t : ticks_b) {
    EXPECT_EQ((t + id_b % 3) % 3, 0u) << t;
    EXPECT_FALSE(ticks_a.count(t)) << "shared tick " << t;
  }
}

TEST_F(Snapshots, LateJoinerFirstSnapshotIsCodedAgainstRestAndDecodes) {
  start();
  spawn_crowd(4);
  step(90);
  RawClient& late = add_client();
  use_formats(late);
  ASSERT_NE(connect(late, 1).client_id, 0u);
  step(3);
  auto snapshots = late.all<protocol::Snapshot>();
  ASSERT_FALSE(snapshots.empty());
  EXPECT_EQ(snapshots[0].baseline_tick, protocol::kNoTick);
  EXPECT_EQ(snapshots[0].entities.size(), 4u);
  EXPECT_EQ(late.all<protocol::EntitySpawn>().size(), 4u);
  EXPECT_EQ(late.decode_failures, 0u) << late.first_failure;
  EXPECT_EQ(late.unknown_entities, 0u);
  EXPECT_TRUE(late.views.begin()->second.complete);
}

TEST_F(Snapshots, WithoutAcksEverySnapshotIsCodedAgainstRest) {
  start();
  spawn_crowd(3);
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  step(30);
  const auto snapshots = client.all<protocol::Snapshot>();
  ASSERT_GE(snapshots.size(), 8u);  // 30 ticks at 20 Hz: about 10 (none would pass vacuously)
  for (const auto& s : snapshots) EXPECT_EQ(s.baseline_tick, protocol::kNoTick);
}

TEST_F(Snapshots, BaselinesOlderThanOneSecondAreNotUsed) {
  start();
  spawn_crowd(3);
  RawClient& client = add_client();
  use_formats(client);
  ASSERT_NE(connect(client, 1).client_id, 0u);
  step(6);
  const protocol::Ack only_ack = client.ack();
  client.send(only_ack, address);  // one ack, then silence
  const uint32_t acked = only_ack.newest_tick;
  ASSERT_NE(acked, protocol::kNoTick);
  for (int i = 0; i < 80; ++i) {
    step();
  }
  std::size_t within_a_second = 0, older = 0;
  for (const auto& s : client.all<protocol::Snapshot>()) {
    if (s.server_tick > acked && s.server_tick - acked <= 60) {
      EXPECT_EQ(s.baseline_tick, acked);
      ++within_a_second;
    } else if (s.server_tick > acked + 60) {
      EXPECT_EQ(s.baseline_tick, protocol::kNoTick) << "tick " << s.server_tick;
      ++older;
    }
  }
  // Both cases occur: 20 Hz snapshots for the second after the ack, and the ~20 ticks after.
  EXPECT_GE(within_a_second, 15u);
  EXPECT_GE(older, 4u);
}

TEST_F(Snapshots, DespawnReachesClientsThatKnewTheEntity) {
  start();
  auto ids = spawn_crowd(3);
  RawClient& client = add_client();
  use_formats(client);
  client.auto_ack = true;
  ASSERT_NE(connect(client, 1).client_id, 0u);
  step(12);
  server->despawn(ids[1]);
  step(12);
  auto despawns = client.all<protocol::EntityDespawn>();
  ASSERT_FALSE(despawns.empty());
  EXPECT_EQ(despawns[0].entity_id, ids[1]);
  // No record of it after its despawn tick, and the other two keep coming.
  const uint32_t gone = despawns[0].tick;
  for (const auto& s : client.all<protocol::Snapshot>()) {
    if (s.server_tick < gone) continue;
    for (const auto& e : s.entities) EXPECT_NE(e.entity_id, ids[1]);
  }
  EXPECT_EQ(client.decode_failures, 0u) << client.first_failure;
}

TEST_F(Snapshots, AnIdDespawnedAndSpawnedInOneTickIsANewGeneration) {
  start();
  server->submit(sim::Command{0, 7, sim::SpawnCommand{0, 0, {}}});
  server->submit(sim::Command{0, 7, sim::PlayCommand{0, clip_motion(1)}});
  RawClient& client = add_client();
  use_formats(client);
  client.auto_ack = true;
  ASSERT_NE(connect(client, 1).client_id, 0u);
  step(9);
  server->despawn(7);
  server->submit(sim::Command{0, 7, sim::SpawnCommand{0, 0, {}}});
  step(9);
  auto spawns = client.all<protocol::EntitySpawn>();
  ASSERT_GE(spawns.size(), 2u);
  EXPECT_EQ(spawns.front().generation, 1);
  EXPECT_EQ(spawns.back().generation, 2);
  auto despawns = client.all<protocol::EntityDespawn>();
  ASSERT_FALSE(despawns.empty());
  EXPECT_EQ(despawns[0].generation, 1);
  EXPECT_EQ(client.decode_failures, 0u) << client.first_failure;
}

// A subscribed client gets exactly its entities in every snapshot, and the World evaluates
// only the poses a due client may receive (docs/server.md, "One tick"): those two entities on
// the client's send ticks.
TEST_F(Snapshots, SubscribedInterestSendsAndEvaluatesOnlyThoseEntities) {
  start();
  auto ids = spawn_crowd(6);
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  ASSERT_NE(id, 0u);
  server->set_interest(id, server::Interest{{ids[1], ids[4]}, false, {}, 0});
  step(4);
  const std::size_t before = client.all<protocol::Snapshot>().size();
  const uint64_t evaluated_before = server->world().stats().poses_evaluated;
  step(30);
  const uint64_t evaluated = server->world().stats().poses_evaluated - evaluated_before;
  auto snapshots = client.all<protocol::Snapshot>();
  const std::size_t sent = snapshots.size() - before;
  ASSERT_GE(sent, 9u);  // 30 ticks at 20 of 60 Hz
  for (std::size_t i = before; i < snapshots.size(); ++i) {
    std::set<uint32_t> in_snapshot;
    for (const auto& e : snapshots[i].entities) in_snapshot.insert(e.entity_id);
    EXPECT_EQ(in_snapshot, (std::set<uint32_t>{ids[1], ids[4]})) << "snapshot " << i;
  }
  // Two poses per send tick; a snapshot still in flight at either end of the window may
  // shift the count by one tick.
  EXPECT_GE(evaluated, 2 * (sent - 1));
  EXPECT_LE(evaluated, 2 * (sent + 1));
  EXPECT_EQ(server->world().stats().evaluation_failures, 0u);
}

TEST_F(Snapshots, RadiusInterestSendsEntitiesWithinTheRadius) {
  start();
  auto ids = spawn_crowd(6);  // x = 0, 2, ..., 10
  RawClient& client = add_client();
  const uint32_t id = connect(client, 1).client_id;
  ASSERT_NE(id, 0u);
  server->set_interest(id, server::Interest{{}, true, server::Vec3{10, 0, 0}, 4.5f});
  step(2);
  const std::size_t before = client.all<protocol::Snapshot>().size();
  step(30);
  std::set<uint32_t> seen;
  auto snapshots = client.all<protocol::Snapshot>();
  for (std::size_t i = before; i < snapshots.size(); ++i) {
    for (const auto& e : snapshots[i].entities) seen.insert(e.entity_id);
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{ids[3], ids[4], ids[5]}));
}

TEST_F(Snapshots, BandwidthBudgetIsNeverExceededAndNothingStarves) {
  server::ServerOptions options;
  options.bandwidth_kbit = 48;  // 6000 bytes/s, 300 per snapshot at 20 Hz
  start(options);
  auto ids = spawn_crowd(40);
  RawClient& client = add_client();
  use_formats(client);
  client.auto_ack = true;
  const protocol::Welcome welcome = connect(client, 1);
  ASSERT_NE(welcome.client_id, 0u);
  const std::size_t welcome_index = client.received().size();
  // Received wire bytes per tick, from the first snapshot on.
  std::vector<uint64_t> per_tick;
  uint64_t last = client.bytes_received_wire();
  for (int t = 0; t < 60 * 6; ++t) {
    step();
    per_tick.push_back(client.bytes_received_wire() - last);
    last = client.bytes_received_wire();
  }
  // Any 60 consecutive ticks (one second) stay within 6000 bytes.
  uint64_t window = 0, worst = 0;
  for (std::size_t i = 0; i < per_tick.size(); ++i) {
    window += per_tick[i];
    if (i >= 60) window -= per_tick[i - 60];
    worst = std::max(worst, window);
  }
  EXPECT_LE(worst, 6000u);
  EXPECT_GT(worst, 4000u) << "the budget is used, not wasted";
  EXPECT_GT(server->metrics().records_deferred, 0u) << "40 entities do not fit 48 kbit/s at 20 Hz";
  std::set<uint32_t> seen;
  for (std::size_t i = welcome_index; i < client.received().size(); ++i) {
    const auto& r = client.received()[i];
    if (!r.message) continue;
    if (auto* s = std::get_if<protocol::Snapshot>(&*r.message)) {
      for (const auto& e : s->entities) seen.insert(e.entity_id);
    }
  }
  EXPECT_EQ(seen.size(), ids.size()) << "every entity was sent at least once";
  EXPECT_EQ(client.decode_failures, 0u) << client.first_failure;
}

TEST_F(Snapshots, SubscribedEntitiesGoFirstUnderATightBudget) {
  server::ServerOptions options;
  options.bandwidth_kbit = 40;
  start(options);
  auto ids = spawn_crowd(30);
  RawClient& client = add_client();
  client.auto_ack = true;
  use_formats(client);
  const uint32_t id = connect(client, 1).client_id;
  ASSERT_NE(id, 0u);
  server->set_interest(id, server::Interest{{ids[29]}, true, server::Vec3{0, 0, 0}, 1000.0f});
  step(2);
  const std::size_t before = client.all<protocol::Snapshot>().size();
  step(60);
  auto snapshots = client.all<protocol::Snapshot>();
  std::size_t with_subscribed = 0, total = 0;
  for (std::size_t i = before; i < snapshots.size(); ++i) {
    ++total;
    for (const auto& e : snapshots[i].entities) with_subscribed += e.entity_id == ids[29];
  }
  // The budget is really tight (records wait), and 60 ticks at 20 Hz give about 20 snapshots.
  EXPECT_GT(server->metrics().records_deferred, 0u) << "30 entities must not fit 40 kbit/s at 20 Hz";
  ASSERT_GE(total, 15u);
  EXPECT_GE(with_subscribed + 1, total) << "the subscribed entity is in (almost) every snapshot";
}

TEST_F(Snapshots, EmbeddingCommandsApplyAtTheNextTick) {
  start();
  const sim::EntityId id = server->spawn(0, 0, {});
  EXPECT_EQ(server->world().find_entity(id), nullptr) << "queued until the tick";
  step();
  ASSERT_NE(server->world().find_entity(id), nullptr);
  server->play(id, 0, clip_motion(1));
  step();
  const sim::EntityState* state = server->world().find_entity(id);
  ASSERT_EQ(state->layers.size(), 1u);
  EXPECT_EQ(state->layers[0].target.slots[0].clip, 1);
  server->crossfade(id, 0, clip_motion(2), 200'000);
  server->set_layer_weight(id, 0, 0.5f);
  step();
  EXPECT_EQ(server->world().find_entity(id)->layers[0].target.slots[0].clip, 2);
  EXPECT_FLOAT_EQ(server->world().find_entity(id)->layers[0].weight, 0.5f);
  server->despawn(id);
  step();
  EXPECT_EQ(server->world().find_entity(id), nullptr);
}

// Palettes and their hashes are computed only when asked for (a recording or a served
// recording), the hashes in the World's parallel pass (ServerOptions::world_hashes).
TEST_F(Snapshots, WorldHashesOnlyWhenAskedAndOnlyWithPalettes) {
  server::ServerOptions palettes_only;
  palettes_only.world_palettes = true;
  start(palettes_only);
  const std::vector<sim::EntityId> ids = spawn_crowd(3);
  step(2);
  EXPECT_FALSE(server->world().palette(ids[0]).empty());
  EXPECT_EQ(server->world().world_hash(), 0u) << "no World hashing unless world_hashes";

  server::ServerOptions hashing;
  hashing.world_palettes = true;
  hashing.world_hashes = true;
  start(hashing);
  const std::vector<sim::EntityId> hashed = spawn_crowd(3);
  step(2);
  EXPECT_NE(server->world().world_hash(), 0u);
  // The World's hash is the one a recorder would compute from the palettes itself:
  // (entity id, palette hash, root transform bits) in id order.
  const sim::World& world = server->world();
  Hasher expected;
  for (std::size_t i = 0; i < world.entity_count(); ++i) {
    EXPECT_EQ(world.palette_hash_at(i), hash_palette(world.palette_at(i)));
    expected.add_u32(world.entity_id_at(i));
    expected.add_u64(hash_palette(world.palette_at(i)));
    const sim::RootTransform& root = world.entity_at(i)->root;
    expected.add_float(root.x);
    expected.add_float(root.y);
    expected.add_float(root.z);
    expected.add_float(root.yaw);
  }
  EXPECT_EQ(world.world_hash(), expected.value());

  server::ServerOptions hashes_without_palettes;
  hashes_without_palettes.world_hashes = true;
  asio::io_context io2;
  Result<std::unique_ptr<server::Server>> refused =
      server::Server::create(io2, hashes_without_palettes, {generated_rig()});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("world_hashes needs world_palettes"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace posecast::test
