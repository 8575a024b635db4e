// The verifier proven: a replay whose World flips one bit of one entity's evaluation (or state)
// at a chosen tick (sim::EvaluationFault, a test seam) is caught by the recording's tick checks
// alone (a recording without world hashes, as posecast-server writes), within
// sim::kPaletteCheckPeriod ticks for a palette and at that tick for the state, naming the entity.

#include <optional>
#include <string>

#include "replay_test_support.h"
#include "posecast/sim/tick_check.h"

namespace posecast::test {
namespace {

constexpr uint32_t kFaultEntities = 24;
constexpr uint64_t kFaultTicks = 240;

// A session recorded from a World that hashes no palette (world hashes 0: tick checks only).
std::shared_ptr<const Recording> record_unhashed(const std::string& path) {
  std::unique_ptr<World> world = make_world(kFaultEntities, 1, /*hash_palettes=*/false);
  RecorderConfig config;
  config.checkpoint_interval_ticks = 60;
  auto rec = Recorder::create(path, *world, {kRigSource}, config);
  EXPECT_TRUE(rec.ok());
  for (uint64_t t = 0; t < kFaultTicks; ++t) {
    submit_decisions(*world, t, kFaultEntities, 20);
    world->tick();
    EXPECT_EQ(world->world_hash(), 0u);
    EXPECT_TRUE(rec.value()->record_tick(*world).ok());
  }
  EXPECT_TRUE(rec.value()->close().ok());
  return read_ok(read_bytes(path));
}

const std::shared_ptr<const Recording>& unhashed_session() {
  static TempFile file("fault.pcrec");
  static const std::shared_ptr<const Recording> recording = record_unhashed(file.path);
  return recording;
}

// The first mismatching step of a replay of the session with `fault`, or nullopt.
std::optional<ReplayStep> replay_with(const EvaluationFault& fault, unsigned threads = 1) {
  ReplayOptions options;
  options.threads = threads;
  options.fault = &fault;
  auto replayer = Replayer::create(unhashed_session(), rig_loader(), options);
  EXPECT_TRUE(replayer.ok());
  while (!replayer.value()->at_end()) {
    const ReplayStep s = replayer.value()->step();
    if (!s.matches()) return s;
  }
  return std::nullopt;
}

TEST(VerifyFault, TheUnfaultedReplayMatchesEveryTick) {
  ASSERT_TRUE(unhashed_session());
  EXPECT_EQ(unhashed_session()->ticks.size(), kFaultTicks);
  EXPECT_EQ(unhashed_session()->tick_record(10)->world_hash, 0u);
  EXPECT_EQ(verify_all(unhashed_session()), -1);
  EXPECT_EQ(verify_all(unhashed_session(), 2), -1);
}

TEST(VerifyFault, AFlippedPaletteBitIsCaughtWithin16TicksNamingTheEntity) {
  // Entities, fault ticks and bits spread over joints and over a float's sign, exponent and
  // low mantissa bits.
  const struct {
    EntityId entity;
    uint64_t tick;
    uint32_t bit;
  } cases[] = {{5, 100, 0}, {1, 61, 31}, {17, 150, 16 * 32 * 7 + 23}, {24, 33, 16 * 32 * 23 + 12 * 32 + 5},
               {12, 200, 32 * 13 + 30}};
  for (const auto& c : cases) {
    const EvaluationFault fault{EvaluationFault::Target::kPalette, c.entity, c.tick, c.bit};
    const std::optional<ReplayStep> s = replay_with(fault);
    ASSERT_TRUE(s.has_value()) << "entity " << c.entity << " tick " << c.tick << ": not caught";
    EXPECT_GE(s->tick, c.tick);
    EXPECT_LT(s->tick, c.tick + kPaletteCheckPeriod) << "entity " << c.entity;
    EXPECT_TRUE(s->state_matches);  // the state never sees a palette
    EXPECT_FALSE(s->palettes_match);
    EXPECT_EQ(s->palette_entity, std::optional<EntityId>(c.entity));
    const std::string text = describe_check_mismatch(*unhashed_session(), *s);
    const std::optional<uint64_t> last = last_palette_check_before(*unhashed_session(), c.entity, s->tick);
    ASSERT_TRUE(last.has_value());
    EXPECT_LT(*last, c.tick);  // the check before the fault matched
    EXPECT_EQ(text, "tick " + std::to_string(s->tick) + ": the palette of entity " + std::to_string(c.entity) +
                        " differs from the recording: caught at tick " + std::to_string(s->tick) + " (last matched " +
                        std::to_string(*last) + ")\n");
  }
}

TEST(VerifyFault, AFlippedStateBitIsCaughtAtThatTick) {
  for (const EntityId entity : {EntityId{2}, EntityId{9}, EntityId{23}}) {
    for (const uint32_t bit : {0u, 7u, 20u}) {
      const uint64_t tick = 90 + entity;
      const std::optional<ReplayStep> s = replay_with(EvaluationFault{EvaluationFault::Target::kState, entity, tick, bit});
      ASSERT_TRUE(s.has_value()) << "entity " << entity << " bit " << bit;
      EXPECT_EQ(s->tick, tick);
      EXPECT_FALSE(s->state_matches);
      EXPECT_EQ(s->state_entity, std::optional<EntityId>(entity));
      EXPECT_EQ(describe_check_mismatch(*unhashed_session(), *s).rfind(
                    "tick " + std::to_string(tick) + ": the state of entity " + std::to_string(entity) + " differs", 0),
                0u);
    }
  }
}

TEST(VerifyFault, CaughtTheSameWithTwoThreads) {
  const EvaluationFault fault{EvaluationFault::Target::kPalette, 7, 120, 100};
  const std::optional<ReplayStep> one = replay_with(fault, 1);
  const std::optional<ReplayStep> two = replay_with(fault, 2);
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->tick, two->tick);
  EXPECT_EQ(two->palette_entity, std::optional<EntityId>(7));
}

TEST(TickCheck, EveryPaletteIsCheckedOnItsSlotAndOnEachCommand) {
  std::unique_ptr<World> world = make_world(40, 1, false);
  world->tick();  // tick 0: every entity spawned, so every palette checked
  EXPECT_EQ(world->tick_check().palettes_checked, 40u);
  EXPECT_EQ(world->tick_check().sum_count, 1u + 6u);  // ids 1..40: six bits
  for (uint64_t t = 1; t < 40; ++t) {
    uint32_t expected = 0;
    for (EntityId e = 1; e <= 40; ++e) expected += palette_slot_due(e, t) ? 1 : 0;
    if (t == 20) {
      world->submit(1, Command{t, 5, SetSpeedCommand{0, kSpeedOne / 2}});  // slot 5: not due at 20
      world->submit(1, Command{t, 999, SetSpeedCommand{0, kSpeedOne / 2}});  // unknown: rejected
      ++expected;
    }
    world->tick();
    EXPECT_EQ(world->tick_check().palettes_checked, expected) << "tick " << t;
  }
}

TEST(TickCheck, AHashingWorldAndAnUnhashedOneGiveTheSameCheck) {
  std::unique_ptr<World> hashed = make_world(30, 1, true);
  std::unique_ptr<World> unhashed = make_world(30, 2, false);
  for (uint64_t t = 0; t < 100; ++t) {
    submit_decisions(*hashed, t, 30, 10);
    submit_decisions(*unhashed, t, 30, 10);
    hashed->tick();
    unhashed->tick();
    ASSERT_EQ(hashed->tick_check(), unhashed->tick_check()) << "tick " << t;
  }
}

TEST(TickCheck, LocatesOneDifferingEntityAndRefusesSeveral) {
  CheckSums a, b;
  for (EntityId e = 0; e < 300; ++e) {
    a.add(e, e * 0x9e3779b97f4a7c15ull + 1);
    b.add(e, e * 0x9e3779b97f4a7c15ull + 1);
  }
  EXPECT_EQ(locate_entity(a, b), std::nullopt);
  CheckSums one = b;
  one.add(173, 12345);  // entity 173's hash differs by 12345
  EXPECT_EQ(locate_entity(one, b), std::optional<EntityId>(173));
  CheckSums extra = b;
  extra.add(4000000000u, 99);  // an entity on one side only
  EXPECT_EQ(locate_entity(extra, b), std::optional<EntityId>(4000000000u));
  CheckSums two = one;
  two.add(6, 777);
  EXPECT_EQ(locate_entity(two, b), std::nullopt);
  // A difference whose low kLocatorBits bits are 0: detected, not named (one in 256).
  CheckSums unnamed = b;
  unnamed.add(173, uint64_t{5} << kLocatorBits);
  EXPECT_FALSE(same_as_recorded(unnamed, b, ~uint64_t{0}));
  EXPECT_EQ(locate_entity(unnamed, b), std::nullopt);
  // What a recording keeps: per-bit sums compared in their low bits, the palette total in 32.
  CheckSums high = b;
  high.sums[3] += uint64_t{1} << 40;
  high.sums[0] += uint64_t{1} << 40;
  EXPECT_TRUE(same_as_recorded(high, b, kPaletteTotalMask));
  EXPECT_FALSE(same_as_recorded(high, b, ~uint64_t{0}));
}

TEST(TickCheck, StateHashChangesWithEveryHashedField) {
  std::unique_ptr<World> world = make_world(1);
  world->tick();
  const EntityState base = *world->find_entity(1);
  const uint64_t h = hash_entity_state(base);
  EntityState s = base;
  s.layers[0].target.slots[0].phase += 1;
  EXPECT_NE(hash_entity_state(s), h);
  s = base;
  s.layers[0].target.speed += 1;
  EXPECT_NE(hash_entity_state(s), h);
  s = base;
  s.layers[0].weight = 0.5f;
  EXPECT_NE(hash_entity_state(s), h);
  s = base;
  s.root.yaw = 0.25f;
  EXPECT_NE(hash_entity_state(s), h);
  s = base;
  s.locomotion.mode = LocomotionMode::kMove;
  EXPECT_NE(hash_entity_state(s), h);
  s = base;
  s.cursors.assign(s.cursors.size(), 7);  // cursors never change output: not hashed
  EXPECT_EQ(hash_entity_state(s), h);
}

}  // namespace
}  // namespace posecast::test
