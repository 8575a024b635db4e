// Crossfade recipes (docs/codec.md "Recipes"): the server attaches both motions' clips and the
// fade state to the poses of an entity whose layer 0 crossfades from a playing motion, and the
// clip dictionary evaluates that recipe to the World's pose bit for bit at every tick of the
// fade; an interrupted crossfade (fading from a frozen pose) carries the chain it froze, and a
// fade in from the rest pose the rest pose as its source.

#include <cstring>
#include <map>

#include "posecast/protocol/clip_dictionary.h"
#include "posecast/sim/world.h"
#include "server_fixture.h"

namespace posecast::test {
namespace {

class CrossfadeRecipes : public ServerFixture {
 protected:
  // Steps one tick; before it (no command queued for it), keeps the World's pose of `id` for
  // that tick: the pose the tick's evaluation computes from the same state.
  void step_capturing(sim::EntityId id, bool command_queued) {
    const auto tick = static_cast<uint32_t>(server->world().tick_index());
    if (!command_queued) {
      std::vector<Transform> pose(generated_rig()->rigs[0].skeleton.node_count());
      if (server->world().evaluate_local_pose(id, pose)) world_pose[tick] = std::move(pose);
    }
    step();
  }

  // Starts a server sending every tick (a snapshot, so a quantised pose and its recipe, every
  // tick) with one connected client (poses are quantised on the ticks some client is due) and
  // one entity playing a two-clip blend (clips 0 and 1 at 0.6 / 0.4) at 1.25x; its quantised
  // poses are kept in `quantized`. Returns the entity, or 0 when the client could not
  // connect (the server's ids start at 1,000,000).
  static constexpr sim::SpeedQ16 kBlendSpeed = 5 * (1 << 16) / 4;  // 1.25x
  sim::EntityId start_blend_entity() {
    server::ServerOptions options;
    options.send_rate_hz = 60;
    start(options);
    const sim::EntityId id = server->spawn(0, 0, server::Vec3{0, 0, 0});
    sim::MotionSpec blend;
    blend.count = 2;
    blend.clips[0] = sim::ClipWeight{0, 0.6f};
    blend.clips[1] = sim::ClipWeight{1, 0.4f};
    blend.speed = kBlendSpeed;
    server->play(id, 0, blend);
    server->on_pose_quantized(
        [this, id](uint32_t tick, sim::EntityId e, uint16_t, const protocol::QuantizedPose& pose) {
          if (e == id) quantized[tick] = pose;
        });
    RawClient& client = add_client();
    return connect(client, 1).client_id != 0u ? id : sim::EntityId{};
  }

  static bool same_bits(const std::vector<Transform>& a, const std::vector<Transform>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)) == 0;
  }

  std::map<uint32_t, std::vector<Transform>> world_pose;
  std::map<uint32_t, protocol::QuantizedPose> quantized;
};

TEST_F(CrossfadeRecipes, EvaluateToTheWorldsPoseAtEveryTickOfTheFadeAndEndAsPlainRecipes) {
  // A two-clip blend at 1.25x fades to a single clip at 0.75x.
  const sim::EntityId id = start_blend_entity();
  ASSERT_NE(id, sim::EntityId{});
  for (int i = 0; i < 12; ++i) step_capturing(id, false);
  sim::MotionSpec target = clip_motion(2);
  target.speed = 3 * (1 << 16) / 4;
  const auto fade_tick = static_cast<uint32_t>(server->world().tick_index());
  server->crossfade(id, 0, target, 400'000);  // 24 ticks
  step_capturing(id, true);
  for (int i = 0; i < 40; ++i) step_capturing(id, false);

  const Rig& rig = generated_rig()->rigs[0];
  protocol::ClipDictionary dictionary(rig.skeleton, rig.clips, *server->pose_format(0, 0));
  std::vector<Transform> evaluated(rig.skeleton.node_count());
  protocol::QuantizedPose predicted;
  std::size_t crossfades = 0, plain_after = 0, checked = 0;
  for (const auto& [tick, pose] : quantized) {
    const protocol::PoseRecipe& recipe = pose.recipe;
    ASSERT_GT(recipe.count, 0) << "tick " << tick << ": every pose here is layer 0's alone";
    if (tick > fade_tick && tick < fade_tick + 24) {
      ASSERT_TRUE(recipe.crossfade()) << "tick " << tick;
      EXPECT_EQ(recipe.source_count, 2);
      EXPECT_EQ(recipe.target_count(), 1);
      EXPECT_EQ(recipe.source_speed, kBlendSpeed);
      EXPECT_EQ(recipe.speed, target.speed);
      EXPECT_EQ(recipe.fade_duration_us, 400'000);
      EXPECT_EQ(recipe.fade_elapsed_us, sim::tick_start_us(tick, 60) - sim::tick_start_us(fade_tick, 60));
      EXPECT_EQ(recipe.steady_us, recipe.fade_elapsed_us) << "the crossfade command began the segment";
      ++crossfades;
    }
    if (tick >= fade_tick + 24) {
      EXPECT_FALSE(recipe.crossfade()) << "tick " << tick << ": the fade has ended";
      EXPECT_EQ(recipe.count, 1);
      ++plain_after;
    }
    // The dictionary's evaluation is the World's pose bit for bit, and its quantisation the
    // server's codes (what lets the codec send a zero residual).
    auto world = world_pose.find(tick);
    if (world == world_pose.end()) continue;  // the handshake's ticks, the command's tick
    ASSERT_TRUE(dictionary.evaluate(recipe, evaluated)) << "tick " << tick;
    EXPECT_TRUE(same_bits(evaluated, world->second)) << "tick " << tick;
    ASSERT_TRUE(dictionary.predict(recipe, predicted));
    protocol::PoseQuantizer quantizer(*server->pose_format(0, 0));
    protocol::QuantizedPose direct;
    ASSERT_TRUE(quantizer.quantize(world->second, nullptr, direct));
    EXPECT_EQ(predicted.values, direct.values) << "tick " << tick;
    ++checked;
  }
  EXPECT_EQ(crossfades, 23u);  // every tick of the 24-tick fade after its first
  EXPECT_GE(plain_after, 16u);
  EXPECT_GE(checked, 50u);
}

// A crossfade started during another fades from the pose the layer showed then (a frozen
// pose). It carries a frozen recipe: the interrupted fade's two motions at their clip times
// then and its fade state (a chain of one mix), evaluated as that fade, with the new target
// mixed over it. A crossfade during that one freezes the frozen fade again: the chain grows by
// the interrupted target and its fade state, up to three mixes (sim::kMaxFrozenStages); a
// fourth interrupt leaves the pose without a recipe. At every tick the dictionary gives the
// World's pose bit for bit, and its quantisation (against the previous tick's pose, as the
// server's hysteresis) the server's own codes, the commands' ticks (alpha 0: the frozen pose
// itself) included.
TEST_F(CrossfadeRecipes, InterruptedCrossfadesCarryFrozenChainsThatEvaluateToTheWorldsPose) {
  const sim::EntityId id = start_blend_entity();  // a two-clip blend at 1.25x ...
  ASSERT_NE(id, sim::EntityId{});
  for (int i = 0; i < 6; ++i) step_capturing(id, false);
  sim::MotionSpec first = clip_motion(1);  // ... fades to clip 1 at 0.75x over 500 ms ...
  first.speed = 3 * (1 << 16) / 4;
  const auto first_tick = static_cast<uint32_t>(server->world().tick_index());
  server->crossfade(id, 0, first, 500'000);
  step_capturing(id, true);
  for (int i = 0; i < 6; ++i) step_capturing(id, false);
  // ... then, every few ticks, to another clip over 300 ms from the pose frozen then.
  const uint16_t targets[] = {2, 0, 1, 2};
  uint32_t interrupts[4];
  for (int n = 0; n < 4; ++n) {
    interrupts[n] = static_cast<uint32_t>(server->world().tick_index());
    server->crossfade(id, 0, clip_motion(targets[n]), 300'000, n == 0);
    step_capturing(id, true);
    for (int i = 0; i < 5; ++i) step_capturing(id, false);
  }

  const Rig& rig = generated_rig()->rigs[0];
  const protocol::PoseFormat& format = *server->pose_format(0, 0);
  protocol::ClipDictionary dictionary(rig.skeleton, rig.clips, format);
  std::vector<Transform> evaluated(rig.skeleton.node_count());
  protocol::QuantizedPose predicted;
  std::size_t frozen[4] = {0, 0, 0, 0}, against_world = 0, undescribed = 0;
  for (const auto& [tick, pose] : quantized) {
    if (tick < interrupts[0]) continue;
    const protocol::PoseRecipe& recipe = pose.recipe;
    int segment = 0;
    while (segment < 3 && tick >= interrupts[segment + 1]) ++segment;
    if (segment == 3) {
      EXPECT_EQ(recipe.count, 0) << "tick " << tick << ": a fourth interrupt is not described";
      ++undescribed;
      continue;
    }
    const uint32_t since = interrupts[segment];
    ASSERT_TRUE(recipe.frozen()) << "tick " << tick;
    EXPECT_EQ(recipe.frozen_source_count, 2);
    ASSERT_EQ(recipe.frozen_mix_count, segment + 1) << "tick " << tick;
    EXPECT_EQ(recipe.source_count, 3 + segment);
    EXPECT_EQ(recipe.target_count(), 1);
    EXPECT_EQ(recipe.source_speed, 0);
    EXPECT_EQ(recipe.speed, sim::kSpeedOne);
    EXPECT_EQ(recipe.frozen_mixes[0].duration_us, 500'000);
    EXPECT_EQ(recipe.frozen_mixes[0].elapsed_us,
              sim::tick_start_us(interrupts[0], 60) - sim::tick_start_us(first_tick, 60));
    for (int k = 1; k <= segment; ++k) {
      EXPECT_EQ(recipe.frozen_mixes[k].duration_us, 300'000);
      EXPECT_EQ(recipe.frozen_mixes[k].elapsed_us,
                sim::tick_start_us(interrupts[k], 60) - sim::tick_start_us(interrupts[k - 1], 60));
    }
    EXPECT_EQ(recipe.fade_duration_us, 300'000);
    EXPECT_EQ(recipe.fade_elapsed_us, sim::tick_start_us(tick, 60) - sim::tick_start_us(since, 60));
    EXPECT_EQ(recipe.steady_us, recipe.fade_elapsed_us);
    // The frozen inputs stay as they were at the interrupt.
    const protocol::PoseRecipe& at_interrupt = quantized.at(since).recipe;
    for (uint8_t i = 0; i < recipe.source_count; ++i) {
      EXPECT_TRUE(recipe.inputs[i] == at_interrupt.inputs[i]) << "tick " << tick << " input " << int{i};
    }
    // The server's own codes are the dictionary's prediction (a pose with a recipe is
    // quantised without a reference, as the dictionary predicts): what makes the record exact.
    ASSERT_TRUE(dictionary.predict(recipe, predicted)) << "tick " << tick;
    EXPECT_EQ(predicted.values, pose.values) << "tick " << tick;
    ++frozen[segment];
    auto world = world_pose.find(tick);
    if (world == world_pose.end()) continue;  // the command's tick
    ASSERT_TRUE(dictionary.evaluate(recipe, evaluated)) << "tick " << tick;
    EXPECT_TRUE(same_bits(evaluated, world->second)) << "tick " << tick;
    ++against_world;
  }
  for (int segment = 0; segment < 3; ++segment) {
    EXPECT_EQ(frozen[segment], 6u) << "segment " << segment;  // the interrupt's tick and 5 after
  }
  EXPECT_EQ(against_world, 15u);
  EXPECT_EQ(undescribed, 6u);
}

// A crossfade on a layer that played nothing fades in from the rest pose: a crossfade whose
// source is the rest pose (protocol::kRestInput) at speed 0. Interrupted, the rest pose is the
// base of a frozen chain. Both evaluate to the World's pose bit for bit.
TEST_F(CrossfadeRecipes, AFadeInFromTheRestPoseCarriesARecipeWithTheRestPoseAsItsSource) {
  server::ServerOptions options;
  options.send_rate_hz = 60;
  start(options);
  const sim::EntityId id = server->spawn(0, 0, server::Vec3{0, 0, 0});
  server->on_pose_quantized([&](uint32_t tick, sim::EntityId e, uint16_t, const protocol::QuantizedPose& pose) {
    if (e == id) quantized[tick] = pose;
  });
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  const auto fade_tick = static_cast<uint32_t>(server->world().tick_index());
  server->crossfade(id, 0, clip_motion(1), 300'000);
  step_capturing(id, true);
  for (int i = 0; i < 8; ++i) step_capturing(id, false);
  const auto interrupt = static_cast<uint32_t>(server->world().tick_index());
  server->crossfade(id, 0, clip_motion(2), 300'000);
  step_capturing(id, true);
  for (int i = 0; i < 8; ++i) step_capturing(id, false);

  const Rig& rig = generated_rig()->rigs[0];
  protocol::ClipDictionary dictionary(rig.skeleton, rig.clips, *server->pose_format(0, 0));
  std::vector<Transform> evaluated(rig.skeleton.node_count());
  std::size_t from_rest = 0, chained = 0;
  for (const auto& [tick, pose] : quantized) {
    if (tick < fade_tick) continue;
    const protocol::PoseRecipe& recipe = pose.recipe;
    ASSERT_TRUE(recipe.crossfade()) << "tick " << tick;
    EXPECT_TRUE(recipe.inputs[0] == protocol::kRestInput) << "tick " << tick;
    if (tick < interrupt) {
      EXPECT_FALSE(recipe.frozen()) << "tick " << tick;
      EXPECT_EQ(recipe.source_count, 1);
      EXPECT_EQ(recipe.source_speed, 0);
      ++from_rest;
    } else {
      ASSERT_TRUE(recipe.frozen()) << "tick " << tick;
      EXPECT_EQ(recipe.frozen_source_count, 1);
      EXPECT_EQ(recipe.frozen_mix_count, 1);
      EXPECT_EQ(recipe.source_count, 2);
      ++chained;
    }
    auto world = world_pose.find(tick);
    if (world == world_pose.end()) continue;  // the commands' ticks
    ASSERT_TRUE(dictionary.evaluate(recipe, evaluated)) << "tick " << tick;
    EXPECT_TRUE(same_bits(evaluated, world->second)) << "tick " << tick;
  }
  EXPECT_EQ(from_rest, 9u);
  EXPECT_EQ(chained, 9u);
}

}  // namespace
}  // namespace posecast::test
