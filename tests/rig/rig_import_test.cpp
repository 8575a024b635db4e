// The generated rig through the project's own pipeline: import_gltf_memory, then SampleJob,
// LocalToModelJob and PaletteJob. The rest pose must give an identity palette, every clip must
// give finite palettes, and each clip's end must match its start (seamless loops).

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "glb_test_reader.h"
#include "posecast/gltf_import.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/sampling.h"

namespace posecast::rig {
namespace {

using test::kClipNames;

Result<Model> import_rig(uint32_t joints) {
  return import_gltf_memory(test::rig_bytes(joints), "gen-rig:" + std::to_string(joints));
}

std::vector<glm::mat4> palette_of(const Skeleton& skeleton, const std::vector<Transform>& locals) {
  std::vector<glm::mat4> models(skeleton.node_count());
  std::vector<glm::mat4> palette(skeleton.joint_count());
  LocalToModelJob l2m;
  l2m.skeleton = &skeleton;
  l2m.locals = locals;
  l2m.models = models;
  EXPECT_TRUE(l2m.Run());
  PaletteJob pj;
  pj.skeleton = &skeleton;
  pj.models = models;
  pj.palette = palette;
  EXPECT_TRUE(pj.Run());
  return palette;
}

std::vector<Transform> sample(const Skeleton& skeleton, const Clip& clip, int64_t time_us) {
  std::vector<Transform> locals(skeleton.node_count());
  SamplingCursor cursor;
  cursor.reset(clip);
  SampleJob job;
  job.skeleton = &skeleton;
  job.clip = &clip;
  job.time_us = time_us;
  job.cursor = cursor.keys;
  job.output = locals;
  EXPECT_TRUE(job.Run()) << clip.name;
  return locals;
}

TEST(RigImport, ImporterLoadsEveryGeneratedRigWithNJointsAndTheSixClips) {
  for (uint32_t n : {2u, 3u, 24u, 128u, 256u, 257u, 512u}) {
    SCOPED_TRACE(n);
    Result<Model> model = import_rig(n);
    ASSERT_TRUE(model.ok()) << model.error().message;
    ASSERT_TRUE(model->has_skins);
    ASSERT_EQ(model->rigs.size(), 1u);
    const Rig& rig = model->rigs[0];
    EXPECT_EQ(rig.skeleton.joint_count(), n);
    EXPECT_TRUE(rig.skeleton.validate().ok());
    ASSERT_EQ(rig.clips.size(), kClipNames.size());
    for (std::size_t c = 0; c < kClipNames.size(); ++c) {
      EXPECT_EQ(rig.clips[c].name, kClipNames[c]);
      EXPECT_EQ(model->find_clip(kClipNames[c]), static_cast<int>(c));
      EXPECT_TRUE(rig.clips[c].validate(rig.skeleton).ok()) << kClipNames[c];
      EXPECT_GT(rig.clips[c].duration_us, 0);
    }
    ASSERT_EQ(rig.meshes.size(), 1u);
    EXPECT_GT(rig.meshes[0].positions.size(), 0u);
    EXPECT_EQ(rig.meshes[0].joints.size(), rig.meshes[0].positions.size());
    EXPECT_EQ(model->images.size(), 1u);
  }
}

TEST(RigImport, WalkAndRunKeepTheirLengths) {
  Result<Model> model = import_rig(24);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model->rigs[0];
  EXPECT_EQ(rig.clips[static_cast<std::size_t>(model->find_clip("walk"))].duration_us, 1000000);
  EXPECT_EQ(rig.clips[static_cast<std::size_t>(model->find_clip("run"))].duration_us, 700000);
}

TEST(RigImport, RestPosePaletteIsIdentity) {
  for (uint32_t n : {2u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    Result<Model> model = import_rig(n);
    ASSERT_TRUE(model.ok()) << model.error().message;
    const Skeleton& skeleton = model->rigs[0].skeleton;
    const std::vector<glm::mat4> palette = palette_of(skeleton, skeleton.rest);
    ASSERT_EQ(palette.size(), n);
    for (std::size_t j = 0; j < palette.size(); ++j)
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r)
          ASSERT_NEAR(palette[j][c][r], c == r ? 1.0f : 0.0f, 1e-5f) << "joint " << j;
  }
}

TEST(RigImport, EveryClipGivesFinitePalettesAndLoopsSeamlessly) {
  for (uint32_t n : {2u, 24u, 128u}) {
    SCOPED_TRACE(n);
    Result<Model> model = import_rig(n);
    ASSERT_TRUE(model.ok()) << model.error().message;
    const Rig& rig = model->rigs[0];
    for (const Clip& clip : rig.clips) {
      for (int step = 0; step <= 8; ++step) {
        const std::vector<glm::mat4> palette =
            palette_of(rig.skeleton, sample(rig.skeleton, clip, clip.duration_us * step / 8));
        for (const glm::mat4& m : palette)
          for (int c = 0; c < 4; ++c)
            for (int r = 0; r < 4; ++r) ASSERT_TRUE(std::isfinite(m[c][r])) << clip.name;
      }
      const std::vector<Transform> start = sample(rig.skeleton, clip, 0);
      const std::vector<Transform> end = sample(rig.skeleton, clip, clip.duration_us);
      // The file's first and last keys are bit-identical (RigClips.EveryClipLoopsSeamlessly); the
      // sampler may renormalise a rotation on one path and not the other, hence the tolerance.
      for (std::size_t i = 0; i < start.size(); ++i) {
        for (int c = 0; c < 3; ++c)
          EXPECT_NEAR(start[i].translation[c], end[i].translation[c], 1e-6f) << clip.name << " node " << i;
        for (int c = 0; c < 4; ++c)
          EXPECT_NEAR(start[i].rotation[c], end[i].rotation[c], 1e-6f) << clip.name << " node " << i;
      }
    }
  }
}

// The benchmark rig: over a walk cycle, every joint's local rotation changes.
TEST(RigImport, WalkMovesEveryJointOfTheBenchmarkRig) {
  Result<Model> model = import_rig(128);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model->rigs[0];
  const Clip& walk = rig.clips[static_cast<std::size_t>(model->find_clip("walk"))];
  const std::vector<Transform> first = sample(rig.skeleton, walk, 0);
  std::vector<bool> moved(rig.skeleton.joint_count(), false);
  for (int step = 1; step < 10; ++step) {
    const std::vector<Transform> pose = sample(rig.skeleton, walk, walk.duration_us * step / 10);
    for (std::size_t j = 0; j < moved.size(); ++j) {
      const std::size_t node = rig.skeleton.joint_nodes[j];
      if (pose[node].rotation != first[node].rotation) moved[j] = true;
    }
  }
  for (std::size_t j = 0; j < moved.size(); ++j)
    EXPECT_TRUE(moved[j]) << rig.skeleton.names[rig.skeleton.joint_nodes[j]];
}

}  // namespace
}  // namespace posecast::rig
