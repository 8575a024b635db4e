// Animation events (docs/events.md): the World emits each marker crossing once, with its tick,
// for clips at or above the weight threshold, across loops, ping-pong, clamp, reverse speed,
// seeks, blends and crossfades; the events join the world hash.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "evaluator.h"
#include "sim_test_support.h"

namespace posecast::test {
namespace {

// The test rig with markers: walk (1 s) and run (0.6 s) footsteps at 0 and half the cycle,
// wave (2 s) a marker at its very end.
std::shared_ptr<const Model> marked_model() {
  auto model = std::make_shared<Model>(*make_test_model());
  Rig& rig = model->rigs[0];
  rig.clips[kWalk].markers = {{"step_l", 0, 0}, {"step_r", 500000, 20000}};
  rig.clips[kRun].markers = {{"step_l", 0, 0}, {"step_r", 300000, 0}};
  rig.clips[kWave].markers = {{"peak", 2000000, 0}};
  return model;
}

struct Fired {
  uint64_t tick;
  EntityId entity;
  std::string clip, marker;
  float weight;
};

struct EventWorld {
  explicit EventWorld(unsigned threads = 1) : world(WorldOptions{60, threads, true}) {
    EXPECT_TRUE(world.add_model(marked_model()).ok());
  }
  const Rig& rig() const { return world.model(0)->rigs[0]; }
  void spawn(EntityId id) { world.submit(0, at(0, id, SpawnCommand{0, 0, {}})); }
  // Runs to `tick`, gathering every event.
  void run_to(uint64_t tick, bool fast = false) {
    while (world.tick_index() < tick) {
      fast ? world.fast_forward_tick() : world.tick();
      for (const AnimationEvent& e : world.last_tick_events()) {
        EXPECT_EQ(e.tick, world.tick_index() - 1);
        const Clip& clip = rig().clips[e.clip];
        fired.push_back(Fired{e.tick, e.entity, clip.name, clip.markers[e.marker].name, e.weight});
      }
    }
  }
  std::vector<uint64_t> ticks_of(const std::string& clip, const std::string& marker) const {
    std::vector<uint64_t> out;
    for (const Fired& f : fired)
      if (f.clip == clip && f.marker == marker) out.push_back(f.tick);
    return out;
  }
  World world;
  std::vector<Fired> fired;
};

using Ticks = std::vector<uint64_t>;

TEST(Events, LoopFiresEachMarkerOncePerCycleAtTheTickThatReachesIt) {
  EventWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
  w.run_to(180);  // 3 s at 60 Hz: tick k covers clip time [k/60, (k+1)/60)
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{0, 60, 120}));
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{30, 90, 150}));
  EXPECT_EQ(w.fired.size(), 6u);
}

TEST(Events, ReverseSpeedFiresOnTheWayBack) {
  EventWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, -kSpeedOne, 900000)}));
  w.run_to(120);  // clip time 0.9 down to -1.1 (wrapped): 0.5 at 0.4 s and 1.4 s, 0 at 0.9 s
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{24, 84}));  // (from - dt, from]: 0.5 at t = 0.4
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{54, 114}));
}

TEST(Events, PingPongFiresAtTheTurnOnceAndMidMarkersBothWays) {
  EventWorld w;
  w.spawn(1);
  w.spawn(2);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 0, WrapMode::kPingPong)}));
  w.world.submit(0, at(0, 2, PlayCommand{0, clip_motion(kWave, kSpeedOne, 0, WrapMode::kPingPong)}));
  w.run_to(240);  // 4 s: walk turns at 1 s and 2 s (period 2 s), wave at 2 s
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{0, 120}));
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{30, 90, 150, 210}));
  EXPECT_EQ(w.ticks_of("wave", "peak"), (Ticks{120}));
}

TEST(Events, ClampFiresOnceAndAMarkerAtTheEndWhenItIsReached) {
  EventWorld w;
  w.spawn(1);
  w.spawn(2);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 0, WrapMode::kClamp)}));
  w.world.submit(0, at(0, 2, PlayCommand{0, clip_motion(kWave, kSpeedOne, 0, WrapMode::kClamp)}));
  w.run_to(300);
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{0}));
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{30}));
  EXPECT_EQ(w.ticks_of("wave", "peak"), (Ticks{119}));  // the tick whose advance reaches 2 s
}

TEST(Events, SeeksDoNotFireWhatTheyJumpOverNorRepeatWhatFired) {
  EventWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 100000)}));
  // At tick 12 (clip time 0.3) jump to 0.8: step_r at 0.5 is skipped.
  w.world.submit(0, at(12, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 800000)}));
  // At tick 30 (clip time 0.8 + 18/60 = 1.1 -> 0.1) jump back to 0.05: nothing fires twice.
  w.world.submit(0, at(30, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 50000)}));
  w.run_to(60);
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{24}));
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{57}));
}

TEST(Events, SpeedScalesTheRateAndAClipShorterThanATickFiresOncePerTick) {
  EventWorld w;
  w.spawn(1);
  w.spawn(2);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, 2 * kSpeedOne)}));
  w.world.submit(0, at(0, 2, PlayCommand{0, clip_motion(kRun, 100 * kSpeedOne)}));  // 1.67 loops a tick
  w.run_to(60);
  std::size_t walk = 0, run = 0;
  for (const Fired& f : w.fired) (f.clip == "walk" ? walk : run) += 1;
  EXPECT_EQ(walk, 4u);
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{15, 45}));
  EXPECT_EQ(run, 120u);  // both markers, every tick, once each
}

TEST(Events, BlendsFireOnlyClipsAtHalfThePoseOrMore) {
  EventWorld w;
  w.spawn(1);
  w.spawn(2);
  w.world.submit(0, at(0, 1, PlayCommand{0, blend_motion(kWalk, 0.6f, kRun, 0.4f)}));
  w.world.submit(0, at(0, 2, PlayCommand{0, blend_motion(kWalk, 1.0f, kRun, 1.0f)}));
  w.run_to(60);
  for (const Fired& f : w.fired) {
    if (f.entity == 1) {
      EXPECT_EQ(f.clip, "walk");
    }
    EXPECT_GE(f.weight, kEventWeightThreshold);
  }
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{0, 0}));  // both entities
  EXPECT_EQ(w.ticks_of("run", "step_r").size(), 2u);       // entity 2's run, at 0.3 and 0.9 s
}

TEST(Events, LayerWeightBelowTheThresholdFiresNothing) {
  EventWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{1, clip_motion(kWalk)}));
  w.world.submit(0, at(0, 1, SetLayerWeightCommand{1, 0.4f}));
  w.world.submit(0, at(30, 1, SetLayerWeightCommand{1, 0.5f}));
  w.run_to(120);
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{60}));      // not tick 0 (weight 0.4)
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{30, 90}));  // weight 0.5 from tick 30
}

TEST(Events, CrossfadeHandsTheMarkersOverAtItsMidpoint) {
  EventWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
  // A 1 s fade from tick 6: walk fires while 1 - alpha >= 0.5 (ticks 6..36), run after.
  w.world.submit(0, at(6, 1, CrossfadeCommand{0, clip_motion(kRun), 1000000, false}));
  w.run_to(120);
  for (const Fired& f : w.fired) {
    EXPECT_GE(f.weight, kEventWeightThreshold);
    if (f.clip == "walk") {
      EXPECT_LE(f.tick, 36u);
    }
    if (f.clip == "run") {
      EXPECT_GE(f.tick, 36u);
    }
  }
  EXPECT_EQ(w.ticks_of("walk", "step_l"), (Ticks{0}));
  EXPECT_EQ(w.ticks_of("walk", "step_r"), (Ticks{30}));
  // run started at tick 6 (run time 0 there): 0.6 s cycles, the first half unheard.
  EXPECT_EQ(w.ticks_of("run", "step_l"), (Ticks{42, 78, 114}));
  EXPECT_EQ(w.ticks_of("run", "step_r"), (Ticks{60, 96}));
}

TEST(Events, PhaseSyncedBlendsFireTheFollowersMarkersOnce) {
  EventWorld w;
  w.spawn(1);
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
  // Synced fade: run follows walk's normalised phase; after the fade run leads.
  w.world.submit(0, at(10, 1, CrossfadeCommand{0, clip_motion(kRun), 100000, true}));
  w.run_to(240);
  const Ticks left = w.ticks_of("run", "step_l"), right = w.ticks_of("run", "step_r");
  // 0.6 s cycles from tick 10 on, started at walk's normalised phase 10/60.
  ASSERT_GE(left.size(), 6u);
  ASSERT_GE(right.size(), 6u);
  for (std::size_t i = 1; i < left.size(); ++i) EXPECT_NEAR(static_cast<double>(left[i] - left[i - 1]), 36.0, 1.0);
  for (std::size_t i = 1; i < right.size(); ++i) EXPECT_NEAR(static_cast<double>(right[i] - right[i - 1]), 36.0, 1.0);
}

TEST(Events, FastForwardEmitsWhatTickEmitsAndThreadsChangeNothing) {
  EventWorld one(1), two(2), fast(1);
  for (EventWorld* w : {&one, &two, &fast}) {
    for (EntityId id = 1; id <= 40; ++id) {
      w->spawn(id);
      w->world.submit(0, at(0, id, PlayCommand{0, clip_motion(id % 2 ? kWalk : kRun, kSpeedOne, id * 7919)}));
    }
  }
  std::vector<uint64_t> hashes_one, hashes_two;
  for (uint64_t t = 0; t < 90; ++t) {
    one.run_to(t + 1);
    two.run_to(t + 1);
    hashes_one.push_back(one.world.world_hash());
    hashes_two.push_back(two.world.world_hash());
  }
  fast.run_to(90, /*fast=*/true);
  EXPECT_EQ(hashes_one, hashes_two);
  ASSERT_EQ(one.fired.size(), two.fired.size());
  ASSERT_EQ(one.fired.size(), fast.fired.size());
  for (std::size_t i = 0; i < one.fired.size(); ++i) {
    EXPECT_EQ(one.fired[i].entity, two.fired[i].entity);
    EXPECT_EQ(one.fired[i].entity, fast.fired[i].entity);
    EXPECT_EQ(one.fired[i].tick, fast.fired[i].tick);
    EXPECT_EQ(one.fired[i].marker, fast.fired[i].marker);
  }
  // Entity order within each tick.
  for (std::size_t i = 1; i < one.fired.size(); ++i)
    if (one.fired[i].tick == one.fired[i - 1].tick) {
      EXPECT_LE(one.fired[i - 1].entity, one.fired[i].entity);
    }
}

TEST(Events, EventsJoinTheWorldHashOnlyOnTicksThatHaveThem) {
  World plain(WorldOptions{60, 1, true}), marked(WorldOptions{60, 1, true});
  ASSERT_TRUE(plain.add_model(make_test_model()).ok());
  ASSERT_TRUE(marked.add_model(marked_model()).ok());
  for (World* w : {&plain, &marked}) {
    w->submit(0, at(0, 1, SpawnCommand{0, 0, {}}));
    w->submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk, kSpeedOne, 100000)}));
  }
  for (uint64_t t = 0; t < 60; ++t) {
    plain.tick();
    marked.tick();
    const bool events = !marked.last_tick_events().empty();
    EXPECT_EQ(events, t == 24 || t == 54) << t;
    EXPECT_EQ(plain.world_hash() != marked.world_hash(), events) << t;
    EXPECT_EQ(marked.world_hash_of_palettes(), marked.world_hash());
  }
}

TEST(Events, EventsCarryTheRootTheTickShows) {
  EventWorld w;
  w.world.submit(0, at(0, 1, SpawnCommand{0, 0, RootTransform{3.0f, 0.0f, -2.0f, 0.0f}}));
  w.world.submit(0, at(0, 1, PlayCommand{0, clip_motion(kWalk)}));
  w.world.tick();
  ASSERT_EQ(w.world.last_tick_events().size(), 1u);
  EXPECT_EQ(w.world.last_tick_events()[0].x, 3.0f);
  EXPECT_EQ(w.world.last_tick_events()[0].z, -2.0f);
}

TEST(MarkerCrossings, HalfOpenForwardsAndBackwardsInMeetingOrder) {
  Clip clip;
  clip.duration_us = 1000;
  clip.markers = {{"a", 0, 0}, {"b", 250, 0}, {"c", 1000, 0}};
  constexpr int64_t kPhaseUs = int64_t{1} << kPhaseFractionBits;
  std::array<uint16_t, kMaxClipMarkers> out{};
  const auto cross = [&](WrapMode wrap, int64_t from_us, int64_t delta_us) {
    const std::size_t n = find_marker_crossings(clip, wrap, from_us * kPhaseUs, delta_us * kPhaseUs, out);
    return std::vector<uint16_t>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
  };
  using V = std::vector<uint16_t>;
  EXPECT_EQ(cross(WrapMode::kLoop, 0, 100), (V{0, 2}));   // "c" at the end is the loop's start
  EXPECT_EQ(cross(WrapMode::kLoop, 100, 150), V{});       // [100, 250)
  EXPECT_EQ(cross(WrapMode::kLoop, 100, 151), V{1});
  EXPECT_EQ(cross(WrapMode::kLoop, 900, 400), (V{0, 2, 1}));  // wraps: 0 (=1000) then 250
  EXPECT_EQ(cross(WrapMode::kLoop, 250, -10), V{1});      // (240, 250]
  EXPECT_EQ(cross(WrapMode::kLoop, 100, -200), (V{0, 2}));
  EXPECT_EQ(cross(WrapMode::kLoop, 0, 5000), (V{0, 2, 1}));  // many loops: once each
  EXPECT_EQ(cross(WrapMode::kClamp, 900, 400), V{2});     // reaches the end
  EXPECT_EQ(cross(WrapMode::kClamp, 1000, 400), V{});     // holds there
  EXPECT_EQ(cross(WrapMode::kClamp, 100, -400), V{0});    // reaches the start
  EXPECT_EQ(cross(WrapMode::kPingPong, 900, 200), V{2});  // the turn at 1000
  EXPECT_EQ(cross(WrapMode::kPingPong, 1700, 100), V{1}); // 1750 = 250 on the way back
  EXPECT_EQ(cross(WrapMode::kLoop, 0, 0), V{});
}

}  // namespace
}  // namespace posecast::test
