// Crossfade recipes (docs/codec.md "Recipes"): the server attaches both motions' clips and the
// fade state to the poses of an entity whose layer 0 crossfades from a playing motion, and the
// clip dictionary evaluates that recipe to the World's pose bit for bit at every tick of the
// fade; an interrupted crossfade (fading from a frozen pose) carries none.

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

  static bool same_bits(const std::vector<Transform>& a, const std::vector<Transform>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)) == 0;
  }

  std::map<uint32_t, std::vector<Transform>> world_pose;
  std::map<uint32_t, protocol::QuantizedPose> quantized;
};

TEST_F(CrossfadeRecipes, EvaluateToTheWorldsPoseAtEveryTickOfTheFadeAndEndAsPlainRecipes) {
  server::ServerOptions options;
  options.send_rate_hz = 60;  // a snapshot, so a quantised pose and its recipe, every tick
  start(options);
  const sim::EntityId id = server->spawn(0, 0, server::Vec3{0, 0, 0});
  sim::MotionSpec blend;  // a two-clip blend at 1.25x fades to a single clip at 0.75x
  blend.count = 2;
  blend.clips[0] = sim::ClipWeight{0, 0.6f};
  blend.clips[1] = sim::ClipWeight{1, 0.4f};
  blend.speed = 5 * (1 << 16) / 4;
  server->play(id, 0, blend);
  server->on_pose_quantized([&](uint32_t tick, sim::EntityId e, uint16_t, const protocol::QuantizedPose& pose) {
    if (e == id) quantized[tick] = pose;
  });
  RawClient& client = add_client();  // poses are quantised on the ticks some client is due
  ASSERT_NE(connect(client, 1).client_id, 0u);
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
      EXPECT_EQ(recipe.source_speed, blend.speed);
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
    ASSERT_TRUE(dictionary.predict(recipe, nullptr, predicted));
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

TEST_F(CrossfadeRecipes, AnInterruptedCrossfadeFadingFromAFrozenPoseCarriesNoRecipe) {
  start();
  const sim::EntityId id = server->spawn(0, 0, server::Vec3{0, 0, 0});
  server->play(id, 0, clip_motion(0));
  server->on_pose_quantized([&](uint32_t tick, sim::EntityId e, uint16_t, const protocol::QuantizedPose& pose) {
    if (e == id) quantized[tick] = pose;
  });
  RawClient& client = add_client();
  ASSERT_NE(connect(client, 1).client_id, 0u);
  step(6);
  server->crossfade(id, 0, clip_motion(1), 500'000);
  step(6);
  const auto interrupted = static_cast<uint32_t>(server->world().tick_index());
  server->crossfade(id, 0, clip_motion(2), 300'000);  // during the first: fades from a frozen pose
  step(12);
  std::size_t frozen = 0, motion = 0;
  for (const auto& [tick, pose] : quantized) {
    if (tick >= interrupted && tick < interrupted + 18) {
      EXPECT_EQ(pose.recipe.count, 0) << "tick " << tick;
      ++frozen;
    } else if (pose.recipe.crossfade()) {
      ++motion;
    }
  }
  EXPECT_GE(frozen, 3u);
  EXPECT_GE(motion, 1u);
}

}  // namespace
}  // namespace posecast::test
