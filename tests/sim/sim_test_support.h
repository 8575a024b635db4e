#pragma once
// Helpers for the World tests: a world with the test rig, command shorthands, and reference
// evaluations built from the core jobs directly (what the world should compute).

#include <cstring>
#include <vector>

#include "posecast/blending.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/sampling.h"
#include "posecast/sim/world.h"
#include "test_rig.h"

namespace posecast::test {

using namespace posecast::sim;  // NOLINT: test shorthand

inline MotionSpec clip_motion(uint16_t clip, SpeedQ16 speed = kSpeedOne, int64_t offset_us = 0,
                              WrapMode wrap = WrapMode::kLoop) {
  MotionSpec m;
  m.count = 1;
  m.clips[0] = ClipWeight{clip, 1.0f};
  m.speed = speed;
  m.start_offset_us = offset_us;
  m.wrap = wrap;
  return m;
}

inline MotionSpec blend_motion(uint16_t a, float wa, uint16_t b, float wb, int64_t offset_us = 0) {
  MotionSpec m;
  m.count = 2;
  m.clips[0] = ClipWeight{a, wa};
  m.clips[1] = ClipWeight{b, wb};
  m.start_offset_us = offset_us;
  return m;
}

inline Command at(uint64_t tick, EntityId entity, CommandBody body) {
  return Command{tick, entity, std::move(body)};
}

// The clip sampled at a clip-local time (the sampler's clamping, no wrapping).
inline std::vector<Transform> sample(const Rig& rig, uint16_t clip, int64_t time_us) {
  std::vector<Transform> out(rig.skeleton.node_count());
  SamplingCursor cursor;
  cursor.reset(rig.clips[clip]);
  SampleJob job;
  job.skeleton = &rig.skeleton;
  job.clip = &rig.clips[clip];
  job.time_us = time_us;
  job.cursor = cursor.keys;
  job.output = out;
  EXPECT_TRUE(job.Run());
  return out;
}

inline std::vector<glm::mat4> palette_of(const Rig& rig, const std::vector<Transform>& locals) {
  std::vector<glm::mat4> models(rig.skeleton.node_count());
  std::vector<glm::mat4> palette(rig.skeleton.joint_count());
  EXPECT_TRUE((LocalToModelJob{&rig.skeleton, locals, models}.Run()));
  EXPECT_TRUE((PaletteJob{&rig.skeleton, models, palette}.Run()));
  return palette;
}

inline bool same_bits(std::span<const glm::mat4> a, std::span<const glm::mat4> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

inline bool same_bits(const Transform& a, const Transform& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct TestWorld {
  explicit TestWorld(unsigned threads = 1, uint32_t rate = 60)
      : TestWorld(WorldOptions{rate, threads, true}) {}
  explicit TestWorld(const WorldOptions& options) : world(options) {
    Result<ModelId> id = world.add_model(make_test_model());
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    model = id.ok() ? id.value() : 0;
  }
  const Rig& rig() const { return world.model(model)->rigs[0]; }
  void spawn(EntityId id, uint64_t tick = 0) { world.submit(0, at(tick, id, SpawnCommand{model, 0, {}})); }
  void run_to(uint64_t tick) {
    while (world.tick_index() < tick) world.tick();
  }
  std::vector<Transform> local_pose(EntityId id) {
    std::vector<Transform> out(rig().skeleton.node_count());
    EXPECT_TRUE(world.evaluate_local_pose(id, out));
    return out;
  }

  World world;
  ModelId model = 0;
};

}  // namespace posecast::test
