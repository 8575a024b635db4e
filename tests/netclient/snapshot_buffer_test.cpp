// SnapshotBuffer: decoding against acked baselines, carried poses, completion and acks.

#include "posecast/client/snapshot_buffer.h"

#include <map>

#include "netclient_support.h"

namespace posecast::client {
namespace {

using protocol::kNoTick;
using testing::PoseSource;
using testing::same_bits;

class SnapshotBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(rig.model, nullptr);
    binding = testing::bind_test_rig(rig);
    spawn(7, 1);
    spawn(8, 1);
    buffer.set_tick_rate(60);
  }

  void spawn(uint32_t id, uint16_t generation, uint32_t tick = 0) {
    ASSERT_NE(registry.on_spawn(protocol::EntitySpawn{id, generation, 0, 0, tick}, binding),
              SpawnOutcome::kUnknownModel);
  }

  // The server side: encodes `id`'s pose at `tick` against the poses it says the client holds
  // (server_poses_[tick][id]), like the server's per-client encoder.
  protocol::EntityPose record(uint32_t id, uint32_t tick, uint32_t baseline, uint32_t prior,
                              uint16_t generation = 1, uint32_t older = kNoTick) {
    PoseSource& source = sources.try_emplace(id, rig, id == 7 ? 1 : 2).first->second;
    protocol::PoseReference ref;
    const protocol::QuantizedPose* base = baseline == kNoTick ? nullptr : find(baseline, id);
    if (base != nullptr) {
      ref.baseline = base;
      ref.baseline_age = tick - baseline;
      const protocol::QuantizedPose* pri = prior == kNoTick ? nullptr : find(prior, id);
      if (pri != nullptr) {
        ref.prior = pri;
        ref.prior_age = baseline - prior;
        const protocol::QuantizedPose* old = older == kNoTick ? nullptr : find(older, id);
        if (old != nullptr) {
          ref.older = old;
          ref.older_age = prior - older;
        }
      }
    }
    protocol::QuantizedPose q = source.quantized(tick, base);
    protocol::EntityPose out{id, generation, source.encode(q, ref)};
    store(tick, id, std::move(q));
    return out;
  }
  const protocol::QuantizedPose* find(uint32_t tick, uint32_t id) {
    for (const StoredPose& p : server_poses) {
      if (p.tick == tick && p.id == id) return p.pose.get();
    }
    return nullptr;
  }
  // The server's pose (a test failure and the empty pose when it has none).
  const protocol::QuantizedPose& server_pose(uint32_t tick, uint32_t id) {
    const protocol::QuantizedPose* p = find(tick, id);
    EXPECT_NE(p, nullptr) << "tick " << tick << " entity " << id;
    return p != nullptr ? *p : empty_pose;
  }
  void store(uint32_t tick, uint32_t id, protocol::QuantizedPose pose) {
    server_poses.push_back(
        StoredPose{tick, id, std::make_shared<const protocol::QuantizedPose>(std::move(pose))});
  }

  static protocol::Snapshot snapshot(uint32_t tick, uint32_t baseline, uint32_t prior,
                                     std::vector<protocol::EntityPose> records, uint8_t part = 0,
                                     uint8_t parts = 1, uint32_t older = kNoTick) {
    protocol::Snapshot s;
    s.server_tick = tick;
    s.baseline_tick = baseline;
    s.prior_tick = prior;
    s.older_tick = older;
    s.part_index = part;
    s.part_count = parts;
    s.entities = std::move(records);
    return s;
  }

  testing::TestRig rig = testing::load_test_rig();
  AssetBinding binding;
  EntityRegistry registry;
  SnapshotBuffer buffer;
  std::map<uint32_t, PoseSource> sources;
  // What the server holds per (tick, entity); shared_ptr keeps addresses stable.
  struct StoredPose {
    uint32_t tick;
    uint32_t id;
    std::shared_ptr<const protocol::QuantizedPose> pose;
  };
  std::vector<StoredPose> server_poses;
  protocol::QuantizedPose empty_pose;
};

TEST_F(SnapshotBufferTest, RestCodedRecordDecodesToTheServersPaletteBitForBit) {
  const PartResult r = buffer.apply(snapshot(3, kNoTick, kNoTick, {record(7, 3, kNoTick, kNoTick)}),
                                    registry, 1000);
  EXPECT_EQ(r.outcome, PartOutcome::kApplied);
  EXPECT_TRUE(r.new_tick);
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.decoded, 1u);
  const PoseSample* s = buffer.sample(3, 7, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->quantized, server_pose(3, 7));
  PoseSource server(rig, 1);
  EXPECT_TRUE(same_bits(s->palette(), server.palette(server_pose(3, 7))));
}

TEST_F(SnapshotBufferTest, DeltaChainAgainstThreeAckedReferencesStaysBitExact) {
  uint32_t baseline = kNoTick;
  uint32_t prior = kNoTick;
  uint32_t older = kNoTick;
  PoseSource server(rig, 1);
  for (uint32_t tick = 3; tick <= 120; tick += 3) {
    const PartResult r = buffer.apply(
        snapshot(tick, baseline, prior,
                 {record(7, tick, baseline, prior, 1, older), record(8, tick, baseline, prior, 1, older)},
                 0, 1, older),
        registry, tick * 1000);
    ASSERT_TRUE(r.completed) << "tick " << tick << ": " << r.first_error;
    for (uint32_t id : {7u, 8u}) {
      const PoseSample* s = buffer.sample(tick, id, 1);
      ASSERT_NE(s, nullptr);
      ASSERT_EQ(s->quantized, server_pose(tick, id)) << "tick " << tick << " entity " << id;
      ASSERT_TRUE(same_bits(s->palette(), server.palette(server_pose(tick, id))));
    }
    older = prior;
    prior = baseline;
    baseline = tick;
  }
  EXPECT_EQ(buffer.ack().newest_tick, 120u);
}

TEST_F(SnapshotBufferTest, RecordPredictedFromTheClipDictionaryDecodesBitExact) {
  PoseSource server(rig, 1);
  const protocol::QuantizedPose q = server.quantized_with_recipe(30);
  const std::vector<uint8_t> bytes = server.encode_with_dictionary(q, {});
  // The dictionary makes the record tiny: the pose is exactly the clip at that time.
  EXPECT_LT(bytes.size(), server.encode(q, {}).size());
  const PartResult r = buffer.apply(snapshot(30, kNoTick, kNoTick, {protocol::EntityPose{7, 1, bytes}}),
                                    registry, 0);
  ASSERT_TRUE(r.completed) << r.first_error;
  const PoseSample* s = buffer.sample(30, 7, 1);
  ASSERT_NE(s, nullptr);
  // Sent exact (the pose is its recipe's prediction): stored with the recipe alone, verified,
  // the codes computed the first time they are asked for.
  EXPECT_TRUE(s->recipe_verified);
  EXPECT_EQ(s->quantized.recipe, q.recipe);
  EXPECT_NE(s->pending, nullptr);
  EXPECT_EQ(s->locals.size(), rig.format().node_count());
  ASSERT_TRUE(s->decoded());
  EXPECT_EQ(s->pending, nullptr);
  EXPECT_EQ(s->quantized.values, q.values);
  std::vector<Transform> dequantised(rig.format().node_count());
  protocol::dequantize_pose(rig.format(), q, dequantised);
  EXPECT_EQ(std::memcmp(s->locals.data(), dequantised.data(), dequantised.size() * sizeof(Transform)), 0);
  EXPECT_TRUE(same_bits(s->palette(), server.palette(q)));
}

// Exact records stay deferred as long as only records predicted from the clip dictionary
// follow them (those read no reference codes); a record coded against references computes
// the references it names first, and decodes bit exact against them.
TEST_F(SnapshotBufferTest, DeferredExactRecordsAreComputedWhenARecordNeedsThemAsReferences) {
  PoseSource server(rig, 1);
  const protocol::QuantizedPose at30 = server.quantized_with_recipe(30);
  ASSERT_TRUE(buffer.apply(snapshot(30, kNoTick, kNoTick,
                                    {protocol::EntityPose{7, 1, server.encode_with_dictionary(at30, {})}}),
                           registry, 0).completed);
  const protocol::QuantizedPose at33 = server.quantized_with_recipe(33);
  protocol::PoseReference from30;
  from30.baseline = &at30;
  from30.baseline_age = 3;
  ASSERT_TRUE(buffer.apply(snapshot(33, 30, kNoTick,
                                    {protocol::EntityPose{7, 1, server.encode_with_dictionary(at33, from30)}}),
                           registry, 0).completed);
  const PoseSample* s30 = buffer.sample(30, 7, 1);
  const PoseSample* s33 = buffer.sample(33, 7, 1);
  ASSERT_NE(s30, nullptr);
  ASSERT_NE(s33, nullptr);
  EXPECT_NE(s30->pending, nullptr);  // the dictionary record at 33 did not need its codes
  EXPECT_NE(s33->pending, nullptr);
  // A record without a recipe, coded against both: their codes are computed first.
  const protocol::QuantizedPose at36 = server.quantized(36, &at33);
  protocol::PoseReference from33_30;
  from33_30.baseline = &at33;
  from33_30.baseline_age = 3;
  from33_30.prior = &at30;
  from33_30.prior_age = 3;
  const std::vector<uint8_t> plain = server.encode(at36, from33_30);
  ASSERT_FALSE(protocol::peek_pose_record(plain).from_dictionary);
  const PartResult r = buffer.apply(snapshot(36, 33, 30, {protocol::EntityPose{7, 1, plain}}), registry, 0);
  ASSERT_TRUE(r.completed) << r.first_error;
  s30 = buffer.sample(30, 7, 1);  // the pool may have grown (samples move)
  s33 = buffer.sample(33, 7, 1);
  EXPECT_EQ(s30->pending, nullptr);
  EXPECT_EQ(s33->pending, nullptr);
  EXPECT_EQ(s30->quantized.values, at30.values);
  EXPECT_EQ(s33->quantized.values, at33.values);
  const PoseSample* s36 = buffer.sample(36, 7, 1);
  ASSERT_NE(s36, nullptr);
  ASSERT_TRUE(s36->decoded());
  EXPECT_EQ(s36->quantized.values, at36.values);
  EXPECT_FALSE(s36->recipe_verified);
}

TEST_F(SnapshotBufferTest, ARecipeIsVerifiedOnlyWhenItReproducesItsPose) {
  PoseSource server(rig, 1);
  const protocol::QuantizedPose exact = server.quantized_with_recipe(30);
  protocol::QuantizedPose edited = exact;
  edited.recipe.inputs[0].time_us += 200'000;  // names another moment of the clip than the pose
  const PartResult r = buffer.apply(snapshot(30, kNoTick, kNoTick,
                                             {protocol::EntityPose{7, 1, server.encode_with_dictionary(exact, {})},
                                              protocol::EntityPose{8, 1, server.encode_with_dictionary(edited, {})}}),
                                    registry, 0);
  ASSERT_TRUE(r.completed) << r.first_error;
  const PoseSample* a = buffer.sample(30, 7, 1);
  const PoseSample* b = buffer.sample(30, 8, 1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(a->recipe_verified);
  EXPECT_FALSE(b->recipe_verified);
  // Both decode to the server's pose; only the recipe differs.
  ASSERT_TRUE(a->decoded());
  EXPECT_EQ(a->quantized.values, exact.values);
  EXPECT_EQ(b->quantized.values, exact.values);
  EXPECT_EQ(b->quantized.recipe, edited.recipe);
}

TEST_F(SnapshotBufferTest, EntityLeftOutOfASnapshotKeepsItsBaselinePose) {
  ASSERT_TRUE(buffer.apply(snapshot(3, kNoTick, kNoTick,
                                    {record(7, 3, kNoTick, kNoTick), record(8, 3, kNoTick, kNoTick)}),
                           registry, 0).completed);
  const PartResult r = buffer.apply(snapshot(6, 3, kNoTick, {record(7, 6, 3, kNoTick)}), registry, 0);
  ASSERT_TRUE(r.completed);
  const SnapshotView* v = buffer.view(6);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->entries.size(), 2u);
  EXPECT_FALSE(v->find(8)->decoded);
  // The same pooled pose, not a copy.
  EXPECT_EQ(buffer.sample(6, 8, 1), buffer.sample(3, 8, 1));
  // A later record of entity 8 coded against tick 6 (where it was carried) decodes.
  store(6, 8, server_pose(3, 8));
  EXPECT_TRUE(buffer.apply(snapshot(9, 6, 3, {record(8, 9, 6, 3)}), registry, 0).completed);
  EXPECT_EQ(buffer.sample(9, 8, 1)->quantized, server_pose(9, 8));
}

TEST_F(SnapshotBufferTest, ViewCompletesAndIsAckedOnlyWhenEveryPartArrived) {
  PartResult r = buffer.apply(snapshot(3, kNoTick, kNoTick, {record(8, 3, kNoTick, kNoTick)}, 1, 2),
                              registry, 0);
  EXPECT_TRUE(r.new_tick);
  EXPECT_FALSE(r.completed);
  EXPECT_EQ(buffer.ack().newest_tick, kNoTick);
  // The decoded record already serves interpolation.
  EXPECT_NE(buffer.sample(3, 8, 1), nullptr);
  EXPECT_EQ(buffer.sample(3, 7, 1), nullptr);
  r = buffer.apply(snapshot(3, kNoTick, kNoTick, {record(7, 3, kNoTick, kNoTick)}, 0, 2), registry, 0);
  EXPECT_FALSE(r.new_tick);
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(buffer.ack().newest_tick, 3u);
}

TEST_F(SnapshotBufferTest, AckMaskNamesTheCompleteTicksBeforeTheNewest) {
  for (uint32_t tick : {3u, 6u, 12u}) {
    ASSERT_TRUE(buffer.apply(snapshot(tick, kNoTick, kNoTick, {record(7, tick, kNoTick, kNoTick)}),
                             registry, 0).completed);
  }
  // Tick 9 had two parts and only one arrived: not acked.
  (void)buffer.apply(snapshot(9, kNoTick, kNoTick, {record(7, 9, kNoTick, kNoTick)}, 0, 2), registry, 0);
  const protocol::Ack ack = buffer.ack();
  EXPECT_EQ(ack.newest_tick, 12u);
  EXPECT_EQ(ack.previous_mask, (1u << (12 - 1 - 6)) | (1u << (12 - 1 - 3)));
}

TEST_F(SnapshotBufferTest, RecordCodedAgainstABaselineTheClientLacksIsRefusedAndNotAcked) {
  // The server believes the client holds tick 3; the client never received it.
  (void)record(7, 3, kNoTick, kNoTick);
  const PartResult r = buffer.apply(snapshot(6, 3, kNoTick, {record(7, 6, 3, kNoTick)}), registry, 0);
  EXPECT_EQ(r.missing_reference, 1u);
  EXPECT_FALSE(r.completed);
  EXPECT_FALSE(r.first_error.empty());
  EXPECT_EQ(buffer.ack().newest_tick, kNoTick);
  EXPECT_EQ(buffer.sample(6, 7, 1), nullptr);
}

TEST_F(SnapshotBufferTest, RecordOfAnEntityWithoutSpawnBlocksCompletion) {
  const PartResult r = buffer.apply(
      snapshot(3, kNoTick, kNoTick, {record(7, 3, kNoTick, kNoTick), record(99, 3, kNoTick, kNoTick)}),
      registry, 0);
  EXPECT_EQ(r.unknown_entity, 1u);
  EXPECT_EQ(r.decoded, 1u);
  EXPECT_FALSE(r.completed);
  EXPECT_NE(buffer.sample(3, 7, 1), nullptr);
}

TEST_F(SnapshotBufferTest, RecordOfAnOlderGenerationIsIgnored) {
  spawn(7, 2);  // id 7 reused
  const PartResult r = buffer.apply(
      snapshot(3, kNoTick, kNoTick, {record(7, 3, kNoTick, kNoTick, 1)}), registry, 0);
  EXPECT_EQ(r.stale_generation, 1u);
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(buffer.sample(3, 7, 1), nullptr);
}

TEST_F(SnapshotBufferTest, DuplicateAndInconsistentPartsChangeNothing) {
  const protocol::Snapshot first = snapshot(3, kNoTick, kNoTick, {record(7, 3, kNoTick, kNoTick)}, 0, 2);
  EXPECT_EQ(buffer.apply(first, registry, 0).outcome, PartOutcome::kApplied);
  EXPECT_EQ(buffer.apply(first, registry, 0).outcome, PartOutcome::kDuplicate);
  protocol::Snapshot other = snapshot(3, 0, kNoTick, {record(8, 3, kNoTick, kNoTick)}, 1, 2);
  EXPECT_EQ(buffer.apply(other, registry, 0).outcome, PartOutcome::kInconsistent);
  EXPECT_EQ(buffer.view(3)->entries.size(), 1u);
  EXPECT_FALSE(buffer.view(3)->complete);
}

TEST_F(SnapshotBufferTest, FullBufferEvictsTheOldestAndRefusesOlderTicks) {
  SnapshotBuffer small(SnapshotBufferSettings{2, 16});
  small.set_tick_rate(60);
  for (uint32_t tick : {10u, 20u}) {
    ASSERT_TRUE(small.apply(snapshot(tick, kNoTick, kNoTick, {record(7, tick, kNoTick, kNoTick)}),
                            registry, 0).completed);
  }
  EXPECT_EQ(small.apply(snapshot(5, kNoTick, kNoTick, {record(7, 5, kNoTick, kNoTick)}), registry, 0).outcome,
            PartOutcome::kTooOld);
  EXPECT_TRUE(small.apply(snapshot(30, kNoTick, kNoTick, {record(7, 30, kNoTick, kNoTick)}), registry, 0)
                  .completed);
  EXPECT_EQ(small.view(10), nullptr);
  EXPECT_EQ(small.size(), 2u);
  EXPECT_EQ(small.pooled_poses(), 2u);
}

TEST_F(SnapshotBufferTest, WindowFindsTheUsableNeighboursOfARenderTime) {
  for (uint32_t tick : {3u, 6u, 9u, 12u}) {
    std::vector<protocol::EntityPose> records{record(7, tick, kNoTick, kNoTick)};
    // Entity 8 is missing at tick 9 (its record went in a part that was lost).
    if (tick != 9) records.push_back(record(8, tick, kNoTick, kNoTick));
    (void)buffer.apply(snapshot(tick, kNoTick, kNoTick, records, 0, tick == 9 ? 2 : 1), registry, 0);
  }
  const int64_t r = buffer.tick_time_us(9) + 1000;  // just after tick 9
  const SampleWindow w7 = buffer.window(7, 1, r);
  EXPECT_EQ(w7.before.tick, 9u);
  EXPECT_EQ(w7.after.tick, 12u);
  EXPECT_EQ(w7.previous.tick, 6u);
  const SampleWindow w8 = buffer.window(8, 1, r);
  EXPECT_EQ(w8.before.tick, 6u);
  EXPECT_EQ(w8.after.tick, 12u);
  EXPECT_EQ(w8.previous.tick, 3u);
  const SampleWindow late = buffer.window(7, 1, buffer.tick_time_us(20));
  EXPECT_EQ(late.before.tick, 12u);
  EXPECT_FALSE(late.after);
  EXPECT_EQ(buffer.depth_after(buffer.tick_time_us(6)), 2u);
}

TEST_F(SnapshotBufferTest, AFrameSplitAndAnyEntityHintFindTheSameWindowAsTheRenderTime) {
  for (uint32_t tick : {3u, 6u, 9u, 12u}) {
    std::vector<protocol::EntityPose> records{record(7, tick, kNoTick, kNoTick)};
    if (tick != 9) records.push_back(record(8, tick, kNoTick, kNoTick));
    (void)buffer.apply(snapshot(tick, kNoTick, kNoTick, records, 0, tick == 9 ? 2 : 1), registry, 0);
  }
  const auto same = [](const SampleRef& x, const SampleRef& y) {
    return x.sample == y.sample && x.tick == y.tick && x.time_us == y.time_us && x.own_record == y.own_record;
  };
  for (int64_t r : {int64_t{0}, buffer.tick_time_us(3), buffer.tick_time_us(9) + 1000, buffer.tick_time_us(12),
                    buffer.tick_time_us(40)}) {
    const ViewSplit split = buffer.locate(r);
    for (uint32_t id : {7u, 8u}) {
      const SampleWindow plain = buffer.window(id, 1, r);
      for (std::size_t hint : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000}}) {
        const SampleWindow hinted = buffer.window(id, 1, split, hint);
        EXPECT_TRUE(same(plain.before, hinted.before) && same(plain.after, hinted.after) &&
                    same(plain.previous, hinted.previous))
            << "entity " << id << " r " << r << " hint " << hint;
      }
    }
  }
  // A new tick rate re-times the held views.
  buffer.set_tick_rate(30);
  const SampleWindow slow = buffer.window(7, 1, buffer.tick_time_us(9) + 1000);
  EXPECT_EQ(slow.before.tick, 9u);
  EXPECT_EQ(slow.before.time_us, buffer.tick_time_us(9));
  EXPECT_EQ(slow.after.tick, 12u);
}

}  // namespace
}  // namespace posecast::client
