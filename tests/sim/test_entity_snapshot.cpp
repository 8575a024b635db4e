// One entity's snapshot (World::entity_snapshot / restore_entity), what a predicting client
// restores the server's state from: restored into another World holding the same model, the
// entity continues bit for bit (state bytes and palettes), a fade from a frozen pose travels as
// its chain (small enough for a datagram) and is rebuilt exactly, and any damaged byte string
// is refused without changing the World.

#include <gtest/gtest.h>

#include <cstdio>

#include "posecast/hash.h"
#include "sim_test_support.h"

namespace posecast::test {
namespace {

// An entity mid-way through a fade from a frozen pose with a three-stage chain, and a second
// layer playing over it.
void interrupted_fades(TestWorld& w) {
  w.spawn(0);
  w.spawn(5);
  w.world.submit(0, at(0, 5, PlayCommand{0, clip_motion(0, kSpeedOne, 120'000)}));
  w.world.submit(0, at(0, 0, PlayCommand{0, clip_motion(0)}));
  w.world.submit(0, at(3, 0, CrossfadeCommand{0, clip_motion(1), 300'000, false}));
  w.world.submit(0, at(9, 0, CrossfadeCommand{0, clip_motion(2), 300'000, false}));
  w.world.submit(0, at(14, 0, CrossfadeCommand{0, clip_motion(0, kSpeedOne / 2), 300'000, false}));
  w.world.submit(0, at(15, 0, PlayCommand{1, clip_motion(1)}));
  w.world.submit(0, at(15, 0, SetLayerWeightCommand{1, 0.5f}));
  w.run_to(17);
}

TEST(EntitySnapshot, RestoredIntoAnotherWorldTheEntityContinuesBitForBit) {
  TestWorld source;
  interrupted_fades(source);
  const EntityState* state = source.world.find_entity(0);
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(state->layers[0].fade_source, FadeSource::kFrozenPose);
  ASSERT_EQ(state->layers[0].frozen_chain.size(), 3u);
  const std::vector<uint8_t> bytes = source.world.entity_snapshot(0);
  // The frozen pose travels as its chain: a few hundred bytes, not a pose of every node.
  const std::size_t plain = source.world.entity_snapshot(5).size();  // one clip on one layer
  std::printf("entity snapshot: %zu bytes (one clip), %zu bytes (a three-stage frozen chain and a second layer)\n",
              plain, bytes.size());
  EXPECT_LT(bytes.size(), 400u);
  EXPECT_TRUE(source.world.entity_snapshot(77).empty());

  TestWorld target;  // the same model; no entity yet
  Result<EntityId> restored = target.world.restore_entity(bytes);
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  EXPECT_EQ(restored.value(), 0u);
  target.world.set_tick_index(source.world.tick_index());
  EXPECT_EQ(target.world.entity_snapshot(0), bytes);  // the round trip is exact
  EXPECT_EQ(hash_entity_state(*target.world.find_entity(0)), hash_entity_state(*state));
  for (int t = 0; t < 40; ++t) {
    source.world.tick();
    target.world.tick();
    ASSERT_EQ(target.world.entity_snapshot(0), source.world.entity_snapshot(0)) << "tick " << t;
    ASSERT_EQ(target.world.palette_hash_at(0), source.world.palette_hash_at(0)) << "tick " << t;
  }
  // Restoring over an existing entity replaces its state; the other entities stay.
  target.spawn(9, target.world.tick_index());
  target.world.tick();
  ASSERT_TRUE(target.world.restore_entity(source.world.entity_snapshot(0)).ok());
  EXPECT_EQ(target.world.entity_count(), 2u);
  EXPECT_EQ(target.world.entity_snapshot(0), source.world.entity_snapshot(0));
}

TEST(EntitySnapshot, DamagedBytesAreRefusedAndChangeNothing) {
  TestWorld source;
  interrupted_fades(source);
  const std::vector<uint8_t> bytes = source.world.entity_snapshot(0);
  TestWorld target;
  target.spawn(0);
  target.world.tick();
  const std::vector<uint8_t> before = target.world.entity_snapshot(0);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(target.world.restore_entity(std::span<const uint8_t>(bytes).first(n)).ok()) << n << " bytes";
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(target.world.restore_entity(longer).ok());
  // A model this World does not hold (content hash changed).
  std::vector<uint8_t> foreign = bytes;
  foreign[5] ^= 0xFF;
  const Result<EntityId> refused = target.world.restore_entity(foreign);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("model or rig not registered"), std::string::npos) << refused.error().message;
  EXPECT_FALSE(target.world.restore_entity(bytes, EntityId{3}).ok());  // bytes of another entity
  EXPECT_EQ(target.world.entity_snapshot(0), before);  // every refusal left the entity as it was
  EXPECT_EQ(target.world.entity_count(), 1u);
  // Any flipped bit gives a valid state (a phase or weight moved) or an error, never a crash;
  // a valid one ticks on.
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> flipped = bytes;
    flipped[i] ^= 0x40;
    if (target.world.restore_entity(flipped).ok()) target.world.tick();
  }
}

}  // namespace
}  // namespace posecast::test
