// PaletteBatchJob: bit for bit LocalToModelJob + PaletteJob for every entity of a batch, on
// random skeletons (mesh node or not, identity or not, singular), the generated rig and Fox
// sampled at different times, and Validate() on every invalid setup.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "posecast/gltf_import.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/palette_batch.h"
#include "posecast/rig/model_source.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

// LocalToModelJob then PaletteJob; empty when either fails.
std::vector<glm::mat4> reference_palette(const Skeleton& s, std::span<const Transform> locals) {
  std::vector<glm::mat4> models(s.node_count());
  std::vector<glm::mat4> palette(s.joint_count());
  LocalToModelJob to_model{&s, locals, models};
  PaletteJob to_palette{&s, models, palette};
  if (!to_model.Run() || !to_palette.Run()) return {};
  return palette;
}

// Runs the batch on `poses` and checks each entity against reference_palette: the same bits,
// or, where the reference fails, an untouched palette and a clear bit in the returned mask;
// and each mesh-node world matrix against LocalToModelJob's.
// `streaming`: with non-temporal stores (the vectors' blocks are 16-byte aligned, so on x86
// the job takes them).
void expect_batch_matches(const Skeleton& s, const std::vector<std::vector<Transform>>& poses,
                          bool streaming = false) {
  const glm::mat4 sentinel(7.0f);
  std::vector<std::vector<glm::mat4>> palettes(poses.size(),
                                               std::vector<glm::mat4>(s.joint_count(), sentinel));
  std::vector<std::span<const Transform>> locals(poses.begin(), poses.end());
  std::vector<std::span<glm::mat4>> outputs(palettes.begin(), palettes.end());
  std::vector<float> scratch(PaletteBatchJob::scratch_floats(s));
  std::vector<glm::mat4> mesh_models(poses.size(), sentinel);
  PaletteBatchJob job{&s, locals, outputs, scratch};
  job.streaming_stores = streaming;
  job.mesh_models = mesh_models;
  const uint32_t written = job.Run();
  for (std::size_t e = 0; e < poses.size(); ++e) {
    // The mesh node's world matrix, singular or not: LocalToModelJob's bits.
    std::vector<glm::mat4> models(s.node_count());
    ASSERT_TRUE((LocalToModelJob{&s, poses[e], models}.Run()));
    const glm::mat4 mesh_model =
        s.mesh_node >= 0 ? models[static_cast<std::size_t>(s.mesh_node)] : glm::mat4(1.0f);
    EXPECT_EQ(std::memcmp(&mesh_models[e], &mesh_model, sizeof(glm::mat4)), 0) << "entity " << e;
    const std::vector<glm::mat4> expected = reference_palette(s, poses[e]);
    if (expected.empty()) {
      EXPECT_EQ(written & (1u << e), 0u) << "entity " << e;
      for (const glm::mat4& m : palettes[e]) EXPECT_EQ(m, sentinel) << "entity " << e;
      continue;
    }
    EXPECT_NE(written & (1u << e), 0u) << "entity " << e;
    ASSERT_EQ(palettes[e].size(), expected.size());
    for (std::size_t j = 0; j < expected.size(); ++j) {
      EXPECT_EQ(std::memcmp(&palettes[e][j], &expected[j], sizeof(glm::mat4)), 0)
          << "entity " << e << " joint " << j;
    }
  }
}

glm::quat random_rotation(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  // Not normalised on purpose: the jobs take the stored bits as they are.
  return glm::quat(u(rng), u(rng), u(rng), u(rng));
}

Transform random_transform(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  Transform t;
  t.translation = {u(rng), u(rng), u(rng)};
  t.rotation = random_rotation(rng);
  t.scale = {u(rng), u(rng), u(rng)};  // negative and tiny scales included
  return t;
}

// A random hierarchy: node i's parent is a random earlier node or none.
Skeleton random_skeleton(std::mt19937& rng, int nodes, int joints, int mesh_node) {
  Skeleton s;
  for (int i = 0; i < nodes; ++i) {
    const int parent = i == 0 ? -1 : static_cast<int>(rng() % static_cast<unsigned>(i + 1)) - 1;
    s.parents.push_back(static_cast<int16_t>(parent));
    s.rest.push_back(random_transform(rng));
    s.names.push_back("node");
    s.source_nodes.push_back(i);
  }
  for (int j = 0; j < joints; ++j) {
    s.joint_nodes.push_back(static_cast<uint16_t>(rng() % static_cast<unsigned>(nodes)));
    glm::mat4 ibm = glm::mat4(1.0f);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r) ibm[c][r] = u(rng);
    s.inverse_bind.push_back(ibm);
  }
  s.mesh_node = mesh_node;
  return s;
}

std::vector<std::vector<Transform>> random_poses(std::mt19937& rng, const Skeleton& s, std::size_t count) {
  std::vector<std::vector<Transform>> poses(count);
  for (auto& pose : poses)
    for (std::size_t i = 0; i < s.node_count(); ++i) pose.push_back(random_transform(rng));
  return poses;
}

TEST(PaletteBatch, MatchesThePerEntityJobsOnRandomSkeletonsForEveryBatchSize) {
  for (bool streaming : {false, true}) {
    std::mt19937 rng(2026);
    for (int mesh_node : {-1, 0, 3}) {
      for (std::size_t count = 1; count <= kPaletteBatchSize; ++count) {
        SCOPED_TRACE(testing::Message() << "mesh node " << mesh_node << ", " << count
                                        << " entities, streaming stores " << streaming);
        const Skeleton s = random_skeleton(rng, 30, 20, mesh_node);
        expect_batch_matches(s, random_poses(rng, s, count), streaming);
      }
    }
  }
}

// Lanes whose mesh node world matrix is exactly the identity skip the mesh product (as
// PaletteJob does), next to lanes that take it; "exactly" is bit for bit, so a -0.0 entry
// takes the product; a lane whose mesh matrix is singular is not written while the others are.
TEST(PaletteBatch, DecidesTheMeshPathPerEntity) {
  std::mt19937 rng(7);
  Skeleton s = random_skeleton(rng, 12, 9, 0);
  std::vector<std::vector<Transform>> poses = random_poses(rng, s, kPaletteBatchSize);
  poses[1][0] = Transform::identity();  // world(mesh) == identity: no product
  poses[4][0] = Transform::identity();
  poses[5][0] = Transform::identity();
  poses[5][0].translation.y = -0.0f;  // equal to the identity as floats, not as bits
  poses[2][0].scale = {0.0f, 1.0f, 1.0f};  // singular: not written
  poses[6][0].scale = {1.0f, 0.0f, 1.0f};
  ASSERT_TRUE(reference_palette(s, poses[2]).empty());
  expect_batch_matches(s, poses);
}

// The project's generated rig, through the loader the programs use ("gen-rig:N").
Model generated_rig(uint32_t joints) {
  Result<Model> model = rig::load_model_source("gen-rig:" + std::to_string(joints));
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return model.ok() ? std::move(model).value() : Model{};
}

// Each entity on its own clip and time, as a World's batch would be.
void expect_sampled_batches_match(const Rig& rig) {
  const Skeleton& s = rig.skeleton;
  std::vector<std::vector<Transform>> poses;
  for (std::size_t e = 0; e < kPaletteBatchSize; ++e) {
    const Clip& clip = rig.clips[e % rig.clips.size()];
    std::vector<Transform> pose(s.node_count());
    std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
    SampleJob sample{&s, &clip, static_cast<int64_t>(e) * 123'457, cursor, pose};
    ASSERT_TRUE(sample.Run());
    poses.push_back(std::move(pose));
  }
  expect_batch_matches(s, poses);
  poses.resize(3);
  expect_batch_matches(s, poses);
}

TEST(PaletteBatch, MatchesThePerEntityJobsOnTheGeneratedRig) {
  for (uint32_t joints : {24u, 128u}) {
    const Model model = generated_rig(joints);
    ASSERT_EQ(model.rigs.size(), 1u);
    expect_sampled_batches_match(model.rigs[0]);
  }
}

TEST(PaletteBatch, MatchesThePerEntityJobsOnFox) {
  const std::filesystem::path path = std::filesystem::path(POSECAST_ASSETS_DIR) / "Fox.glb";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "Fox.glb not available in " POSECAST_ASSETS_DIR;
  Result<Model> model = import_gltf_file(path.string());
  ASSERT_TRUE(model.ok()) << model.error().message;
  expect_sampled_batches_match(model.value().rigs[0]);
}

TEST(PaletteBatch, ValidateRefusesBadSetups) {
  std::mt19937 rng(3);
  const Skeleton s = random_skeleton(rng, 6, 4, -1);
  std::vector<std::vector<Transform>> poses = random_poses(rng, s, kPaletteBatchSize + 1);
  std::vector<std::vector<glm::mat4>> palettes(poses.size(), std::vector<glm::mat4>(s.joint_count()));
  std::vector<std::span<const Transform>> locals(poses.begin(), poses.end());
  std::vector<std::span<glm::mat4>> outputs(palettes.begin(), palettes.end());
  std::vector<float> scratch(PaletteBatchJob::scratch_floats(s));
  const auto job = [&](std::size_t count) {
    return PaletteBatchJob{&s, std::span(locals).first(count), std::span(outputs).first(count), scratch};
  };
  EXPECT_TRUE(job(2).Validate());
  EXPECT_FALSE(job(0).Validate());
  EXPECT_FALSE(job(kPaletteBatchSize + 1).Validate());
  EXPECT_EQ(job(kPaletteBatchSize + 1).Run(), 0u);

  PaletteBatchJob mismatched = job(2);
  mismatched.palettes = std::span(outputs).first(1);
  EXPECT_FALSE(mismatched.Validate());
  PaletteBatchJob no_skeleton = job(2);
  no_skeleton.skeleton = nullptr;
  EXPECT_FALSE(no_skeleton.Validate());
  std::vector<glm::mat4> one_mesh_model(1);
  PaletteBatchJob short_mesh_models = job(2);
  short_mesh_models.mesh_models = one_mesh_model;
  EXPECT_FALSE(short_mesh_models.Validate());
  PaletteBatchJob small_scratch = job(2);
  small_scratch.scratch = std::span(scratch).first(scratch.size() - 1);
  EXPECT_FALSE(small_scratch.Validate());

  const std::vector<Transform> short_pose(s.node_count() - 1);
  std::vector<std::span<const Transform>> bad_locals = {locals[0], short_pose};
  PaletteBatchJob short_locals = job(2);
  short_locals.locals = bad_locals;
  EXPECT_FALSE(short_locals.Validate());

  // A parent after its child and a joint outside the nodes: refused unless the caller vouches
  // for the skeleton (assets_validated).
  Skeleton bad_parent = s;
  bad_parent.parents[2] = 4;
  PaletteBatchJob with_bad_parent = job(2);
  with_bad_parent.skeleton = &bad_parent;
  EXPECT_FALSE(with_bad_parent.Validate());
  Skeleton bad_joint = s;
  bad_joint.joint_nodes[0] = static_cast<uint16_t>(s.node_count());
  PaletteBatchJob with_bad_joint = job(2);
  with_bad_joint.skeleton = &bad_joint;
  EXPECT_FALSE(with_bad_joint.Validate());
}

}  // namespace
}  // namespace posecast
