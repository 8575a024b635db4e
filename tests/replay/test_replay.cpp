// Replay: bit-exact re-simulation of a recorded session (commands from 8 concurrent submitters),
// seeking forwards and backwards, asset checks, and divergence reports that name the tick,
// entity, joint and size.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <atomic>
#include <thread>

#include "posecast/replay/divergence.h"
#include "replay_test_support.h"

namespace posecast::test {
namespace {

// Eight threads submit commands for their own entities while the main thread ticks and records:
// when each command lands depends on thread timing, so only the recording can say what was
// applied when (the network version of this test comes with the server).
TEST(Replay, SessionWithEightConcurrentSubmittersReplaysEveryTickBitExactly) {
  constexpr uint32_t kEntities = 40;
  constexpr uint64_t kTicks = 900;
  TempFile file("eight.pcrec");
  std::unique_ptr<World> world = make_world(kEntities);
  auto rec = Recorder::create(file.path, *world, {kRigSource});
  ASSERT_TRUE(rec.ok()) << rec.error().message;
  // Each thread goes through every tick value it has not handled yet and submits the commands
  // due then, stamped with that tick: on time when it keeps up, late when the ticking thread got
  // ahead (it may run up to two ticks ahead of the slowest submitter).
  std::atomic<uint64_t> tick{0};
  std::atomic<bool> stop{false};
  std::array<std::atomic<uint64_t>, 8> handled{};
  std::vector<std::thread> submitters;
  for (uint32_t s = 0; s < 8; ++s) {
    submitters.emplace_back([&, s] {
      uint64_t k = 0;
      uint64_t next = 0;
      while (!stop.load()) {
        const uint64_t now = tick.load();
        for (; next <= now; ++next) {
          for (EntityId e = 1 + s; e <= kEntities; e += 8) {
            if ((next + e) % 60 == 0) world->submit(100 + s, Command{next, e, decision(e, k++)});
          }
        }
        handled[s].store(now);
        std::this_thread::yield();
      }
    });
  }
  std::vector<uint64_t> live;
  for (uint64_t t = 0; t < kTicks; ++t) {
    for (const auto& h : handled) {
      while (h.load() + 2 < t) std::this_thread::yield();
    }
    world->tick();
    live.push_back(world->world_hash());
    ASSERT_TRUE(rec.value()->record_tick(*world).ok());
    tick.store(t + 1);
  }
  stop.store(true);
  for (std::thread& t : submitters) t.join();
  ASSERT_TRUE(rec.value()->close().ok());
  const std::vector<uint8_t> live_state = world->snapshot();

  const auto recording = read_ok(read_bytes(file.path));
  ASSERT_TRUE(recording);
  // Spawn and play per entity, then one decision per entity per second (15 s).
  EXPECT_GE(recording->commands.size(), kEntities * 2 + kEntities * 14);
  EXPECT_GT(world->stats().commands_applied, 0u);
  for (unsigned threads : {1u, 2u}) {
    auto replayer = Replayer::create(recording, rig_loader(), ReplayOptions{threads});
    ASSERT_TRUE(replayer.ok()) << replayer.error().message;
    for (uint64_t t = 0; t < kTicks; ++t) {
      const ReplayStep s = replayer.value()->step();
      ASSERT_EQ(s.world_hash, live[t]) << "tick " << t << ", threads " << threads;
      ASSERT_TRUE(s.matches());
    }
    EXPECT_TRUE(replayer.value()->at_end());
    EXPECT_EQ(replayer.value()->world().snapshot(), live_state);
    EXPECT_EQ(replayer.value()->world().stats().commands_rejected, world->stats().commands_rejected);
    EXPECT_EQ(replayer.value()->world().stats().commands_late, world->stats().commands_late);
  }
}

// The server runs its World without palette hashing: the recording then holds no world hash
// (0), and the tick checks alone verify every tick.
TEST(Replay, WorldWithoutPaletteHashingIsVerifiedByTickChecks) {
  TempFile file("unhashed.pcrec");
  std::unique_ptr<World> world = make_world(10, 1, false);
  RecorderConfig config;
  config.checkpoint_interval_ticks = 60;
  auto rec = Recorder::create(file.path, *world, {kRigSource}, config);
  ASSERT_TRUE(rec.ok());
  for (uint64_t t = 0; t < 200; ++t) {
    submit_decisions(*world, t, 10, 20);
    world->tick();
    ASSERT_EQ(world->world_hash(), 0u);
    ASSERT_TRUE(rec.value()->record_tick(*world).ok());
  }
  ASSERT_TRUE(rec.value()->close().ok());
  const auto recording = read_ok(read_bytes(file.path));
  ASSERT_TRUE(recording);
  EXPECT_EQ(recording->tick_record(5)->world_hash, 0u);
  EXPECT_EQ(recording->tick_check(5).sum_count, 5u);  // ids 1..10: a total and four bit sums
  EXPECT_EQ(verify_all(recording), -1);
  // The per-entity hashes in checkpoints are the palettes' too.
  auto replayer = Replayer::create(recording, rig_loader());
  ASSERT_TRUE(replayer.ok());
  ASSERT_TRUE(replayer.value()->seek(119).ok());
  const ReplayStep step119 = replayer.value()->step();  // tick 119: the checkpoint at 120 holds its palette hashes
  EXPECT_EQ(step119.tick, 119u);
  EXPECT_TRUE(step119.matches());
  EXPECT_NE(replayer.value()->world().world_hash(), 0u);
  const Checkpoint* cp = recording->checkpoint_at_or_after(120);
  ASSERT_EQ(cp->tick, 120u);
  ASSERT_EQ(cp->entity_hashes.size(), replayer.value()->world().entity_count());
  for (std::size_t i = 0; i < cp->entity_hashes.size(); ++i) {
    EXPECT_EQ(cp->entity_hashes[i].second, replayer.value()->world().palette_hash_at(i));
  }
}

struct SeekFixture : ::testing::Test {
  static void SetUpTestSuite() {
    file = new TempFile("seek.pcrec");
    RecorderConfig config;
    config.checkpoint_interval_ticks = 120;
    hashes = new std::vector<uint64_t>(record_session(file->path, 1000, 16, config));
    recording = new std::shared_ptr<const Recording>(read_ok(read_bytes(file->path)));
  }
  static void TearDownTestSuite() {
    delete recording;
    delete hashes;
    delete file;
  }
  static TempFile* file;
  static std::vector<uint64_t>* hashes;
  static std::shared_ptr<const Recording>* recording;
};
TempFile* SeekFixture::file = nullptr;
std::vector<uint64_t>* SeekFixture::hashes = nullptr;
std::shared_ptr<const Recording>* SeekFixture::recording = nullptr;

TEST_F(SeekFixture, SeekingForwardsAndBackwardsThenPlayingOnGivesTheStraightRunsHashes) {
  auto replayer = Replayer::create(*recording, rig_loader());
  ASSERT_TRUE(replayer.ok()) << replayer.error().message;
  Replayer& r = *replayer.value();
  // Forward past several checkpoints, back before one, into the same interval, to a checkpoint
  // tick exactly, back to the start, and forward again.
  for (uint64_t target : {700u, 130u, 135u, 240u, 239u, 0u, 999u, 481u}) {
    ASSERT_TRUE(r.seek(target).ok()) << target;
    ASSERT_EQ(r.next_tick(), target);
    for (uint64_t t = target; t < std::min<uint64_t>(target + 150, 1000); ++t) {
      const ReplayStep s = r.step();
      ASSERT_EQ(s.tick, t);
      ASSERT_EQ(s.world_hash, (*hashes)[t]) << "after seeking to " << target << ", tick " << t;
    }
  }
}

TEST_F(SeekFixture, FastForwardSeekEndsInTheSameWorldAsAVerifiedSeek) {
  auto fast = Replayer::create(*recording, rig_loader());
  auto verified = Replayer::create(*recording, rig_loader());
  ASSERT_TRUE(fast.ok() && verified.ok());
  for (uint64_t target : {700u, 130u, 241u, 1000u, 999u, 1u}) {
    ASSERT_TRUE(fast.value()->seek(target).ok()) << target;  // fast-forwards the stepped-over ticks
    bool mismatched = true;
    ASSERT_TRUE(verified.value()->seek(target, nullptr, &mismatched).ok()) << target;
    EXPECT_FALSE(mismatched) << target;
    const sim::World& a = fast.value()->world();
    const sim::World& b = verified.value()->world();
    ASSERT_EQ(a.snapshot(), b.snapshot()) << target;
    EXPECT_EQ(a.world_hash(), b.world_hash()) << target;
    if (target % 120 != 0) {  // (a seek onto a checkpoint restores it: no tick run, hash 0)
      EXPECT_EQ(a.world_hash(), (*hashes)[target - 1]) << target;
    }
    ASSERT_EQ(a.entity_count(), b.entity_count());
    for (std::size_t e = 0; e < a.entity_count(); ++e) {
      EXPECT_EQ(a.palette_hash_at(e), b.palette_hash_at(e)) << target << " entity " << e;
    }
  }
}

TEST_F(SeekFixture, SeekRestoresTheNearestCheckpointAtOrBeforeTheTick) {
  EXPECT_EQ((*recording)->checkpoint_at_or_before(359)->tick, 240u);
  EXPECT_EQ((*recording)->checkpoint_at_or_before(360)->tick, 360u);
  EXPECT_EQ((*recording)->checkpoint_at_or_after(361)->tick, 480u);
  auto replayer = Replayer::create(*recording, rig_loader());
  ASSERT_TRUE(replayer.ok());
  EXPECT_TRUE(replayer.value()->seek(1000).ok());
  EXPECT_TRUE(replayer.value()->at_end());
  Status s = replayer.value()->seek(1001);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("outside the recording"), std::string::npos);
}

TEST_F(SeekFixture, AssetWhoseContentHashDiffersIsRefusedByName) {
  ModelLoader wrong = [](const std::string&) -> Result<std::shared_ptr<const Model>> {
    auto copy = std::make_shared<Model>(*rig_model());
    copy->content_hash ^= 1;
    return std::shared_ptr<const Model>(copy);
  };
  auto replayer = Replayer::create(*recording, wrong);
  ASSERT_FALSE(replayer.ok());
  EXPECT_NE(replayer.error().message.find("models[0] 'gen-rig:24': asset hash mismatch"), std::string::npos)
      << replayer.error().message;
  ModelLoader missing = [](const std::string&) -> Result<std::shared_ptr<const Model>> { return Error{"no such file"}; };
  auto none = Replayer::create(*recording, missing);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no such file"), std::string::npos);
}

// A session recorded with one command left out of the log (the planted bug): live entity 3
// changes speed at tick 130, the recording does not say so.
std::shared_ptr<const Recording> record_with_a_dropped_command(const std::string& path, bool palettes) {
  std::unique_ptr<World> world = make_world(6);
  RecorderConfig config;
  config.checkpoint_interval_ticks = 60;
  config.record_palettes = palettes;
  auto rec = Recorder::create(path, *world, {kRigSource}, config);
  EXPECT_TRUE(rec.ok());
  for (uint64_t t = 0; t < 300; ++t) {
    if (t == 130) world->submit(9, Command{t, 3, SetSpeedCommand{0, kSpeedOne * 3 / 2}});
    world->tick();
    std::vector<QueuedCommand> applied(world->last_tick_commands().begin(), world->last_tick_commands().end());
    std::erase_if(applied, [](const QueuedCommand& q) { return q.submitter == 9; });
    EXPECT_TRUE(rec.value()->append_tick(t, applied, world->world_hash(), world->tick_check()).ok());
    if (world->tick_index() % 60 == 0) {
      EXPECT_TRUE(rec.value()->append_checkpoint(*world).ok());
    }
  }
  EXPECT_TRUE(rec.value()->close().ok());
  return read_ok(read_bytes(path));
}

ReplayStep first_mismatch(Replayer& r) {
  while (!r.at_end()) {
    const ReplayStep s = r.step();
    if (!s.matches()) return s;
  }
  ADD_FAILURE() << "no divergence";
  return {};
}

TEST(ReplayDivergence, StateDivergenceIsReportedWithTickEntityJointAndSize) {
  TempFile file("dropped.pcrec");
  auto replayer = Replayer::create(record_with_a_dropped_command(file.path, false), rig_loader());
  ASSERT_TRUE(replayer.ok());
  const ReplayStep s = first_mismatch(*replayer.value());
  // The speed takes effect when the tick advances the clip: the state after tick 130 differs
  // (the tick check's state sums, naming the entity), its palette from tick 131 on.
  EXPECT_EQ(s.tick, 130u);
  // The live tick also checked entity 3's palette (the dropped command targeted it), so the
  // palette share differs too, by that entity.
  EXPECT_FALSE(s.state_matches);
  EXPECT_EQ(s.state_entity, std::optional<EntityId>(3));
  EXPECT_EQ(s.palette_entity, std::optional<EntityId>(3));
  EXPECT_EQ(describe_check_mismatch(replayer.value()->recording(), s).rfind(
                "tick 130: the state of entity 3 differs from the recording\n", 0),
            0u);
  const DivergenceReport report = diagnose_divergence(*replayer.value(), s.tick, s.world_hash, s.recorded_hash);
  EXPECT_EQ(report.tick, 130u);
  ASSERT_TRUE(report.entity.has_value());
  EXPECT_EQ(*report.entity, 3u);
  EXPECT_NE(report.state_difference.find("entity 3: layers[0].target.speed_q16: 65536 vs 98304"), std::string::npos)
      << report.state_difference;
  ASSERT_TRUE(report.joint.has_value());
  EXPECT_GE(report.joint->joint, 0);
  EXPECT_GT(report.joint->displacement, 0.0f);
  EXPECT_FALSE(report.joint->joint_name.empty());
  const std::string text = report.to_text();
  std::printf("%s", text.c_str());  // the example in docs/recording-format.md
  EXPECT_NE(text.find("tick 130"), std::string::npos) << text;
  EXPECT_NE(text.find("entity 3"), std::string::npos) << text;
  EXPECT_NE(text.find("model units"), std::string::npos) << text;
}

TEST(ReplayDivergence, RecordedPalettesGiveTheJointAgainstTheLiveValues) {
  TempFile file("dropped_palettes.pcrec");
  auto replayer = Replayer::create(record_with_a_dropped_command(file.path, true), rig_loader());
  ASSERT_TRUE(replayer.ok());
  const ReplayStep s = first_mismatch(*replayer.value());
  const DivergenceReport report = diagnose_divergence(*replayer.value(), s.tick, s.world_hash, s.recorded_hash);
  ASSERT_TRUE(report.entity.has_value());
  EXPECT_EQ(*report.entity, 3u);
  ASSERT_TRUE(report.joint.has_value());
  EXPECT_GT(report.joint->displacement, 0.0f);
  EXPECT_NE(report.joint_reference.find("recorded palettes of tick 179"), std::string::npos) << report.joint_reference;
}

TEST(ReplayDivergence, ACorruptedHashAloneIsReportedAsNotLasting) {
  TempFile file("hash.pcrec");
  RecorderConfig config;
  config.checkpoint_interval_ticks = 60;
  config.flush_interval_ticks = 1;
  record_session(file.path, 200, 4, config);
  std::vector<uint8_t> bytes = read_bytes(file.path);
  // Tick 100's chunk (one tick per chunk): flip its world hash, in a valid frame.
  for (const ChunkInfo& c : list_chunks(bytes)) {
    if (c.type != "TICK") continue;
    std::vector<uint8_t> content = chunk_content(bytes, c);
    uint64_t first = 0;
    for (std::size_t i = 0; i < 8; ++i) first |= uint64_t{content[i]} << (8 * i);
    if (first != 100) continue;
    // After first_tick: varint 1 (tick count), then the world hash.
    content[8 + 1] ^= 0x01;
    replace_content(bytes, c, content);
    break;  // the chunks after it moved
  }
  auto replayer = Replayer::create(read_ok(bytes), rig_loader());
  ASSERT_TRUE(replayer.ok());
  const ReplayStep s = first_mismatch(*replayer.value());
  EXPECT_EQ(s.tick, 100u);
  const DivergenceReport report = diagnose_divergence(*replayer.value(), s.tick, s.world_hash, s.recorded_hash);
  EXPECT_FALSE(report.entity.has_value());
  EXPECT_NE(report.limits.find("did not last"), std::string::npos) << report.to_text();
}

TEST(ComparePalettes, NamesTheWorstJointAndItsModelSpaceDisplacement) {
  const Skeleton& skeleton = rig_model()->rigs[0].skeleton;
  std::vector<glm::mat4> a(skeleton.joint_count(), glm::mat4(1.0f));
  std::vector<glm::mat4> b = a;
  b[5][3][0] += 0.25f;  // joint 5 moved by 0.25 along x
  b[7][3][1] += 0.5f;   // joint 7 by 0.5 along y
  const JointDifference d = compare_palettes(skeleton, a, b);
  EXPECT_EQ(d.joint, 7);
  EXPECT_EQ(d.differing_joints, 2u);
  EXPECT_NEAR(d.translation, 0.5f, 1e-5f);
  EXPECT_NEAR(d.displacement, 0.5f, 1e-5f);
  EXPECT_EQ(d.joint_name, skeleton.names[skeleton.joint_nodes[7]]);
  EXPECT_EQ(compare_palettes(skeleton, a, a).differing_joints, 0u);
}

}  // namespace
}  // namespace posecast::test
