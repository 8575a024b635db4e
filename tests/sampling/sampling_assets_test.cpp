// The jobs on real files (Fox.glb, cesium_man.gltf from POSECAST_ASSETS_DIR; skipped when the
// folder is absent) and on the generated rig: rest-pose palettes, and golden palette hashes.
//
// THE GOLDEN HASHES BELOW ARE THE DETERMINISM CONTRACT. They come from gcc 12,
// x86-64, Release (the plain scalar formulation of the jobs at -O0 gives the same values) and
// must come out bit-identical on every compiler, optimisation
// level and CPU the project supports. A change to any of them means the palette bits changed: do it
// only deliberately (a fix in the importer, the rig generator, the sampler, det_math or the matrix
// code), say so in the commit, and expect every other golden (scenarios, recordings) to move
// with it.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "posecast/gltf_import.h"
#include "posecast/hash.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/rig/rig_generator.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

std::string asset(const char* name) { return std::string(POSECAST_ASSETS_DIR) + "/" + name; }

#define SKIP_WITHOUT_ASSET(path)                                                    \
  do {                                                                              \
    if (!std::filesystem::exists(path)) GTEST_SKIP() << (path) << " not available"; \
  } while (0)

Model load_file(const std::string& path) {
  Result<Model> model = import_gltf_file(path);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return model.ok() ? std::move(model).value() : Model{};
}

Model load_generated_rig(uint32_t joints) {
  rig::RigOptions options;
  options.joints = joints;
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(options);
  EXPECT_TRUE(glb.ok());
  if (!glb.ok()) return Model{};
  Result<Model> model = import_gltf_memory(glb.value(), "gen-rig:" + std::to_string(joints));
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  return model.ok() ? std::move(model).value() : Model{};
}

// Local pose -> palette through LocalToModelJob and PaletteJob.
std::vector<glm::mat4> palette_of(const Skeleton& skeleton, std::span<const Transform> locals) {
  std::vector<glm::mat4> models(skeleton.node_count());
  std::vector<glm::mat4> palette(skeleton.joint_count());
  LocalToModelJob to_model{&skeleton, locals, models};
  PaletteJob to_palette{&skeleton, models, palette};
  if (!to_model.Run() || !to_palette.Run()) return {};
  return palette;
}

// Largest |palette[j][c][r] - identity[c][r]| over all entries, and where.
struct IdentityError {
  double worst = 0.0;
  std::size_t joint = 0;
};

IdentityError distance_from_identity(const std::vector<glm::mat4>& palette) {
  IdentityError e;
  for (std::size_t j = 0; j < palette.size(); ++j)
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) {
        const double d = std::fabs(static_cast<double>(palette[j][c][r]) - (c == r ? 1.0 : 0.0));
        if (d > e.worst) e = {d, j};
      }
  return e;
}

// glTF: palette[j] = inverse(world(mesh)) * world(joint j) * inverse_bind[j]. With every node at
// its rest TRS this is the identity exactly when the file's inverse bind matrices are the
// inverses of the joints' rest world matrices relative to the mesh node, which holds for both
// files (checked here; the spec does not require it, see FileWhoseBindPoseIsNotItsRest...).
// Fox's worst entry, 9.5e-6, is a translation component (the model is about 100 units tall)
// at b_LeftLeg02_016; CesiumMan's is 6.6e-7.
void expect_rest_palette_is_identity(const std::string& path) {
  const Model model = load_file(path);
  ASSERT_FALSE(model.rigs.empty());
  for (const Rig& rig : model.rigs) {
    const std::vector<glm::mat4> palette = palette_of(rig.skeleton, rig.skeleton.rest);
    ASSERT_EQ(palette.size(), rig.skeleton.joint_count());
    const IdentityError e = distance_from_identity(palette);
    EXPECT_LE(e.worst, 1e-5) << path << " joint " << e.joint << " ("
                             << rig.skeleton.names[rig.skeleton.joint_nodes[e.joint]] << ")";
  }
}

TEST(RestPosePalette, FoxIsIdentity) {
  SKIP_WITHOUT_ASSET(asset("Fox.glb"));
  expect_rest_palette_is_identity(asset("Fox.glb"));
}

TEST(RestPosePalette, CesiumManIsIdentity) {
  SKIP_WITHOUT_ASSET(asset("cesium_man.gltf"));
  expect_rest_palette_is_identity(asset("cesium_man.gltf"));
}

TEST(RestPosePalette, GeneratedRigIsIdentity) {
  const Model model = load_generated_rig(24);
  ASSERT_EQ(model.rigs.size(), 1u);
  const Skeleton& skeleton = model.rigs[0].skeleton;
  EXPECT_LE(distance_from_identity(palette_of(skeleton, skeleton.rest)).worst, 1e-5);
}

// The spec never says the bind pose is the rest pose. SimpleSkin.gltf (the glTF tutorial's
// skin) has inverse bind matrices that both translate by (-0.5, -1, 0), i.e. binds both joints
// at (0.5, 1, 0), while the rest TRS puts both joints at (0, 1, 0) (node 1 translated by
// (0, 1, 0), node 2 at its parent). What the spec implies at rest is therefore
//   palette[j] = inverse(world(mesh)) * world(joint j) * inverse_bind[j]
//              = I * T(0, 1, 0) * T(-0.5, -1, 0) = T(-0.5, 0, 0)   for both joints,
// i.e. the mesh drawn half a unit left of where its vertices are. Checked both against that
// value and, bit for bit, against a direct evaluation with the scalar reference functions.
TEST(RestPosePalette, FileWhoseBindPoseIsNotItsRestFollowsTheFormula) {
  SKIP_WITHOUT_ASSET(asset("SimpleSkin.gltf"));
  const Model model = load_file(asset("SimpleSkin.gltf"));
  ASSERT_EQ(model.rigs.size(), 1u);
  const Skeleton& s = model.rigs[0].skeleton;
  const std::vector<glm::mat4> palette = palette_of(s, s.rest);
  ASSERT_EQ(palette.size(), s.joint_count());
  std::vector<glm::mat4> world(s.node_count());
  for (std::size_t i = 0; i < s.node_count(); ++i) {
    const glm::mat4 local = to_matrix(s.rest[i]);
    world[i] = s.parents[i] < 0 ? local : affine_mul(world[s.parents[i]], local);
  }
  glm::mat4 mesh_inverse(1.0f);
  if (s.mesh_node >= 0) {
    ASSERT_TRUE(affine_inverse(world[s.mesh_node], mesh_inverse));
  }
  for (std::size_t j = 0; j < s.joint_count(); ++j) {
    const glm::mat4 joint = world[s.joint_nodes[j]];
    const glm::mat4 expected =
        affine_mul(s.mesh_node >= 0 ? affine_mul(mesh_inverse, joint) : joint, s.inverse_bind[j]);
    EXPECT_EQ(palette[j], expected) << "joint " << j;
  }
  const glm::mat4 shifted(glm::vec4(1, 0, 0, 0), glm::vec4(0, 1, 0, 0), glm::vec4(0, 0, 1, 0),
                          glm::vec4(-0.5f, 0, 0, 1));
  for (std::size_t j = 0; j < s.joint_count(); ++j)
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) EXPECT_NEAR(palette[j][c][r], shifted[c][r], 1e-6);
}

// Hash of the palette of `clip` sampled at `time_us` with a fresh cursor.
uint64_t palette_hash(const Rig& rig, const Clip& clip, int64_t time_us) {
  std::vector<Transform> locals(rig.skeleton.node_count());
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  SampleJob sample{&rig.skeleton, &clip, time_us, cursor, locals};
  EXPECT_TRUE(sample.Run());
  const std::vector<glm::mat4> palette = palette_of(rig.skeleton, locals);
  EXPECT_EQ(palette.size(), rig.skeleton.joint_count());
  return hash_palette(palette);
}

struct Golden {
  int64_t time_us;
  uint64_t hash;
};

void expect_goldens(const Rig& rig, const Clip& clip, const std::vector<Golden>& goldens) {
  for (const Golden& g : goldens) {
    EXPECT_EQ(palette_hash(rig, clip, g.time_us), g.hash)
        << clip.name << " at " << g.time_us << " us: got 0x" << std::hex
        << palette_hash(rig, clip, g.time_us);
  }
}

TEST(GoldenPaletteHash, FoxClip0) {
  SKIP_WITHOUT_ASSET(asset("Fox.glb"));
  const Model model = load_file(asset("Fox.glb"));
  ASSERT_FALSE(model.rigs.empty());
  ASSERT_FALSE(model.rigs[0].clips.empty());
  const Rig& rig = model.rigs[0];
  // Clip 0 ("Survey", 3.4167 s, LINEAR): start, between keys, the end, past the end (clamped:
  // the same hash as the end). Its first and last keys are equal, and the start is key 0
  // exactly (det_key_slerp at s = 0), so the start has the end's hash too.
  expect_goldens(rig, rig.clips[0],
                 {{0, 0x2f5a3d84b605f0d2ull},
                  {16'667, 0x9707bd27de9addfdull},
                  {1'234'567, 0x3aff8ba7203abe44ull},
                  {3'416'667, 0x2f5a3d84b605f0d2ull},
                  {5'000'000, 0x2f5a3d84b605f0d2ull}});
}

// Covers the three interpolation modes: "walk" (LINEAR), "step_pose" (STEP), "sway_cubic"
// (CUBICSPLINE), on the 24- and 128-joint rigs.
TEST(GoldenPaletteHash, GeneratedRig) {
  struct RigGolden {
    uint32_t joints;
    const char* clip;
    std::vector<Golden> goldens;
  };
  const std::vector<RigGolden> table = {
      {24,
       "walk",
       {{0, 0x68b4e7d008ec6d2aull},
        {123'457, 0x9ac7ddf3cf00e420ull},
        {777'777, 0xa0086ce0920be53eull}}},
      {24, "step_pose", {{0, 0xe63108d7b65eca3full}, {1'050'000, 0x4afa38f9fcc2bd9aull}}},
      {24, "sway_cubic", {{333'333, 0x890f6a94f8fbc646ull}, {1'500'001, 0x2b138d5d99cae31eull}}},
      {128, "walk", {{0, 0xa184ab71568e0e44ull}, {555'555, 0x015dd22915086faeull}}},
      {128, "sway_cubic", {{1'250'000, 0x1b53764329331982ull}}},
  };
  for (const RigGolden& row : table) {
    SCOPED_TRACE(testing::Message() << "gen-rig:" << row.joints << " " << row.clip);
    const Model model = load_generated_rig(row.joints);
    ASSERT_EQ(model.rigs.size(), 1u);
    const Rig& rig = model.rigs[0];
    const int index = model.find_clip(row.clip);
    ASSERT_GE(index, 0);
    expect_goldens(rig, rig.clips[static_cast<std::size_t>(index)], row.goldens);
  }
}

// SampleJob::output_holds_base: sampling a clip again into the buffer its own last Run()
// wrote skips the rest-pose copy and gives the bits of a fresh buffer, for every clip of the
// generated rig (LINEAR, STEP, CUBICSPLINE; rotation blocks and loose tracks), at times
// forwards, backwards and past the end. The control: a buffer that does not hold the base
// (overwritten) keeps its stale fields, so the copy is really skipped.
TEST(SampleJob, OutputHoldingTheBaseSkipsTheRestCopyWithTheSameBits) {
  const Model model = load_generated_rig(24);
  ASSERT_EQ(model.rigs.size(), 1u);
  const Rig& rig = model.rigs[0];
  const std::size_t nodes = rig.skeleton.node_count();
  const int64_t times[] = {0, 16'667, 500'000, 250'000, 1'999'999, 30'000'000, 33'333};
  for (const Clip& clip : rig.clips) {
    SCOPED_TRACE(clip.name);
    std::vector<uint32_t> reused_cursor(clip.tracks.size(), 0u), fresh_cursor = reused_cursor;
    std::vector<Transform> reused(nodes), fresh(nodes);
    SampleJob first{&rig.skeleton, &clip, 0, reused_cursor, reused};
    ASSERT_TRUE(first.Run());
    for (const int64_t t : times) {
      SampleJob again{&rig.skeleton, &clip, t, reused_cursor, reused};
      again.output_holds_base = true;
      ASSERT_TRUE(again.Run());
      SampleJob reference{&rig.skeleton, &clip, t, fresh_cursor, fresh};
      ASSERT_TRUE(reference.Run());
      EXPECT_EQ(std::memcmp(reused.data(), fresh.data(), nodes * sizeof(Transform)), 0) << t;
    }
  }
  // Control: walk animates no scale, so stale scales in a buffer that claims the base stay.
  const Clip& walk = rig.clips[static_cast<std::size_t>(model.find_clip("walk"))];
  std::vector<uint32_t> cursor(walk.tracks.size(), 0u);
  std::vector<Transform> stale(nodes);
  for (Transform& t : stale) t.scale = glm::vec3(7.0f);
  SampleJob skipped{&rig.skeleton, &walk, 100'000, cursor, stale};
  skipped.output_holds_base = true;
  ASSERT_TRUE(skipped.Run());
  EXPECT_EQ(stale[0].scale, glm::vec3(7.0f));
}

}  // namespace
}  // namespace posecast
