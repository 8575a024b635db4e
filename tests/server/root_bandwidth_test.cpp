// What root transforms cost on the wire (docs/performance.md): 100 Fox following recipes and
// moving straight at their walk's ground speed (in-place clips carried by their ground speed),
// one client at 20 Hz acking everything, against the same snapshots' pose bytes; and 100 Fox
// steered unpredictably (a new random Move every tick), in root bytes per entity per snapshot.

#include <cstdio>
#include <filesystem>
#include <random>

#include "posecast/rig/model_source.h"
#include "server_fixture.h"

namespace posecast::test {
namespace {

class RootBandwidth : public ServerFixture {
 protected:
  void SetUp() override {
    const std::filesystem::path fox = std::filesystem::path(POSECAST_ASSETS_DIR) / "Fox.glb";
    if (!std::filesystem::exists(fox)) GTEST_SKIP() << "no " << fox.string();
    Result<Model> loaded = rig::load_model_source(fox.string());
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model = std::make_shared<const Model>(std::move(loaded).value());
  }

  // 100 Fox walking (clip "Walk", root motion on) spaced 300 units apart; a client at 20 Hz.
  RawClient& start_crowd(std::vector<sim::EntityId>& ids) {
    start({}, {model});
    int walk = 0;
    const std::vector<Clip>& clips = model->rigs[0].clips;
    for (std::size_t c = 0; c < clips.size(); ++c) {
      if (clips[c].name == "Walk") walk = static_cast<int>(c);
    }
    for (int i = 0; i < 100; ++i) {
      sim::Command spawn;
      const sim::EntityId id = server->spawn(0, 0, server::Vec3{});
      spawn.entity = id;
      sim::TeleportCommand at{static_cast<float>(i % 10) * 300.0f - 1500.0f, static_cast<float>(i / 10) * 300.0f - 1500.0f,
                              static_cast<float>(i) * 0.37f - 3.0f};
      spawn.body = at;
      server->submit(spawn);
      sim::MotionSpec motion;
      motion.clips[0].clip = static_cast<uint16_t>(walk);
      motion.count = 1;
      motion.start_offset_us = i * 37'000;
      server->play(id, 0, motion);
      ids.push_back(id);
    }
    RawClient& client = add_client();
    client.set_formats({server->pose_format(0, 0)}, {&model->rigs[0]}, server->options().tick_rate_hz);
    client.auto_ack = true;
    EXPECT_NE(connect(client, 1).client_id, 0u);
    return client;
  }

  struct Tally {
    uint64_t snapshot_bytes = 0, root_bytes = 0, records = 0, snapshots = 0;
  };
  // Snapshot payload bytes and root bytes of the snapshots received from index `from` on.
  static Tally tally(RawClient& client, std::size_t from) {
    Tally t;
    std::vector<Received>& received = client.received();
    for (std::size_t i = from; i < received.size(); ++i) {
      const Received& r = received[i];
      if (!r.message) continue;
      const auto* s = std::get_if<protocol::Snapshot>(&*r.message);
      if (s == nullptr) continue;
      t.snapshot_bytes += r.bytes.size() + net::kUdpIpv4HeaderBytes;
      t.snapshots += s->part_index == 0;
      for (const protocol::EntityPose& e : s->entities) {
        t.root_bytes += e.root_size;
        ++t.records;
      }
    }
    return t;
  }

  std::shared_ptr<const Model> model;
};

TEST_F(RootBandwidth, CrowdFollowingRecipesPaysAtMostFivePercent) {
  std::vector<sim::EntityId> ids;
  RawClient& client = start_crowd(ids);
  step(120);  // joined, acked, every entity moving
  const std::size_t from = client.received().size();
  step(600);
  ASSERT_EQ(client.decode_failures, 0u) << client.first_failure;
  const Tally t = tally(client, from);
  ASSERT_GT(t.snapshots, 190u);
  const double per_snapshot = static_cast<double>(t.snapshot_bytes) / static_cast<double>(t.snapshots);
  const double root_per_snapshot = static_cast<double>(t.root_bytes) / static_cast<double>(t.snapshots);
  const double share = static_cast<double>(t.root_bytes) / static_cast<double>(t.snapshot_bytes - t.root_bytes);
  std::printf("100 walking Fox, 20 Hz: %.1f bytes per snapshot (UDP/IP included), of them %.2f root bytes "
              "(%.2f %% over the same snapshots without them), %.3f root bytes per record\n",
              per_snapshot, root_per_snapshot, 100.0 * share,
              static_cast<double>(t.root_bytes) / static_cast<double>(t.records));
  EXPECT_LE(share, 0.05);
  // They did move: the World's roots left their spawn points.
  const sim::EntityState* first = server->world().find_entity(ids[0]);
  ASSERT_NE(first, nullptr);
  EXPECT_GT(std::hypot(first->root.x + 1500.0f, first->root.z + 1500.0f), 100.0f);
}

TEST_F(RootBandwidth, SteeringEveryTickCostsBoundedBytesPerEntity) {
  std::vector<sim::EntityId> ids;
  RawClient& client = start_crowd(ids);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> speed(20.0f, 220.0f), turn(-sim::kMaxTurnRate, sim::kMaxTurnRate);
  const auto steer_all = [&] {
    for (const sim::EntityId id : ids) {
      sim::Command move;
      move.entity = id;
      move.body = sim::MoveCommand{speed(rng), turn(rng)};
      server->submit(move);
    }
  };
  for (int i = 0; i < 120; ++i) {
    steer_all();
    step(1);
  }
  const std::size_t from = client.received().size();
  for (int i = 0; i < 600; ++i) {
    steer_all();
    step(1);
  }
  ASSERT_EQ(client.decode_failures, 0u) << client.first_failure;
  const Tally t = tally(client, from);
  ASSERT_GT(t.records, 19'000u);
  const double per_record = static_cast<double>(t.root_bytes) / static_cast<double>(t.records);
  std::printf("100 Fox steered at random every tick, 20 Hz: %.2f root bytes per entity per snapshot\n", per_record);
  // The target: at most 6 bytes.
  EXPECT_LE(per_record, 6.0);
}

}  // namespace
}  // namespace posecast::test
