// The animator through the World: crossfades, phase sync, interruption, layers, masks,
// wrapping, speeds and command order.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "sim_test_support.h"

namespace posecast::test {
namespace {

constexpr int64_t kUs = int64_t{1} << kPhaseFractionBits;  // one microsecond of phase

int64_t walk_us(const TestWorld& w) { return w.rig().clips[kWalk].duration_us; }
int64_t run_us(const TestWorld& w) { return w.rig().clips[kRun].duration_us; }

TEST(Animator, PlayShowsTheStartOffsetOnItsFirstTick) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 250000)}));
  w.world.tick();
  EXPECT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), sample(w.rig(), kWalk, 250000))));
}

TEST(Animator, CrossfadeWeightFollowsElapsedWorldTimeAndEndsExactlyAtTheTarget) {
  TestWorld w;
  const int64_t duration = 200000;  // 12 ticks at 60 Hz
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
  w.world.submit(0, at(6, 1, CrossfadeCommand{0, clip_motion(kRun), duration, false}));
  for (uint64_t k = 0; k < 30; ++k) {
    w.world.tick();
    const int64_t now = tick_start_us(k, 60);
    std::vector<Transform> expected = sample(w.rig(), kWalk, now % walk_us(w));
    if (k >= 6) {
      const int64_t elapsed = now - tick_start_us(6, 60);
      const std::vector<Transform> run = sample(w.rig(), kRun, elapsed % run_us(w));
      const float alpha = elapsed >= duration
                              ? 1.0f
                              : static_cast<float>(static_cast<double>(elapsed) / static_cast<double>(duration));
      ASSERT_TRUE((OverrideBlendJob{expected, run, alpha, {}}.Run()));
      const Layer& layer = w.world.find_entity(1)->layers[0];
      if (elapsed + tick_duration_us(k, 60) >= duration) {
        EXPECT_EQ(layer.fade_source, FadeSource::kNone) << "tick " << k;
      } else {
        EXPECT_EQ(layer.fade_source, FadeSource::kMotion) << "tick " << k;
        EXPECT_EQ(layer.fade_elapsed_us, elapsed + tick_duration_us(k, 60));
      }
    }
    EXPECT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), expected))) << "tick " << k;
  }
}

TEST(Animator, PhaseSyncedCrossfadeStartsTheTargetAtTheSourcesNormalisedTime) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 250000)}));
  w.world.submit(0, at(3, 1, CrossfadeCommand{0, clip_motion(kRun, 2 * kSpeedOne, 123456), 300000, true}));
  w.run_to(3);
  const int64_t walk_phase = w.world.find_entity(1)->layers[0].target.slots[0].phase;
  w.world.tick();  // applies the crossfade at tick 3, then advances one tick
  const Layer& layer = w.world.find_entity(1)->layers[0];
  const int64_t walk_cycle = cycle_length(walk_us(w), WrapMode::kLoop);
  const int64_t run_cycle = cycle_length(run_us(w), WrapMode::kLoop);
  const int64_t synced = rescale_phase(walk_phase, walk_cycle, run_cycle);
  EXPECT_NEAR(static_cast<double>(synced) / static_cast<double>(run_cycle),
              static_cast<double>(walk_phase) / static_cast<double>(walk_cycle), 1e-9);
  const int64_t dt = tick_duration_us(3, 60);
  EXPECT_EQ(layer.target.slots[0].phase, advance_phase(synced, dt, 2 * kSpeedOne, run_us(w), WrapMode::kLoop));
  EXPECT_EQ(layer.source.slots[0].phase, advance_phase(walk_phase, dt, kSpeedOne, walk_us(w), WrapMode::kLoop));
}

TEST(Animator, CrossfadeInterruptedByAnotherCrossfadeDoesNotPop) {
  // Two worlds run the same fade walk -> run; one is interrupted at tick 20 by a fade to wave.
  TestWorld plain, interrupted;
  for (TestWorld* w : {&plain, &interrupted}) {
    w->spawn(1);
    w->world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
    w->world.submit(0, at(10, 1, CrossfadeCommand{0, clip_motion(kRun), 500000, false}));
  }
  interrupted.world.submit(0, at(20, 1, CrossfadeCommand{0, clip_motion(kWave), 250000, false}));
  plain.run_to(20);
  interrupted.run_to(20);
  const std::vector<Transform> before = interrupted.local_pose(1);
  plain.world.tick();
  interrupted.world.tick();
  // The interrupting tick shows exactly the pose the old fade would have shown...
  EXPECT_TRUE(same_bits(interrupted.world.palette(1), plain.world.palette(1)));
  const Layer& layer = interrupted.world.find_entity(1)->layers[0];
  ASSERT_EQ(layer.fade_source, FadeSource::kFrozenPose);
  for (std::size_t n = 0; n < before.size(); ++n) EXPECT_TRUE(same_bits(layer.frozen[n], before[n])) << n;
  // ...and then moves away from it smoothly, reaching the new target when the fade ends.
  std::vector<Transform> previous = before;
  for (int k = 0; k < 16; ++k) {
    const std::vector<Transform> now = interrupted.local_pose(1);
    for (std::size_t n = 0; n < now.size(); ++n) {
      EXPECT_LT(glm::length(now[n].translation - previous[n].translation), 0.25f) << "node " << n;
      const float dot = std::fabs(now[n].rotation.w * previous[n].rotation.w + now[n].rotation.x * previous[n].rotation.x +
                                  now[n].rotation.y * previous[n].rotation.y + now[n].rotation.z * previous[n].rotation.z);
      EXPECT_GT(dot, 0.98f) << "node " << n << " step " << k;  // under ~16 degrees per tick
    }
    previous = now;
    interrupted.world.tick();
  }
  EXPECT_EQ(interrupted.world.find_entity(1)->layers[0].fade_source, FadeSource::kNone);
}

TEST(Animator, CrossfadeFromNothingFadesInFromTheRestPose) {
  // Entity 1 fades in walk over 100 ms; entity 2 plays walk from the same tick: its pose is
  // the fade's target at every tick.
  TestWorld w;
  w.spawn(1);
  w.spawn(2);
  w.world.submit(0, at(0, 1, CrossfadeCommand{0, clip_motion(kWalk), 100000, false}));
  w.world.submit(0, at(0, 2, PlayCommand{0, clip_motion(kWalk)}));
  w.world.tick();
  EXPECT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), w.rig().skeleton.rest)));
  const std::vector<Transform>& rest = w.rig().skeleton.rest;
  auto angle = [](const glm::quat& a, const glm::quat& b) {
    const float dot = std::fabs(a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z);
    return 2.0f * std::acos(std::min(dot, 1.0f));
  };
  // During the fade, each rotated node has covered a growing share of the way from rest to
  // the target's rotation (the target itself moves: the share, not the distance, must grow).
  // local_pose() before a tick is the pose that tick shows.
  std::vector<float> covered(rest.size(), 0.0f);
  int blended_ticks = 0;
  for (;;) {
    ASSERT_LT(blended_ticks, 10) << "the fade never reached the target";
    const std::vector<Transform> pose = w.local_pose(1);
    const std::vector<Transform> target = w.local_pose(2);
    w.world.tick();
    ASSERT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), pose))) << "tick " << blended_ticks + 1;
    if (same_bits(w.world.palette(1), w.world.palette(2))) break;  // the fade is over
    ++blended_ticks;
    std::size_t measured = 0;
    for (std::size_t n = 0; n < rest.size(); ++n) {
      const float total = angle(rest[n].rotation, target[n].rotation);
      if (total < 0.05f) continue;  // too close to rest for a meaningful share
      ++measured;
      const float share = 1.0f - angle(pose[n].rotation, target[n].rotation) / total;
      EXPECT_GT(share, covered[n]) << "node " << n << " tick " << blended_ticks;
      covered[n] = share;
    }
    EXPECT_GT(measured, 0u) << "tick " << blended_ticks;
  }
  // 100 ms at 60 Hz: ticks 1 to 5 blend (weights 1/6 to 5/6), tick 6 shows the target.
  EXPECT_EQ(blended_ticks, 5);
  EXPECT_EQ(w.world.find_entity(1)->layers[0].fade_source, FadeSource::kNone);
  // Fade over: exactly the target clip's pose, on later ticks too.
  for (int k = 0; k < 3; ++k) {
    w.world.tick();
    EXPECT_TRUE(same_bits(w.world.palette(1), w.world.palette(2))) << "tick " << w.world.tick_index();
  }
}

TEST(Animator, AdditiveLayerEqualToItsReferenceLeavesThePoseUnchanged) {
  TestWorld w;
  for (EntityId id : {1u, 2u}) {
    w.spawn(id);
    w.world.submit(0, at(0, id, PlayCommand{0, clip_motion(kWalk)}));
  }
  // Entity 2: an additive layer playing wave frozen at 0.7 s, relative to wave at 0.7 s.
  w.world.submit(0, at(0, 2, SetLayerModeCommand{1, LayerMode::kAdditive, kWave, 700000}));
  w.world.submit(0, at(0, 2, PlayCommand{1, clip_motion(kWave, 0, 700000, WrapMode::kClamp)}));
  for (int k = 0; k < 40; ++k) {
    w.world.tick();
    ASSERT_TRUE(same_bits(w.world.palette(1), w.world.palette(2))) << "tick " << k;
  }
  EXPECT_EQ(w.world.stats().commands_rejected, 0u) << w.world.stats().last_rejection;
}

TEST(Animator, AdditiveLayerAddsItsDifferenceFromTheReference) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kIdle, 0)}));
  w.world.submit(0, at(0, 1, SetLayerModeCommand{1, LayerMode::kAdditive, kWave, 0}));
  w.world.submit(0, at(0, 1, PlayCommand{1, clip_motion(kWave, 0, 1000000, WrapMode::kClamp)}));
  w.world.tick();
  const std::vector<Transform> pose = w.local_pose(1);
  // The arm's wave rotation goes 10 -> 90 degrees about z from 0 s to 1 s: +80 degrees on top
  // of the idle pose's arm (its rest rotation, -20 degrees).
  const glm::quat expected = axis_angle(0, 0, 1, 60);
  EXPECT_NEAR(pose[3].rotation.z, expected.z, 1e-5f);
  EXPECT_NEAR(pose[3].rotation.w, expected.w, 1e-5f);
}

TEST(Animator, MaskLimitsALayerToItsNodes) {
  TestWorld w;
  const std::vector<std::string> arm = {"arm"};
  Result<std::vector<float>> weights = mask_weights_from_joint_names(w.rig().skeleton, arm, true, 1.0f);
  ASSERT_TRUE(weights.ok());
  EXPECT_EQ(weights.value(), (std::vector<float>{0, 0, 0, 1, 1}));
  Result<int32_t> mask = w.world.add_mask(JointMask{"arm", w.model, 0, weights.value()});
  ASSERT_TRUE(mask.ok());
  for (EntityId id : {1u, 2u, 3u}) {
    w.spawn(id);
    w.world.submit(0, at(0, id, PlayCommand{0, clip_motion(kWalk)}));
  }
  for (EntityId id : {2u, 3u}) w.world.submit(0, at(0, id, PlayCommand{1, clip_motion(kWave)}));
  w.world.submit(0, at(0, 2, SetMaskCommand{1, mask.value()}));
  for (int k = 0; k < 20; ++k) {
    w.world.tick();
    const auto base = w.local_pose(1), masked = w.local_pose(2), full = w.local_pose(3);
    for (std::size_t n = 0; n < 3; ++n) EXPECT_TRUE(same_bits(masked[n], base[n])) << n;
    for (std::size_t n = 3; n < 5; ++n) EXPECT_TRUE(same_bits(masked[n], full[n])) << n;
  }
}

TEST(Animator, MaskOfAnotherModelIsRejected) {
  TestWorld w;
  Result<ModelId> other = w.world.add_model(make_test_model());
  ASSERT_TRUE(other.ok());
  Result<int32_t> mask = w.world.add_mask(JointMask{"m", other.value(), 0, std::vector<float>(5, 1.0f)});
  ASSERT_TRUE(mask.ok());
  w.spawn(1);
  w.world.submit(0, at(0, 1, SetMaskCommand{0, mask.value()}));
  w.world.tick();
  EXPECT_EQ(w.world.stats().commands_rejected, 1u);
  EXPECT_NE(w.world.stats().last_rejection.find("another model"), std::string::npos);
}

TEST(Animator, LoopWrapsWithinATick) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 990000)}));
  w.world.tick();
  EXPECT_EQ(w.world.find_entity(1)->layers[0].target.slots[0].phase, (990000 + 16666 - walk_us(w)) * kUs);
  w.world.tick();
  EXPECT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), sample(w.rig(), kWalk, 16666 - 10000))));
}

TEST(Animator, NegativeSpeedPlaysBackwardsAndWrapsToTheEnd) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, -kSpeedOne / 2)}));
  w.world.tick();
  const int64_t expected_us = walk_us(w) - 16666 / 2;  // 16666 us at -0.5x from 0
  EXPECT_EQ(w.world.find_entity(1)->layers[0].target.slots[0].phase, expected_us * kUs);
  w.world.tick();
  EXPECT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), sample(w.rig(), kWalk, expected_us))));
}

TEST(Animator, BlendWeightsAndSpeedCommandsChangeOnlyTheTarget) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, blend_motion(kWalk, 1.0f, kRun, 0.0f)}));
  w.world.submit(0, at(1, 1, SetBlendWeightsCommand{0, {0.25f, 0.75f, 0, 0}, 2}));
  w.world.submit(0, at(1, 1, SetSpeedCommand{0, 3 * kSpeedOne}));
  w.world.submit(0, at(1, 1, SetBlendWeightsCommand{0, {1, 1, 1, 0}, 3}));  // wrong count
  w.world.tick();
  EXPECT_TRUE(same_bits(w.world.palette(1), palette_of(w.rig(), sample(w.rig(), kWalk, 0))));
  w.world.tick();
  const Motion& m = w.world.find_entity(1)->layers[0].target;
  EXPECT_EQ(m.slots[0].weight, 0.25f);
  EXPECT_EQ(m.slots[1].weight, 0.75f);
  EXPECT_EQ(m.speed, 3 * kSpeedOne);
  EXPECT_EQ(w.world.stats().commands_rejected, 1u);
}

TEST(Animator, LayerWeightZeroHidesTheLayerAndHalfMixes) {
  TestWorld w;
  for (EntityId id : {1u, 2u, 3u}) {
    w.spawn(id);
    w.world.submit(0, at(0, id, PlayCommand{0, clip_motion(kWalk)}));
  }
  for (EntityId id : {2u, 3u}) w.world.submit(0, at(0, id, PlayCommand{1, clip_motion(kWave)}));
  w.world.submit(0, at(0, 2, SetLayerWeightCommand{1, 0.0f}));
  w.world.submit(0, at(0, 3, SetLayerWeightCommand{1, 0.5f}));
  w.world.tick();
  EXPECT_TRUE(same_bits(w.world.palette(1), w.world.palette(2)));
  EXPECT_FALSE(same_bits(w.world.palette(1), w.world.palette(3)));
}

TEST(CommandOrder, SameTickCommandsApplyBySubmitterThenSequenceWhateverTheThreadTiming) {
  for (int round = 0; round < 20; ++round) {
    TestWorld w;
    w.spawn(1);
    w.world.tick();
    std::atomic<bool> go{false};
    // Submitter 2 plays run, submitter 1 plays wave, both for tick 1, racing each other:
    // submitter 1 applies first, so run (submitter 2) is what plays.
    std::thread a([&] {
      while (!go) std::this_thread::yield();
      w.world.submit(2, at(1, 1, PlayCommand{0, clip_motion(kRun)}));
    });
    std::thread b([&] {
      while (!go) std::this_thread::yield();
      w.world.submit(1, at(1, 1, PlayCommand{0, clip_motion(kWave)}));
    });
    go = true;
    a.join();
    b.join();
    w.world.tick();
    EXPECT_EQ(w.world.find_entity(1)->layers[0].target.slots[0].clip, kRun) << "round " << round;
  }
}

TEST(CommandOrder, OneSubmittersCommandsApplyInTheOrderItQueuedThem) {
  TestWorld w;
  for (EntityId id : {1u, 2u}) w.spawn(id);
  // Entity 1: play then set_speed -> speed 2. Entity 2: set_speed then play -> play's speed 1.
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
  w.world.submit(0, at(0, 1, SetSpeedCommand{0, 2 * kSpeedOne}));
  w.world.submit(0, at(0, 2, SetSpeedCommand{0, 2 * kSpeedOne}));
  w.world.submit(0, at(0, 2, PlayCommand{0, clip_motion(kWalk)}));
  w.world.tick();
  EXPECT_EQ(w.world.find_entity(1)->layers[0].target.speed, 2 * kSpeedOne);
  EXPECT_EQ(w.world.find_entity(2)->layers[0].target.speed, kSpeedOne);
}

TEST(CommandOrder, FutureCommandsWaitForTheirTickAndLateOnesApplyAtTheNext) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(5, 1, PlayCommand{0, clip_motion(kRun)}));
  w.run_to(5);
  EXPECT_TRUE(w.world.find_entity(1)->layers.empty());
  EXPECT_EQ(w.world.pending_commands(), 1u);
  w.world.tick();
  EXPECT_EQ(w.world.find_entity(1)->layers[0].target.slots[0].clip, kRun);
  w.world.submit(0, at(2, 1, PlayCommand{0, clip_motion(kWave)}));  // tick 2 has passed
  w.world.tick();
  EXPECT_EQ(w.world.find_entity(1)->layers[0].target.slots[0].clip, kWave);
  EXPECT_EQ(w.world.stats().commands_late, 1u);
}

TEST(CommandOrder, InvalidCommandsAreRejectedWithAReasonAndChangeNothing) {
  TestWorld w;
  w.spawn(1);
  w.spawn(1);                                                                  // duplicate
  w.world.submit(0, at(0, 9, PlayCommand{0, clip_motion(kWalk)}));            // no entity
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(77)}));               // no clip
  w.world.submit(0, at(0, 1, PlayCommand{kMaxLayers, clip_motion(kWalk)}));   // no layer
  w.world.submit(0, at(0, 1, CrossfadeCommand{0, clip_motion(kWalk), -5, false}));
  w.world.submit(0, at(0, 1, SpawnCommand{42, 0, {}}));  // entity exists anyway
  w.world.submit(0, at(0, 2, SpawnCommand{42, 0, {}}));  // unknown model
  w.world.submit(0, at(0, 1, SetLayerModeCommand{0, LayerMode::kAdditive, 99, 0}));
  w.world.tick();
  EXPECT_EQ(w.world.stats().commands_rejected, 8u);
  EXPECT_EQ(w.world.entity_count(), 1u);
  EXPECT_TRUE(w.world.find_entity(1)->layers.empty() ||
              w.world.find_entity(1)->layers[0].target.count == 0);
}

TEST(Animator, DespawnRemovesTheEntityAndItsIdCanBeReused) {
  TestWorld w;
  w.spawn(1);
  w.spawn(2);
  w.world.submit(0, at(3, 1, DespawnCommand{}));
  w.spawn(1, 5);
  w.run_to(4);
  EXPECT_EQ(w.world.entity_count(), 1u);
  EXPECT_TRUE(w.world.palette(1).empty());
  w.run_to(6);
  EXPECT_EQ(w.world.entity_count(), 2u);
  EXPECT_EQ(w.world.entity_id_at(0), 1u);
}

// What a mirror of the id list (the server's) relies on: the version moves exactly when
// entities come or go or the world is restored.
TEST(Animator, MembershipVersionChangesOnlyWhenEntitiesComeOrGo) {
  TestWorld w;
  uint64_t version = w.world.membership_version();
  w.spawn(1);
  w.world.tick();
  EXPECT_NE(w.world.membership_version(), version);
  version = w.world.membership_version();
  w.world.submit(0, at(1, 1, PlayCommand{0, clip_motion(kWalk)}));
  w.world.submit(0, at(1, 1, SpawnCommand{0, 0, {}}));  // rejected: entity 1 exists
  w.world.tick();
  w.world.tick();
  EXPECT_EQ(w.world.membership_version(), version);
  const std::vector<uint8_t> one_entity = w.world.snapshot();
  w.world.submit(0, at(3, 1, DespawnCommand{}));
  w.world.tick();
  EXPECT_NE(w.world.membership_version(), version);
  version = w.world.membership_version();
  ASSERT_TRUE(w.world.restore(one_entity));
  EXPECT_NE(w.world.membership_version(), version);
  EXPECT_EQ(w.world.entity_count(), 1u);
  ASSERT_NE(w.world.entity_at(0), nullptr);
  EXPECT_EQ(w.world.entity_at(0), w.world.find_entity(1));
  EXPECT_EQ(w.world.entity_at(1), nullptr);
}

TEST(Animator, PerEntityStateOfATwoClipBlendIsSmall) {
  TestWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, blend_motion(kWalk, 0.5f, kRun, 0.5f)}));
  w.world.tick();
  EXPECT_LE(w.world.find_entity(1)->byte_size(), 1024u);
}

}  // namespace
}  // namespace posecast::test
