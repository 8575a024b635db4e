// Thread-count equality and snapshot / restore: the determinism contract of the World.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include <vector>

#include "posecast/byte_io.h"
#include "posecast/hash.h"
#include "sim_test_support.h"

namespace posecast::test {
namespace {

// A fixed pseudo-random command script over many entities: every kind of command, crossfades
// interrupted by crossfades, negative speeds, masks, additive layers, despawn and respawn.
// Commands for a tick are a pure function of the tick (a respawn three ticks after a despawn
// is re-derived from that earlier tick), so a restored world can be driven by the same script.
class Script {
 public:
  explicit Script(ModelId model, int32_t mask) : model_(model), mask_(mask) {}

  void submit_for(World& world, uint64_t tick) const {
    if (tick == 0) {
      for (EntityId id = 0; id < kEntities; ++id) {
        world.submit(0, at(0, id, SpawnCommand{model_, 0, {}}));
        world.submit(0, at(0, id, PlayCommand{0, blend_motion(kWalk, 1.0f + static_cast<float>(id % 3), kRun, static_cast<float>(id % 4), id * 7919)}));
      }
      return;
    }
    if (tick > 3) plan(world, tick - 3, tick, true);
    plan(world, tick, tick, false);
  }

  static constexpr EntityId kEntities = 48;

 private:
  // The commands decided at `decided` (submitted for `tick`); with respawns_only, just the
  // respawns that follow that tick's despawns.
  void plan(World& world, uint64_t decided, uint64_t tick, bool respawns_only) const {
    uint64_t state = 0x9e3779b97f4a7c15ull ^ (decided * 0xbf58476d1ce4e5b9ull);
    const auto next = [&state](uint32_t n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<uint32_t>((state >> 33) % n);
    };
    const auto submit = [&](EntityId id, CommandBody body, bool respawn) {
      if (respawn == respawns_only) world.submit(0, at(tick, id, std::move(body)));
    };
    for (int c = 0; c < 6; ++c) {
      const EntityId id = next(kEntities);
      const auto clip = static_cast<uint16_t>(next(4));
      switch (next(9)) {
        case 0: {
          const auto speed = static_cast<SpeedQ16>(next(3 * kSpeedOne)) - kSpeedOne;
          const int64_t offset = next(900000);
          const int64_t duration = 50000 + next(400000);
          submit(id, CrossfadeCommand{0, clip_motion(clip, speed, offset), duration, next(2) == 0}, false);
          break;
        }
        case 1:
          submit(id, SetSpeedCommand{0, static_cast<SpeedQ16>(next(4 * kSpeedOne)) - 2 * kSpeedOne}, false);
          break;
        case 2: {
          const auto wrap = static_cast<WrapMode>(next(3));
          submit(id, PlayCommand{1, clip_motion(kWave, kSpeedOne, 0, wrap)}, false);
          submit(id, SetMaskCommand{1, next(2) ? mask_ : kNoMask}, false);
          break;
        }
        case 3:
          submit(id, SetLayerModeCommand{2, LayerMode::kAdditive, kWave, next(3) * 500000}, false);
          submit(id, PlayCommand{2, clip_motion(kWave, kSpeedOne / 2)}, false);
          break;
        case 4: {
          const auto layer = static_cast<uint8_t>(1 + next(2));
          submit(id, SetLayerWeightCommand{layer, static_cast<float>(next(5)) / 4.0f}, false);
          break;
        }
        case 5: {
          const float a = static_cast<float>(next(4));
          const float b = static_cast<float>(next(4));
          submit(id, SetBlendWeightsCommand{0, {a, b, 0, 0}, 2}, false);
          break;
        }
        case 6:
          submit(id, DespawnCommand{}, false);
          submit(id, SpawnCommand{model_, 0, {}}, true);
          submit(id, CrossfadeCommand{0, clip_motion(clip), 100000, false}, true);
          break;
        case 7:
          submit(id, CrossfadeCommand{0, blend_motion(kWalk, 1.0f, kRun, 1.0f), 300000, true}, false);
          break;
        default: {
          const int64_t offset = next(2000000);
          submit(id, PlayCommand{0, clip_motion(clip, kSpeedOne, offset, WrapMode::kPingPong)}, false);
          break;
        }
      }
    }
  }

  ModelId model_;
  int32_t mask_;
};

struct ScriptedWorld {
  explicit ScriptedWorld(unsigned threads) : ScriptedWorld(WorldOptions{60, threads, true}) {}
  explicit ScriptedWorld(const WorldOptions& options) : w(options) {
    const std::vector<std::string> arm = {"arm"};
    Result<std::vector<float>> weights = mask_weights_from_joint_names(w.rig().skeleton, arm, true, 0.75f);
    EXPECT_TRUE(weights.ok());
    Result<int32_t> mask = w.world.add_mask(JointMask{"arm", w.model, 0, weights.value()});
    EXPECT_TRUE(mask.ok());
    script = std::make_unique<Script>(w.model, mask.value());
  }
  // Runs `ticks` ticks; returns every tick's world hash followed by every palette hash.
  std::vector<uint64_t> run(uint64_t ticks) {
    std::vector<uint64_t> hashes;
    for (uint64_t i = 0; i < ticks; ++i) {
      script->submit_for(w.world, w.world.tick_index());
      w.world.tick();
      hashes.push_back(w.world.world_hash());
      for (std::size_t e = 0; e < w.world.entity_count(); ++e) hashes.push_back(w.world.palette_hash_at(e));
    }
    return hashes;
  }
  TestWorld w;
  std::unique_ptr<Script> script;
};

TEST(Determinism, AnyThreadCountGivesTheSameHashesEveryTick) {
  ScriptedWorld one(1);
  const std::vector<uint64_t> reference = one.run(240);
  EXPECT_EQ(one.w.world.stats().evaluation_failures, 0u);
  EXPECT_GT(one.w.world.stats().commands_applied, 500u);
  for (unsigned threads : {2u, 3u, 4u, 7u}) {
    ScriptedWorld many(threads);
    EXPECT_EQ(many.run(240), reference) << threads << " threads";
  }
}

// The evaluation pass splits the entities into per-worker shares sized by the tick before,
// and workers take from each other's shares when done (world_impl.h, WorkerShare): whatever
// the split, spawns and despawns, each entity is evaluated exactly once a tick.
TEST(Determinism, EveryEntityIsEvaluatedOnceEveryTickWhateverTheThreadCount) {
  for (unsigned threads : {1u, 2u, 3u, 7u}) {
    ScriptedWorld world(threads);
    for (int i = 0; i < 120; ++i) {
      if (threads == 3 && i == 60) world.w.world.set_threads(2);  // a pool that shrinks
      const uint64_t before = world.w.world.stats().poses_evaluated;
      world.run(1);
      ASSERT_EQ(world.w.world.stats().poses_evaluated - before, world.w.world.entity_count())
          << threads << " threads, tick " << i;
    }
  }
}

TEST(Determinism, ChangingTheThreadCountMidRunChangesNothing) {
  ScriptedWorld steady(1), switching(1);
  std::vector<uint64_t> a, b;
  for (int part = 0; part < 6; ++part) {
    switching.w.world.set_threads(static_cast<unsigned>(1 + part % 3));
    const auto x = steady.run(20), y = switching.run(20);
    a.insert(a.end(), x.begin(), x.end());
    b.insert(b.end(), y.begin(), y.end());
  }
  EXPECT_EQ(a, b);
}

// Every local pose the observer sees, hashed, in call order per tick (one thread: index order).
struct PoseLog final : LocalPoseObserver {
  std::vector<uint64_t> hashes;
  void observe_pose(std::size_t index, EntityId id, std::span<const Transform> pose,
                    unsigned /*worker*/) override {
    auto& log = hashes;
    log.push_back(index);
    log.push_back(id);
    log.push_back(hash_pose(pose));
  }
};

// A World without palettes (the server's) evaluates the same local poses, and leaves the
// palettes at the identity matrices of spawn.
TEST(Determinism, AWorldWithoutPalettesSeesTheSameLocalPoses) {
  ScriptedWorld full(1);
  ScriptedWorld poses_only(WorldOptions{60, 1, /*hash_palettes=*/false, /*palettes=*/false});
  EXPECT_FALSE(poses_only.w.world.computes_palettes());
  PoseLog a, b;
  full.w.world.set_local_pose_observer(&a);
  poses_only.w.world.set_local_pose_observer(&b);
  full.run(120);
  poses_only.run(120);
  EXPECT_GT(a.hashes.size(), 120u * 3u * 10u);
  EXPECT_EQ(a.hashes, b.hashes);
  for (std::size_t e = 0; e < poses_only.w.world.entity_count(); ++e) {
    for (const glm::mat4& m : poses_only.w.world.palette_at(e)) ASSERT_EQ(m, glm::mat4(1.0f));
  }
  EXPECT_EQ(poses_only.w.world.stats().evaluation_failures, 0u);
}

// The server's World (no palettes) evaluates only the poses its observer asks for, and those
// are the poses every-tick evaluation gives; the entities it skips advance all the same.
struct PoseByTick final : LocalPoseObserver {
  explicit PoseByTick(bool thirds) : every_third(thirds) {}
  const bool every_third;  // wants a third of the entities, a different third each tick
  std::mutex mutex;
  uint64_t tick = 0;
  std::map<std::pair<uint64_t, EntityId>, uint64_t> hashes;  // (tick, id) -> pose hash
  void observe_pose(std::size_t /*index*/, EntityId id, std::span<const Transform> pose,
                    unsigned /*worker*/) override {
    const std::lock_guard lock(mutex);
    hashes[{tick, id}] = hash_pose(pose);
  }
  bool wants_pose(std::size_t /*index*/, EntityId id) const override {
    return !every_third || (id + tick) % 3 == 0;
  }
};

TEST(Determinism, AWorldWithoutPalettesEvaluatesOnlyThePosesItsObserverWants) {
  const WorldOptions poses_only{60, 2, /*hash_palettes=*/false, /*palettes=*/false};
  ScriptedWorld full(1), demand(poses_only), unobserved(poses_only);
  PoseByTick all(/*every_third=*/false), some(/*every_third=*/true);
  full.w.world.set_local_pose_observer(&all);
  demand.w.world.set_local_pose_observer(&some);
  for (uint64_t tick = 0; tick < 120; ++tick) {
    all.tick = some.tick = tick;
    for (ScriptedWorld* s : {&full, &demand, &unobserved}) {
      s->script->submit_for(s->w.world, tick);
      s->w.world.tick();
    }
    ASSERT_EQ(demand.w.world.snapshot(), full.w.world.snapshot()) << "tick " << tick;
    ASSERT_EQ(unobserved.w.world.snapshot(), full.w.world.snapshot()) << "tick " << tick;
  }
  ASSERT_GT(some.hashes.size(), 120u * 3u);
  EXPECT_LT(some.hashes.size(), all.hashes.size() / 2);
  for (const auto& [key, hash] : some.hashes) {
    ASSERT_EQ((key.second + key.first) % 3, 0u);
    const auto it = all.hashes.find(key);
    ASSERT_NE(it, all.hashes.end()) << "tick " << key.first << " entity " << key.second;
    EXPECT_EQ(hash, it->second) << "tick " << key.first << " entity " << key.second;
  }
  EXPECT_EQ(demand.w.world.stats().poses_evaluated, some.hashes.size());
  EXPECT_EQ(full.w.world.stats().poses_evaluated, all.hashes.size());
  EXPECT_EQ(unobserved.w.world.stats().poses_evaluated, 0u);
  EXPECT_EQ(demand.w.world.stats().evaluation_failures, 0u);
}

// A World that does not hash writes its palettes past the caches once a tick's palettes
// outgrow them (8 MiB: 26,215 palettes of the 5-joint test rig); the values are the same as a
// hashing World's, which never streams. A small World does not stream.
TEST(Determinism, StreamedPalettesAreTheHashingWorldsPalettes) {
  constexpr EntityId kEntities = 27000;
  TestWorld hashing(WorldOptions{60, 2, /*hash_palettes=*/true});
  TestWorld streaming(WorldOptions{60, 2, /*hash_palettes=*/false});
  TestWorld small(WorldOptions{60, 1, /*hash_palettes=*/false});
  for (TestWorld* w : {&hashing, &streaming}) {
    for (EntityId id = 0; id < kEntities; ++id) {
      w->spawn(id);
      w->world.submit(0, at(0, id, PlayCommand{0, blend_motion(kWalk, 1.0f + static_cast<float>(id % 3), kRun,
                                                               static_cast<float>(id % 4), id * 7919)}));
    }
  }
  for (EntityId id = 0; id < 100; ++id) small.spawn(id);
  for (int tick = 0; tick < 3; ++tick) {
    hashing.world.tick();
    streaming.world.tick();
    small.world.tick();
    ASSERT_EQ(streaming.world.world_hash_of_palettes(), hashing.world.world_hash()) << "tick " << tick;
  }
  EXPECT_EQ(streaming.world.stats().palettes_streamed, 3u * kEntities);
  EXPECT_EQ(hashing.world.stats().palettes_streamed, 0u);
  EXPECT_EQ(small.world.stats().palettes_streamed, 0u);
  EXPECT_EQ(streaming.world.stats().evaluation_failures, 0u);
}

TEST(Determinism, RunningTwiceGivesTheSameHashes) {
  ScriptedWorld a(2), b(2);
  EXPECT_EQ(a.run(120), b.run(120));
}

// Seeking fast-forwards (replay/replayer.h): the state after fast_forward_tick() must be
// tick()'s, through crossfades interrupted by crossfades (frozen poses evaluated from the state
// by the command), despawns, respawns, masks and additive layers.
TEST(FastForward, LeavesTheSameStateAsTickingAndTheNextTickTheSamePalettes) {
  ScriptedWorld ticked(1), skipping(1);
  for (uint64_t tick = 0; tick < 240; ++tick) {
    ticked.script->submit_for(ticked.w.world, tick);
    ticked.w.world.tick();
    skipping.script->submit_for(skipping.w.world, tick);
    const bool evaluate = tick % 7 == 6;
    if (evaluate) {
      skipping.w.world.tick();
    } else {
      skipping.w.world.fast_forward_tick();
      EXPECT_EQ(skipping.w.world.world_hash(), 0u);
    }
    ASSERT_EQ(skipping.w.world.snapshot(), ticked.w.world.snapshot()) << "tick " << tick;
    if (!evaluate) continue;
    ASSERT_EQ(skipping.w.world.world_hash(), ticked.w.world.world_hash()) << "tick " << tick;
    ASSERT_EQ(skipping.w.world.entity_count(), ticked.w.world.entity_count());
    for (std::size_t e = 0; e < ticked.w.world.entity_count(); ++e) {
      ASSERT_EQ(skipping.w.world.palette_hash_at(e), ticked.w.world.palette_hash_at(e));
    }
  }
  EXPECT_GT(ticked.w.world.stats().commands_applied, 500u);
  EXPECT_EQ(skipping.w.world.stats().commands_applied, ticked.w.world.stats().commands_applied);
}

TEST(Snapshot, RestorePlusNTicksGivesTheSameHashesAsTheOriginalRun) {
  ScriptedWorld original(1);
  original.run(97);  // mid-crossfades, with frozen poses, additive references, masks
  const std::vector<uint8_t> bytes = original.w.world.snapshot();
  const std::vector<uint64_t> expected = original.run(150);

  ScriptedWorld restored(2);
  restored.run(5);  // some unrelated state, replaced by the restore
  Status status = restored.w.world.restore(bytes);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(restored.w.world.tick_index(), 97u);
  EXPECT_EQ(restored.w.world.snapshot(), bytes);  // the round trip is exact
  EXPECT_EQ(restored.run(150), expected);
}

// Stages, fade states and motions of every frozen chain (Layer::frozen_chain), in entity
// order: what the server describes frozen poses with.
std::vector<int64_t> frozen_chains(const World& world) {
  std::vector<int64_t> out;
  for (EntityId id = 0; id < Script::kEntities; ++id) {
    const EntityState* e = world.find_entity(id);
    if (e == nullptr) continue;
    for (const Layer& l : e->layers) {
      out.push_back(static_cast<int64_t>(l.frozen_chain.size()));
      for (const FrozenStage& st : l.frozen_chain) {
        out.insert(out.end(), {st.fade_elapsed_us, st.fade_duration_us, st.motion.count, st.motion.speed});
        for (uint8_t i = 0; i < st.motion.count; ++i) {
          out.insert(out.end(), {st.motion.slots[i].clip, st.motion.slots[i].phase});
        }
      }
    }
  }
  return out;
}

TEST(Snapshot, RestoredFadesFromAFrozenPoseKeepTheChainThatDescribesTheirPose) {
  ScriptedWorld original(1);
  std::size_t longest = 0;
  for (int t = 0; t < 200 && longest < 3; ++t) {
    original.run(1);
    for (EntityId id = 0; id < Script::kEntities; ++id) {
      const EntityState* e = original.w.world.find_entity(id);
      if (e != nullptr && !e->layers.empty()) longest = std::max(longest, e->layers[0].frozen_chain.size());
    }
  }
  ASSERT_GE(longest, 3u) << "the script interrupts a fade from a frozen pose";
  const std::vector<uint8_t> bytes = original.w.world.snapshot();
  ScriptedWorld restored(1);
  Status status = restored.w.world.restore(bytes);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(frozen_chains(restored.w.world), frozen_chains(original.w.world));
  EXPECT_EQ(original.run(40), restored.run(40));
  EXPECT_EQ(frozen_chains(restored.w.world), frozen_chains(original.w.world));
}

// A frozen chain must rebuild its frozen pose bit for bit (the server vouches for the recipes
// it builds from it): a snapshot whose chain was altered (one stage's fade progress moved by a
// microsecond, the checksum recomputed) is refused, and the world is left as it was.
TEST(Snapshot, AFrozenChainThatDoesNotRebuildItsPoseIsRefused) {
  TestWorld source;
  source.spawn(0);
  source.world.submit(0, at(0, 0, PlayCommand{0, clip_motion(0)}));
  source.world.submit(0, at(3, 0, CrossfadeCommand{0, clip_motion(1), 300'000, false}));
  source.world.submit(0, at(9, 0, CrossfadeCommand{0, clip_motion(2), 300'000, false}));
  source.world.submit(0, at(14, 0, CrossfadeCommand{0, clip_motion(0), 300'000, false}));
  source.run_to(16);
  const EntityState* state = source.world.find_entity(0);
  ASSERT_NE(state, nullptr);
  ASSERT_EQ(state->layers[0].frozen_chain.size(), 3u);  // the base and two interrupted fades
  const std::vector<uint8_t> bytes = source.world.snapshot();

  TestWorld target;
  ASSERT_TRUE(target.world.restore(bytes).ok());  // as written, the chain rebuilds the pose
  TestWorld untouched;
  const std::vector<uint8_t> before = untouched.world.snapshot();
  // The last stage's fade progress is the second-last i64 of the entity's one layer (its chain
  // ends the layer), before the entity's root record (f32 x y z yaw sway, u8 mode, f32 speed
  // turn_rate target_x target_z, u8 waypoints = 0: 38 bytes) and the 8-byte checksum.
  std::vector<uint8_t> altered = bytes;
  constexpr std::size_t kRootRecordBytes = 5 * 4 + 1 + 4 * 4 + 1;
  const std::size_t elapsed_at = altered.size() - 8 - kRootRecordBytes - 16;
  ByteReader elapsed_reader(std::span<const uint8_t>(altered).subspan(elapsed_at, 8));
  const int64_t elapsed = elapsed_reader.i64();
  ASSERT_GT(elapsed, 0);  // the second fade had run some ticks when it was interrupted
  ASSERT_LT(elapsed + 1, 300'000);
  std::vector<uint8_t> moved;
  ByteWriter w(moved);
  w.i64(elapsed + 1);
  std::copy(moved.begin(), moved.end(), altered.begin() + static_cast<std::ptrdiff_t>(elapsed_at));
  std::vector<uint8_t> checksum;
  ByteWriter cw(checksum);
  cw.u64(hash_bytes(std::span<const uint8_t>(altered).first(altered.size() - 8)));
  std::copy(checksum.begin(), checksum.end(), altered.end() - 8);
  const Status refused = untouched.world.restore(altered);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("frozen_chain: does not rebuild the frozen pose"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(untouched.world.snapshot(), before);
}

TEST(Snapshot, SnapshotsAreIdenticalWhateverTheThreadCount) {
  ScriptedWorld a(1), b(3);
  a.run(64);
  b.run(64);
  EXPECT_EQ(a.w.world.snapshot(), b.w.world.snapshot());
}

TEST(Snapshot, EveryTruncationIsAnErrorAndLeavesTheWorldAsItWas) {
  ScriptedWorld source(1);
  source.run(50);
  const std::vector<uint8_t> bytes = source.w.world.snapshot();
  ScriptedWorld target(1);
  target.run(10);
  const std::vector<uint8_t> before = target.w.world.snapshot();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    Status s = target.w.world.restore(std::span<const uint8_t>(bytes.data(), n));
    ASSERT_FALSE(s.ok()) << n;
    EXPECT_FALSE(s.error().message.empty());
  }
  EXPECT_EQ(target.w.world.snapshot(), before);
}

TEST(Snapshot, DamagedBytesAreCaughtByTheChecksum) {
  ScriptedWorld source(1);
  source.run(30);
  std::vector<uint8_t> bytes = source.w.world.snapshot();
  bytes[bytes.size() / 2] ^= 0x10;
  TestWorld target;
  Status s = target.world.restore(bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("checksum"), std::string::npos) << s.error().message;
}

// Re-signs damaged bytes so that the field validation, not the checksum, has to catch them.
std::vector<uint8_t> resign(std::vector<uint8_t> bytes) {
  bytes.resize(bytes.size() - 8);
  const uint64_t sum = hash_bytes(bytes);
  ByteWriter(bytes).u64(sum);
  return bytes;
}

TEST(Snapshot, EveryDamagedFieldIsRejectedOrRestoredSafely) {
  ScriptedWorld source(1);
  source.run(60);
  const std::vector<uint8_t> bytes = source.w.world.snapshot();
  std::size_t rejected = 0;
  TestWorld target;  // reused: a failed restore changes nothing, a successful one replaces all
  // Every byte of the header and tables, then every fifth (entity records repeat a layout).
  for (std::size_t i = 0; i + 8 < bytes.size(); i += (i < 256 ? 1 : 5)) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0xff}}) {
      std::vector<uint8_t> damaged = bytes;
      damaged[i] ^= flip;
      Status s = target.world.restore(resign(damaged));
      if (!s.ok()) {
        ++rejected;
        EXPECT_EQ(s.error().message.rfind("snapshot", 0), 0u) << s.error().message;
        continue;
      }
      // Accepted (a weight, a phase or a frozen value changed to another valid one): the world
      // must still tick without failing.
      const uint64_t failures = target.world.stats().evaluation_failures;
      target.world.tick();
      EXPECT_EQ(target.world.stats().evaluation_failures, failures) << "byte " << i;
    }
  }
  EXPECT_GT(rejected, 0u);
}

TEST(Snapshot, RestoreRefusesADifferentModelOrTickRate) {
  ScriptedWorld source(1);
  source.run(5);
  const std::vector<uint8_t> bytes = source.w.world.snapshot();
  World no_models;
  Status s = no_models.restore(bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("snapshot.models"), std::string::npos) << s.error().message;
  TestWorld slow(1, 30);
  s = slow.world.restore(bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("tick_rate_hz"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace posecast::test
