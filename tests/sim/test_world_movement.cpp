// Root transforms in the World: spawn positions, teleports, root motion of travelling and
// in-place clips, locomotion (move, move_to, queued waypoints), refusals of bad input, and the
// transform's place in snapshots, fast-forward and the world hash.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "posecast/gltf_import.h"
#include "posecast/local_to_model.h"
#include "posecast/rig/model_source.h"
#include "posecast/root_motion.h"
#include "posecast/sim/scenario.h"
#include "posecast/sim/world.h"
#include "sim_test_support.h"

namespace posecast::test {
namespace {

std::shared_ptr<const Model> load(const std::string& source) {
  Result<Model> model = rig::load_model_source(source);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return std::make_shared<const Model>(std::move(model).value());
}

// A world of one generated rig ("gen-rig:24:travel" unless told).
struct MoveWorld {
  explicit MoveWorld(const std::string& source = "gen-rig:24:travel") : MoveWorld(load(source)) {}
  explicit MoveWorld(std::shared_ptr<const Model> model) {
    Result<ModelId> id = world.add_model(std::move(model));
    EXPECT_TRUE(id.ok());
  }
  const Rig& rig() const { return world.model(0)->rigs[0]; }
  uint16_t clip(LocomotionRole role) const {
    return static_cast<uint16_t>(rig().motion_config.locomotion_clips[static_cast<std::size_t>(role)]);
  }
  float ground_speed(LocomotionRole role) const { return rig().root_motion[clip(role)].ground_speed; }
  void submit(uint64_t tick, EntityId id, CommandBody body) { world.submit(0, at(tick, id, std::move(body))); }
  void spawn(EntityId id, RootTransform where = {}) { submit(world.tick_index(), id, SpawnCommand{0, 0, where}); }
  void run(int ticks) {
    for (int i = 0; i < ticks; ++i) world.tick();
  }
  const RootTransform& root(EntityId id) const { return world.find_entity(id)->root; }
  World world;
};

float distance(const RootTransform& a, float x, float z) {
  return std::sqrt((a.x - x) * (a.x - x) + (a.z - z) * (a.z - z));
}

bool same_root(const RootTransform& a, const RootTransform& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(WorldMovement, SpawnsWhereToldAndTeleports) {
  MoveWorld w;
  w.spawn(1, RootTransform{3.0f, 0.0f, -4.0f, 7.0f});
  w.run(1);
  EXPECT_EQ(w.root(1).x, 3.0f);
  EXPECT_EQ(w.root(1).z, -4.0f);
  EXPECT_NEAR(w.root(1).yaw, 7.0f - 6.2831853f, 1e-5f);  // wrapped into [-pi, pi)
  w.submit(1, 1, TeleportCommand{-100.0f, 50.0f, -0.5f});
  w.run(1);
  EXPECT_EQ(w.root(1).x, -100.0f);
  EXPECT_EQ(w.root(1).z, 50.0f);
  EXPECT_EQ(w.root(1).yaw, -0.5f);
}

TEST(WorldMovement, RefusesBadPlacesAndSpeedsAndCountsThem) {
  MoveWorld w;
  w.spawn(1);
  w.run(1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const RootTransform before = w.root(1);
  const uint64_t rejected = w.world.stats().commands_rejected;
  const CommandBody bad[] = {
      TeleportCommand{nan, 0.0f, 0.0f},         TeleportCommand{0.0f, kWorldHalfExtent * 2, 0.0f},
      TeleportCommand{0.0f, 0.0f, inf},         MoveCommand{nan, 0.0f},
      MoveCommand{-1.0f, 0.0f},                 MoveCommand{kMaxMoveSpeed * 2, 0.0f},
      MoveCommand{1.0f, kMaxTurnRate * 2},      MoveToCommand{nan, 0.0f, 1.0f, false},
      MoveToCommand{0.0f, -kWorldHalfExtent * 2, 1.0f, false}, MoveToCommand{1.0f, 1.0f, 0.0f, false},
      MoveToCommand{1.0f, 1.0f, inf, false},
  };
  for (const CommandBody& body : bad) w.submit(1, 1, body);
  w.submit(1, 99, MoveCommand{1.0f, 0.0f});  // no such entity
  w.submit(1, 2, SpawnCommand{0, 0, RootTransform{0.0f, 1.0f, 0.0f, 0.0f}});  // y must be 0
  w.submit(1, 3, SpawnCommand{0, 0, RootTransform{nan, 0.0f, 0.0f, 0.0f}});
  w.run(1);
  EXPECT_EQ(w.world.stats().commands_rejected - rejected, std::size(bad) + 3);
  EXPECT_TRUE(same_root(w.root(1), before));
  EXPECT_EQ(w.world.find_entity(1)->locomotion.mode, LocomotionMode::kNone);
  EXPECT_EQ(w.world.find_entity(2), nullptr);
  EXPECT_EQ(w.world.find_entity(3), nullptr);
}

TEST(WorldMovement, RefusesLocomotionForARigWithoutAWalkClip) {
  TestWorld t;  // the test rig: clips without locomotion roles
  t.spawn(1);
  t.world.submit(0, at(0, 1, MoveCommand{1.0f, 0.0f}));
  t.world.tick();
  EXPECT_EQ(t.world.stats().commands_rejected, 1u);
  EXPECT_NE(t.world.stats().last_rejection.find("no walk clip"), std::string::npos)
      << t.world.stats().last_rejection;
}

// A travelling walk played at rate 1 for one loop moves the entity by the clip's own travel
// (its ground speed times its length) along its facing; with root motion off it stays.
TEST(WorldMovement, TravellingClipMovesByItsRootMotion) {
  MoveWorld w;
  const uint16_t walk = w.clip(LocomotionRole::kWalk);
  const float speed = w.ground_speed(LocomotionRole::kWalk);
  const float length_s = static_cast<float>(w.rig().clips[walk].duration_us) / 1e6f;
  w.spawn(1, RootTransform{0.0f, 0.0f, 0.0f, 1.5707963f});  // facing +X
  w.spawn(2);
  w.submit(0, 1, PlayCommand{0, clip_motion(walk)});
  MotionSpec off = clip_motion(walk);
  off.root_motion = false;
  w.submit(0, 2, PlayCommand{0, off});
  // 60 ticks at 60 Hz: exactly 1 s of clip time.
  w.run(static_cast<int>(std::lround(length_s * 60.0f)));
  EXPECT_NEAR(w.root(1).x, speed * length_s, 0.01f * speed * length_s);
  EXPECT_NEAR(w.root(1).z, 0.0f, 0.05f * speed * length_s);
  EXPECT_TRUE(same_root(w.root(2), RootTransform{}));
}

// An in-place walk covers its ground speed per second of clip time: at rate 2, twice.
TEST(WorldMovement, InPlaceClipMovesAtItsGroundSpeed) {
  MoveWorld w("gen-rig:24");
  const uint16_t walk = w.clip(LocomotionRole::kWalk);
  const float speed = w.ground_speed(LocomotionRole::kWalk);
  ASSERT_GT(speed, 0.0f);
  w.spawn(1);
  w.submit(0, 1, PlayCommand{0, clip_motion(walk, 2 * kSpeedOne)});
  w.run(120);  // 2 s
  EXPECT_NEAR(w.root(1).z, 4.0f * speed, 0.002f * speed);
  EXPECT_EQ(w.root(1).x, 0.0f);
}

// An entity with one plain layer takes the advance's short path; one with a second layer the
// general loop. Layer 0 alone moves the root, so both land on the same bits, through loop wraps,
// at any speed and backwards.
TEST(WorldMovement, OneLayerAdvanceMatchesTheGeneralOne) {
  MoveWorld w("gen-rig:24");
  const uint16_t walk = w.clip(LocomotionRole::kWalk);
  const uint16_t run = w.clip(LocomotionRole::kRun);
  for (const SpeedQ16 speed : {kSpeedOne * 13 / 10, -kSpeedOne * 7 / 10, kSpeedOne * 5}) {
    const EntityId plain = static_cast<EntityId>(2 * (speed & 0xFF) + 10), layered = plain + 1;
    w.spawn(plain);
    w.spawn(layered);
    w.submit(w.world.tick_index(), plain, PlayCommand{0, clip_motion(walk, speed, 123456)});
    w.submit(w.world.tick_index(), layered, PlayCommand{0, clip_motion(walk, speed, 123456)});
    w.submit(w.world.tick_index(), layered, PlayCommand{1, clip_motion(run)});
  }
  w.run(300);
  for (const SpeedQ16 speed : {kSpeedOne * 13 / 10, -kSpeedOne * 7 / 10, kSpeedOne * 5}) {
    const EntityId plain = static_cast<EntityId>(2 * (speed & 0xFF) + 10), layered = plain + 1;
    const EntityState& a = *w.world.find_entity(plain);
    const EntityState& b = *w.world.find_entity(layered);
    EXPECT_TRUE(same_root(a.root, b.root)) << speed;
    EXPECT_NE(a.root.z, 0.0f) << speed;
    EXPECT_EQ(a.layers[0].target.slots[0].phase, b.layers[0].target.slots[0].phase) << speed;
  }
}

// Move blends idle, walk and run by speed, phase-synced, and covers the commanded speed.
TEST(WorldMovement, MoveCoversTheCommandedSpeedAtAnySpeed) {
  MoveWorld w;
  const float walk = w.ground_speed(LocomotionRole::kWalk);
  const float run = w.ground_speed(LocomotionRole::kRun);
  const float speeds[] = {0.5f * walk, walk, 0.5f * (walk + run), run, 1.3f * run};
  for (std::size_t i = 0; i < std::size(speeds); ++i) {
    w.spawn(static_cast<EntityId>(i + 1), RootTransform{static_cast<float>(i) * 10.0f, 0.0f, 0.0f, 0.0f});
    w.submit(0, static_cast<EntityId>(i + 1), MoveCommand{speeds[i], 0.0f});
  }
  w.run(60);  // through the 200 ms crossfade into locomotion
  float start[std::size(speeds)];
  for (std::size_t i = 0; i < std::size(speeds); ++i) start[i] = w.root(static_cast<EntityId>(i + 1)).z;
  w.run(420);  // 7 s: whole strides at every speed within about half a stride
  for (std::size_t i = 0; i < std::size(speeds); ++i) {
    const EntityState& e = *w.world.find_entity(static_cast<EntityId>(i + 1));
    const float covered = e.root.z - start[i];
    EXPECT_NEAR(covered, 7.0f * speeds[i], 0.03f * 7.0f * speeds[i]) << "speed " << speeds[i];
    EXPECT_NEAR(e.root.x, static_cast<float>(i) * 10.0f, 0.05f * 7.0f * speeds[i]);
    EXPECT_EQ(e.layers[0].target.sync, 1);
    // Phase-synced: every slot at the lead's normalised phase.
    const Motion& m = e.layers[0].target;
    const double lead = static_cast<double>(m.slots[0].phase) /
                        static_cast<double>(cycle_length(w.rig().clips[m.slots[0].clip].duration_us, m.wrap));
    for (uint8_t s = 1; s < m.count; ++s) {
      const double p = static_cast<double>(m.slots[s].phase) /
                       static_cast<double>(cycle_length(w.rig().clips[m.slots[s].clip].duration_us, m.wrap));
      EXPECT_NEAR(p, lead, 1e-6);
    }
  }
}

TEST(WorldMovement, MoveTurnsAtItsTurnRate) {
  MoveWorld w;
  w.spawn(1);
  w.submit(0, 1, MoveCommand{0.0f, 1.0f});
  w.run(60);
  EXPECT_NEAR(w.root(1).yaw, 1.0f, 1e-4f);
  EXPECT_NEAR(distance(w.root(1), 0.0f, 0.0f), 0.0f, 1e-6f);  // standing: idle has no travel
}

// move_to walks to the point, turning towards it, and stands there; queued points follow.
TEST(WorldMovement, MoveToWalksAPathAndStops) {
  MoveWorld w;
  const float speed = w.ground_speed(LocomotionRole::kWalk);
  w.spawn(1);
  w.submit(0, 1, MoveToCommand{5.0f, 5.0f, speed, false});
  w.submit(0, 1, MoveToCommand{-5.0f, 5.0f, 2.0f * speed, true});
  w.submit(0, 1, MoveToCommand{0.0f, 0.0f, speed, true});
  bool reached_first = false, reached_second = false;
  for (int i = 0; i < 60 * 40; ++i) {
    w.run(1);
    reached_first = reached_first || distance(w.root(1), 5.0f, 5.0f) < 0.5f;
    reached_second = reached_first && (reached_second || distance(w.root(1), -5.0f, 5.0f) < 0.5f);
  }
  const EntityState& e = *w.world.find_entity(1);
  EXPECT_TRUE(reached_first);
  EXPECT_TRUE(reached_second);
  EXPECT_LT(distance(e.root, 0.0f, 0.0f), 0.5f);
  EXPECT_EQ(e.locomotion.speed, 0.0f);
  EXPECT_TRUE(e.waypoints.empty());
  const RootTransform stood = e.root;
  w.run(60);
  EXPECT_TRUE(same_root(w.root(1), stood));  // idle: no travel
}

// A play on layer 0 ends locomotion; the entity keeps its place.
TEST(WorldMovement, PlayOnTheBaseLayerEndsLocomotion) {
  MoveWorld w;
  w.spawn(1);
  w.submit(0, 1, MoveCommand{1.0f, 0.5f});
  w.run(30);
  const uint16_t idle = w.clip(LocomotionRole::kIdle);
  w.submit(w.world.tick_index(), 1, PlayCommand{0, clip_motion(idle)});
  w.run(1);
  const RootTransform after = w.root(1);
  EXPECT_EQ(w.world.find_entity(1)->locomotion.mode, LocomotionMode::kNone);
  w.run(30);
  EXPECT_TRUE(same_root(w.root(1), after));
}

// The same commands give the same transforms through fast_forward_tick as through tick, and a
// snapshot restored mid-walk continues bit for bit; the world hash covers the transform.
TEST(WorldMovement, FastForwardSnapshotAndHashCarryTheTransform) {
  const auto script = [](MoveWorld& w) {
    w.spawn(1, RootTransform{1.0f, 0.0f, 2.0f, 0.3f});
    w.spawn(2);
    w.submit(0, 1, MoveToCommand{8.0f, -3.0f, 2.0f, false});
    w.submit(0, 1, MoveToCommand{-4.0f, -6.0f, 3.0f, true});
    w.submit(0, 2, MoveCommand{2.5f, -0.7f});
    w.submit(50, 2, MoveCommand{0.8f, 0.2f});
  };
  MoveWorld ticked, forwarded;
  script(ticked);
  script(forwarded);
  ticked.run(100);
  for (int i = 0; i < 99; ++i) forwarded.world.fast_forward_tick();
  forwarded.run(1);
  EXPECT_EQ(ticked.world.world_hash(), forwarded.world.world_hash());
  EXPECT_TRUE(same_root(ticked.root(1), forwarded.root(1)));
  EXPECT_TRUE(same_root(ticked.root(2), forwarded.root(2)));

  const std::vector<uint8_t> snap = ticked.world.snapshot();
  MoveWorld restored;
  ASSERT_TRUE(restored.world.restore(snap).ok());
  EXPECT_EQ(restored.world.find_entity(1)->waypoints.size(), ticked.world.find_entity(1)->waypoints.size());
  ticked.run(200);
  restored.run(200);
  EXPECT_EQ(ticked.world.world_hash(), restored.world.world_hash());
  EXPECT_TRUE(same_root(ticked.root(1), restored.root(1)));
  EXPECT_EQ(ticked.world.snapshot(), restored.world.snapshot());

  // Only the transform differs: the hash differs.
  MoveWorld a, b;
  a.spawn(1);
  b.spawn(1, RootTransform{0.0f, 0.0f, 0.0f, 0.001f});
  a.run(1);
  b.run(1);
  EXPECT_NE(a.world.world_hash(), b.world.world_hash());
}

// Foot sliding through the World's locomotion (docs/movement.md, "Foot sliding"): a walk, run,
// walk run (4 s each: 0.85 x the walk's ground speed, 1.15 x the run's), the planted feet's
// world-space horizontal speed as a fraction of the commanded speed. A foot is planted while
// its height is within 10 % of its height range (per segment) above its lowest; each segment's
// first half second (the crossfade into locomotion, the ramp between speeds) is left out.
double locomotion_sliding(MoveWorld& w) {
  const Rig& rig = w.rig();
  const float walk = w.ground_speed(LocomotionRole::kWalk);
  const float run = w.ground_speed(LocomotionRole::kRun);
  const float speeds[] = {0.85f * walk, 1.15f * run, 0.85f * walk};
  w.spawn(1);
  const std::vector<uint16_t>& feet = rig.motion_config.foot_nodes;
  EXPECT_FALSE(feet.empty());
  struct Sample { float speed; std::vector<glm::vec3> feet; };
  std::vector<Sample> samples;
  std::vector<Transform> locals(rig.skeleton.node_count());
  std::vector<glm::mat4> models(rig.skeleton.node_count());
  for (int segment = 0; segment < 3; ++segment) {
    w.submit(w.world.tick_index(), 1, MoveCommand{speeds[segment], 0.0f});
    for (int t = 0; t < 240; ++t) {
      w.run(1);
      EXPECT_TRUE(w.world.evaluate_local_pose(1, locals));
      EXPECT_TRUE((LocalToModelJob{&rig.skeleton, locals, models}.Run()));
      const RootTransform& root = w.root(1);
      Sample s{speeds[segment], {}};
      for (uint16_t foot : feet) {
        const glm::vec4 p = models[foot][3];
        float wx = 0.0f, wz = 0.0f;
        rotate_by_yaw(root.yaw, p.x, p.z, wx, wz);
        s.feet.push_back(glm::vec3(root.x + wx, p.y, root.z + wz));
      }
      samples.push_back(std::move(s));
    }
  }
  double planted = 0.0, expected = 0.0;
  for (std::size_t f = 0; f < feet.size(); ++f) {
    for (std::size_t seg = 0; seg < 3; ++seg) {  // each gait lifts its feet to its own height
      const std::size_t first = seg * 240 + 30, end = (seg + 1) * 240;
      float low = 1e30f, high = -1e30f;
      for (std::size_t i = first; i < end; ++i) low = std::min(low, samples[i].feet[f].y), high = std::max(high, samples[i].feet[f].y);
      const float band = low + 0.1f * (high - low);
      for (std::size_t i = first + 1; i < end; ++i) {
        if (samples[i].feet[f].y > band || samples[i - 1].feet[f].y > band) continue;
        const glm::vec3 d = samples[i].feet[f] - samples[i - 1].feet[f];
        const double dx = d.x, dz = d.z;
        planted += std::sqrt(dx * dx + dz * dz);
        expected += static_cast<double>(samples[i].speed) / 60.0;
      }
    }
  }
  EXPECT_GT(expected, 0.0);
  return expected > 0.0 ? planted / expected : 0.0;
}

// Printed: build/tests/sim/sim_movement_tests --gtest_filter='*FootSliding*'
TEST(WorldMovement, FootSlidingThroughLocomotion) {
  MoveWorld w;
  const double sliding = locomotion_sliding(w);
  std::printf("gen-rig:24:travel through World locomotion: planted-foot sliding %.2f %% of the commanded speed\n",
              100.0 * sliding);
  EXPECT_LT(sliding, 0.015);  // the figure is the output; this bounds regressions
}

// Fox with its walk and run foot-locked (hips and legs, "foot_lock": true), through the World.
TEST(WorldMovement, FoxFootSlidingThroughLocomotion) {
  const std::string fox = std::string(POSECAST_ASSETS_DIR) + "/Fox.glb";
  if (!std::filesystem::exists(fox)) GTEST_SKIP() << "sample asset Fox.glb not found in " POSECAST_ASSETS_DIR;
  ImportOptions options;
  options.rig_config_json = R"({"foot_lock": true})";
  Result<Model> model = import_gltf_file(fox, options);
  ASSERT_TRUE(model.ok()) << model.error().message;
  MoveWorld w(std::make_shared<const Model>(std::move(model).value()));
  const double sliding = locomotion_sliding(w);
  std::printf("Fox (foot_lock) through World locomotion: planted-foot sliding %.2f %% of the commanded speed\n",
              100.0 * sliding);
  EXPECT_LT(sliding, 0.005);  // the figure is the output; this bounds regressions
}

// A scenario's path is a move_to and queued move_tos the World walks in order; a point
// outside the world, a speed out of range or an unknown field is an error naming it.
TEST(WorldMovement, ScenarioPathsExpandToQueuedMoveTos) {
  const auto parse = [](const std::string& commands) {
    return parse_scenario(R"({"posecast_scenario": 1, "models": {"r": "gen-rig:24:travel"}, "commands": [)" +
                              std::string(R"({"tick": 0, "op": "spawn", "entity": 1, "count": 2, "model": "r", "x": 1, "x_step": 2, "yaw": 90}, )") +
                              commands + "]}",
                          "p.json", {load("gen-rig:24:travel")});
  };
  Result<Scenario> ok = parse(R"({"tick": 0, "op": "path", "entity": 1, "count": 2, "points": [[0, 4], [4, 4], [4, 0]], "x_step": 10, "speed": 1.5})");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  const std::vector<Command>& c = ok.value().commands;
  ASSERT_EQ(c.size(), 2u + 2u * 3u);
  const auto* spawn = std::get_if<SpawnCommand>(&c[1].body);
  ASSERT_NE(spawn, nullptr);
  EXPECT_EQ(spawn->at.x, 3.0f);
  EXPECT_NEAR(spawn->at.yaw, 1.5707963f, 1e-6f);
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t i = 0; i < 3; ++i) {
      const Command& cmd = c[2 + 3 * k + i];
      const auto* move = std::get_if<MoveToCommand>(&cmd.body);
      ASSERT_NE(move, nullptr) << k << " " << i;
      EXPECT_EQ(cmd.entity, 1 + k);
      EXPECT_EQ(move->queue, i > 0);
      EXPECT_EQ(move->speed, 1.5f);
      EXPECT_EQ(move->x, (i == 0 ? 0.0f : 4.0f) + 10.0f * static_cast<float>(k));
    }
  }
  const std::pair<const char*, const char*> bad[] = {
      {R"({"tick": 0, "op": "path", "entity": 1, "points": [[0, 4], [0, 17000]], "speed": 1})",
       "p.json: commands[1].points[1].z: 17000 is out of range -16384..16384"},
      {R"({"tick": 0, "op": "path", "entity": 1, "points": [[0, 4], [1]], "speed": 1})",
       "p.json: commands[1].points[1]: must be [x, z]"},
      {R"({"tick": 0, "op": "path", "entity": 1, "points": [[0, 4]], "speed": 0})",
       "p.json: commands[1].speed: speed for entity +0 is out of range"},
      {R"({"tick": 0, "op": "move_to", "entity": 1, "x": 1, "speed": 5000})",
       "p.json: commands[1].speed: 5000 is out of range 0..4096"},
      {R"({"tick": 0, "op": "move", "entity": 1, "speed": 1, "turn_rate": 800})",
       "p.json: commands[1].turn_rate: 800 is out of range"},
      {R"({"tick": 0, "op": "move_to", "entity": 1, "x": 1, "speed": 1, "y": 2})",
       "p.json: commands[1].y: unknown field"},
  };
  for (const auto& [text, expected] : bad) {
    Result<Scenario> s = parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.error().message.rfind(expected, 0), 0u) << "expected: " << expected << "\n     got: " << s.error().message;
  }
}

}  // namespace
}  // namespace posecast::test
