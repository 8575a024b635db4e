// Small parts of the client: asset binding, entity generations, command redundancy, rates.

#include <gtest/gtest.h>

#include "netclient_support.h"
#include "posecast/client/command_sender.h"
#include "posecast/client/entity_registry.h"
#include "posecast/client/rate_meter.h"

namespace posecast::client {
namespace {

TEST(AssetBindingTest, BindsManifestEntriesByContentHash) {
  testing::TestRig rig = testing::load_test_rig();
  ASSERT_NE(rig.model, nullptr);
  const protocol::AssetInfo info{5, rig.model->model->content_hash, 24, "whatever.glb"};
  Result<AssetBinding> b = AssetBinding::bind(std::span(&info, 1), *rig.library, false, {});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->find(5), rig.model);
  EXPECT_EQ(b->find(0), nullptr);
}

TEST(AssetBindingTest, MismatchNamesTheModelItsHashAndWhatTheClientHas) {
  testing::TestRig rig = testing::load_test_rig();
  const protocol::AssetInfo info{3, 0x1234, 24, "Fox.glb"};
  Result<AssetBinding> b = AssetBinding::bind(std::span(&info, 1), *rig.library, false, {});
  ASSERT_FALSE(b.ok());
  const std::string& m = b.error().message;
  EXPECT_NE(m.find("server model 3 'Fox.glb'"), std::string::npos) << m;
  EXPECT_NE(m.find("0x0000000000001234"), std::string::npos) << m;
  EXPECT_NE(m.find("gen-rig:24"), std::string::npos) << m;
}

TEST(AssetBindingTest, LoadsAGeneratedRigTheManifestNamesWhenAllowed) {
  auto library = std::make_shared<AssetLibrary>();
  testing::TestRig reference = testing::load_test_rig("gen-rig:30");
  const protocol::AssetInfo info{0, reference.model->model->content_hash, 30, "gen-rig:30"};
  EXPECT_FALSE(AssetBinding::bind(std::span(&info, 1), *library, false, {}).ok());
  Result<AssetBinding> b = AssetBinding::bind(std::span(&info, 1), *library, true, {});
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(library->size(), 1u);
}

TEST(AssetBindingTest, RefusesAModelIdListedTwice) {
  testing::TestRig rig = testing::load_test_rig();
  const protocol::AssetInfo infos[2] = {{1, rig.model->model->content_hash, 24, "a"},
                                        {1, rig.model->model->content_hash, 24, "b"}};
  EXPECT_FALSE(AssetBinding::bind(infos, *rig.library, false, {}).ok());
}

TEST(AssetLibraryTest, RefusesAModelWithAnInvalidClipNamingRigAndClip) {
  testing::TestRig valid = testing::load_test_rig();
  ASSERT_NE(valid.model, nullptr);
  Model broken = *valid.model->model;
  broken.source = "broken-rig";
  broken.content_hash ^= 1;  // another model as far as the library is concerned
  ASSERT_FALSE(broken.rigs[0].clips.empty());
  ASSERT_FALSE(broken.rigs[0].clips[0].tracks.empty());
  // A track animating a node the skeleton does not have: the per-frame jobs on the library's
  // models skip this check (assets_validated), so add() must refuse the model.
  broken.rigs[0].clips[0].tracks[0].node = static_cast<uint16_t>(broken.rigs[0].skeleton.node_count());
  AssetLibrary library;
  const Status s = library.add(std::make_shared<const Model>(std::move(broken)));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("broken-rig: rigs[0].clips[0]"), std::string::npos) << s.error().message;
  EXPECT_EQ(library.size(), 0u);
}

TEST(AssetLibraryTest, RefusesAModelWithAnInvalidSkeleton) {
  testing::TestRig valid = testing::load_test_rig();
  ASSERT_NE(valid.model, nullptr);
  Model broken = *valid.model->model;
  broken.source = "broken-skeleton";
  broken.content_hash ^= 1;
  broken.rigs[0].skeleton.parents[1] = 5;  // a parent after its child
  AssetLibrary library;
  const Status s = library.add(std::make_shared<const Model>(std::move(broken)));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("broken-skeleton: rigs[0]"), std::string::npos) << s.error().message;
}

class EntityRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const protocol::AssetInfo info{0, rig.model->model->content_hash, 24, "gen-rig:24"};
    binding = AssetBinding::bind(std::span(&info, 1), *rig.library, false, {}).value();
  }
  testing::TestRig rig = testing::load_test_rig();
  AssetBinding binding;
  EntityRegistry registry;
};

TEST_F(EntityRegistryTest, NewerGenerationReplacesOlderAndRepeatsChangeNothing) {
  EXPECT_EQ(registry.on_spawn({1, 4, 0, 0, 10}, binding), SpawnOutcome::kAdded);
  EXPECT_EQ(registry.on_spawn({1, 4, 0, 0, 10}, binding), SpawnOutcome::kRepeat);
  EXPECT_EQ(registry.on_spawn({1, 3, 0, 0, 5}, binding), SpawnOutcome::kStale);
  EXPECT_EQ(registry.on_spawn({1, 5, 0, 0, 20}, binding), SpawnOutcome::kReplaced);
  EXPECT_EQ(registry.find(1)->generation, 5);
  EXPECT_EQ(registry.find(1)->spawn_tick, 20u);
  // 16-bit wrap: 0 is newer than 65535.
  EXPECT_EQ(registry.on_spawn({2, 65535, 0, 0, 1}, binding), SpawnOutcome::kAdded);
  EXPECT_EQ(registry.on_spawn({2, 0, 0, 0, 2}, binding), SpawnOutcome::kReplaced);
}

TEST_F(EntityRegistryTest, UnknownModelOrRigIsRefused) {
  EXPECT_EQ(registry.on_spawn({1, 1, 9, 0, 0}, binding), SpawnOutcome::kUnknownModel);
  EXPECT_EQ(registry.on_spawn({1, 1, 0, 3, 0}, binding), SpawnOutcome::kUnknownModel);
  EXPECT_EQ(registry.size(), 0u);
}

TEST_F(EntityRegistryTest, DespawnAppliesToItsGenerationAndRetiresAtItsTick) {
  ASSERT_EQ(registry.on_spawn({1, 2, 0, 0, 0}, binding), SpawnOutcome::kAdded);
  EXPECT_EQ(registry.on_despawn({1, 1, 30}), DespawnOutcome::kStale);
  EXPECT_EQ(registry.on_despawn({1, 2, 30}), DespawnOutcome::kApplied);
  EXPECT_EQ(registry.on_despawn({1, 2, 30}), DespawnOutcome::kRepeat);
  EXPECT_EQ(registry.on_despawn({9, 1, 30}), DespawnOutcome::kUnknown);
  EXPECT_TRUE(registry.find(1)->alive_at(29));
  EXPECT_FALSE(registry.find(1)->alive_at(30));
  EXPECT_EQ(registry.retire(29), 0u);
  EXPECT_EQ(registry.retire(30), 1u);
  // A late repeat of the old spawn does not bring it back; a new generation does.
  EXPECT_EQ(registry.on_spawn({1, 2, 0, 0, 0}, binding), SpawnOutcome::kStale);
  EXPECT_EQ(registry.on_spawn({1, 3, 0, 0, 40}, binding), SpawnOutcome::kAdded);
}

TEST_F(EntityRegistryTest, IteratesInIdOrderThroughSpawnsAndRetirements) {
  for (const uint32_t id : {7u, 3u, 9u, 1u, 5u}) {
    ASSERT_EQ(registry.on_spawn({id, 1, 0, 0, 0}, binding), SpawnOutcome::kAdded);
  }
  ASSERT_EQ(registry.on_despawn({3, 1, 10}), DespawnOutcome::kApplied);
  ASSERT_EQ(registry.on_despawn({9, 1, 10}), DespawnOutcome::kApplied);
  EXPECT_EQ(registry.retire(10), 2u);
  ASSERT_EQ(registry.on_spawn({4, 1, 0, 0, 0}, binding), SpawnOutcome::kAdded);
  std::vector<uint32_t> ids;
  for (const ClientEntity& e : registry.entities()) ids.push_back(e.id);
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 4, 5, 7}));
  EXPECT_EQ(registry.find(3), nullptr);
  ASSERT_NE(registry.find(5), nullptr);
  EXPECT_EQ(registry.find(5)->id, 5u);
}

TEST(CommandSenderTest, SendsEachCommandTheConfiguredNumberOfTimesWithSequences) {
  CommandSender sender(CommandSettings{3, 50'000, 4});
  protocol::ClientCommand c;
  c.entity_id = 42;
  EXPECT_EQ(sender.submit(c, 0), 1u);
  EXPECT_EQ(sender.submit(c, 10'000), 2u);
  std::vector<std::pair<int64_t, uint32_t>> sent;
  for (int64_t now = 0; now <= 300'000; now += 10'000) {
    sender.pump(now, [&](const protocol::ClientCommand& m) { sent.emplace_back(now, m.sequence); });
  }
  ASSERT_EQ(sent.size(), 6u);
  EXPECT_EQ(sent[0], (std::pair<int64_t, uint32_t>{0, 1}));
  EXPECT_EQ(sent[1], (std::pair<int64_t, uint32_t>{10'000, 2}));
  EXPECT_EQ(sent[2], (std::pair<int64_t, uint32_t>{50'000, 1}));
  EXPECT_EQ(sender.pending(), 0u);
}

TEST(CommandSenderTest, RefusesBeyondItsCapacity) {
  CommandSender sender(CommandSettings{3, 50'000, 2});
  EXPECT_NE(sender.submit({}, 0), 0u);
  EXPECT_NE(sender.submit({}, 0), 0u);
  EXPECT_EQ(sender.submit({}, 0), 0u);
}

TEST(RateMeterTest, ReportsBytesPerSecondOverTheLastFullSecond) {
  RateMeter meter;
  for (int64_t t = 0; t < 3'000'000; t += 10'000) meter.add(t, 100);  // 10 kB/s
  EXPECT_NEAR(meter.per_second(3'000'000), 10'000.0, 1.0);
  EXPECT_EQ(meter.total(), 30'000u);
  EXPECT_EQ(meter.per_second(10'000'000), 0.0);  // silence since
}

}  // namespace
}  // namespace posecast::client
