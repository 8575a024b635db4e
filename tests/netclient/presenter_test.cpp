// Presenter alone, without sockets or a Connection: fed encoded server messages (raw payloads,
// as a game's own transport would hand them over) and presented on the caller's clock.

#include "posecast/client/presenter.h"

#include <cstring>
#include <vector>

#include "netclient_support.h"
#include "posecast/local_to_model.h"

namespace posecast::client::presenter_test {
namespace {

using protocol::kNoTick;
using testing::PoseSource;
using testing::same_bits;

constexpr uint32_t kTickRate = 60;
constexpr uint32_t kEntity = 7;

int64_t tick_us(uint32_t tick) { return static_cast<int64_t>(tick) * 1'000'000 / kTickRate; }

std::vector<uint8_t> payload(const protocol::Message& message) {
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(message);
  EXPECT_TRUE(bytes.ok());
  return bytes.ok() ? std::move(bytes).value() : std::vector<uint8_t>{};
}

class PresenterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(rig.model, nullptr);
    presenter.start(kTickRate, kTickRate, testing::bind_test_rig(rig));
  }

  // The server's snapshot of `tick` as a payload: the entity's pose coded on its own (no
  // baseline), arriving `latency_us` after the tick.
  PayloadOutcome send_tick(uint32_t tick, int64_t latency_us = 20'000) {
    const protocol::QuantizedPose q = source.quantized(tick, nullptr);
    server_palettes.push_back(source.palette(q));
    protocol::Snapshot s;
    s.server_tick = tick;
    s.baseline_tick = kNoTick;
    s.prior_tick = kNoTick;
    s.older_tick = kNoTick;
    s.part_index = 0;
    s.part_count = 1;
    s.entities.push_back(protocol::EntityPose{kEntity, 1, source.encode(q, {})});
    return presenter.receive(payload(s), tick_us(tick) + latency_us);
  }

  testing::TestRig rig = testing::load_test_rig();
  PoseSource source{rig, 1, kTickRate};
  Presenter presenter;
  std::vector<std::vector<glm::mat4>> server_palettes;  // by tick
};

TEST_F(PresenterTest, RawPayloadsFromAnyTransportArePresentedWithTheServersPalettes) {
  ASSERT_EQ(presenter.receive(payload(protocol::EntitySpawn{kEntity, 1, 0, 0, 0}), 0),
            PayloadOutcome::kTaken);
  for (uint32_t tick = 0; tick < 40; ++tick) ASSERT_EQ(send_tick(tick), PayloadOutcome::kTaken);
  EXPECT_EQ(presenter.ack().newest_tick, 39u);

  // Frames on the caller's clock, after the last arrival.
  for (int64_t now = tick_us(39) + 20'000; now < tick_us(39) + 120'000; now += 16'667) {
    presenter.present(now);
  }
  const PresentedEntity* shown = presenter.find(kEntity);
  ASSERT_NE(shown, nullptr);
  EXPECT_NE(shown->mode, PresentMode::kNone);
  ASSERT_EQ(shown->palette.size(), rig.skeleton().joint_count());
  EXPECT_EQ(presenter.stats(tick_us(40)).spawns, 1u);
  EXPECT_EQ(presenter.stats(tick_us(40)).snapshots_complete, 40u);

  // The mesh node's matrix is LocalToModelJob's on the shown pose.
  std::vector<glm::mat4> models(rig.skeleton().node_count());
  ASSERT_TRUE((LocalToModelJob{&rig.skeleton(), shown->locals, models}.Run()));
  const glm::mat4 mesh = rig.skeleton().mesh_node >= 0
                             ? models[static_cast<std::size_t>(rig.skeleton().mesh_node)]
                             : glm::mat4(1.0f);
  ASSERT_NE(shown->mesh_model, nullptr);
  EXPECT_EQ(std::memcmp(shown->mesh_model, &mesh, sizeof mesh), 0);

  // On a server tick, the presenter shows the server's quantised palette bit for bit.
  std::vector<glm::mat4> palette(rig.skeleton().joint_count());
  ASSERT_EQ(presenter.evaluate_at(kEntity, tick_us(30), palette), PresentMode::kExact);
  EXPECT_TRUE(same_bits(palette, server_palettes[30]));
}

TEST_F(PresenterTest, PayloadsThatAreNotForThePresenterAreSaidSo) {
  const std::vector<uint8_t> garbage{1, 2, 3, 4, 5};
  EXPECT_EQ(presenter.receive(garbage, 0), PayloadOutcome::kMalformed);
  protocol::Ack ack;
  ack.newest_tick = 3;
  EXPECT_EQ(presenter.receive(payload(ack), 0), PayloadOutcome::kNotPresentable);
  EXPECT_EQ(presenter.receive(payload(protocol::Disconnect{}), 0), PayloadOutcome::kNotPresentable);
  EXPECT_EQ(presenter.stats(0).snapshot_parts, 0u);
  EXPECT_EQ(presenter.registry().size(), 0u);
}

TEST_F(PresenterTest, ADespawnedEntityLeavesOnceTheRenderTimeReachesItsTick) {
  presenter.on_spawn(protocol::EntitySpawn{kEntity, 1, 0, 0, 0});
  for (uint32_t tick = 0; tick < 20; ++tick) ASSERT_EQ(send_tick(tick), PayloadOutcome::kTaken);
  presenter.on_despawn(protocol::EntityDespawn{kEntity, 1, 20});
  EXPECT_EQ(presenter.stats(0).despawns, 1u);
  presenter.present(tick_us(19) + 20'000);
  EXPECT_NE(presenter.find(kEntity), nullptr);
  for (int64_t now = tick_us(19); now < tick_us(19) + 2'000'000; now += 16'667) {
    presenter.present(now);
  }
  EXPECT_EQ(presenter.find(kEntity), nullptr);
  EXPECT_EQ(presenter.registry().size(), 0u);
}

TEST_F(PresenterTest, AStartForgetsTheLastSessionsEntitiesAndSnapshots) {
  presenter.on_spawn(protocol::EntitySpawn{kEntity, 1, 0, 0, 0});
  ASSERT_EQ(send_tick(0), PayloadOutcome::kTaken);
  ASSERT_EQ(presenter.registry().size(), 1u);
  presenter.start(kTickRate, kTickRate, presenter.binding());
  EXPECT_EQ(presenter.registry().size(), 0u);
  EXPECT_EQ(presenter.buffer().size(), 0u);
  EXPECT_TRUE(presenter.entities().empty());
}

}  // namespace
}  // namespace posecast::client::presenter_test
