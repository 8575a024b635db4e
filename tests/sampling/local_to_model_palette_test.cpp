// LocalToModelJob and PaletteJob against hand-computed matrices, bit-identity with the scalar
// reference (to_matrix, affine_mul, affine_inverse), and Validate() on every invalid setup.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "hand_rigs.h"
#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"

namespace posecast {
namespace {

// Column-major helper: cols c0, c1, c2 (linear part) and translation t.
glm::mat4 affine(glm::vec3 c0, glm::vec3 c1, glm::vec3 c2, glm::vec3 t) {
  return glm::mat4(glm::vec4(c0, 0.0f), glm::vec4(c1, 0.0f), glm::vec4(c2, 0.0f),
                   glm::vec4(t, 1.0f));
}

void expect_mat_near(const glm::mat4& m, const glm::mat4& expected, float tol) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      EXPECT_NEAR(m[c][r], expected[c][r], tol) << "column " << c << " row " << r;
}

bool same_bits(std::span<const glm::mat4> a, std::span<const glm::mat4> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

Transform trs(glm::vec3 t, glm::quat r, glm::vec3 s) {
  Transform x;
  x.translation = t;
  x.rotation = r;
  x.scale = s;
  return x;
}

const float kHalfSqrt2 = 0.70710678118654752f;
const glm::quat kRotZ90(kHalfSqrt2, 0.0f, 0.0f, kHalfSqrt2);  // (w, x, y, z)
const glm::quat kRotX90(kHalfSqrt2, kHalfSqrt2, 0.0f, 0.0f);

// Node layout (parents before children):
//   0 root    T(1,2,3) R(90 about z) S(2,2,2)
//   1  `- child of 0    T(1,0,0)
//   2      `- child of 1    T(0,1,0) R(90 about x) S(1,3,1)
//   3 second root   T(5,0,0)
//   4  `- child of 0 (a sibling branch listed after another root)   T(0,0,1)
Skeleton branching_skeleton() {
  Skeleton s;
  s.parents = {-1, 0, 1, -1, 0};
  const glm::quat id(1.0f, 0.0f, 0.0f, 0.0f);
  s.rest = {trs({1, 2, 3}, kRotZ90, {2, 2, 2}), trs({1, 0, 0}, id, {1, 1, 1}),
            trs({0, 1, 0}, kRotX90, {1, 3, 1}), trs({5, 0, 0}, id, {1, 1, 1}),
            trs({0, 0, 1}, id, {1, 1, 1})};
  s.names = {"a", "b", "c", "d", "e"};
  s.source_nodes = {0, 1, 2, 3, 4};
  return s;
}

std::vector<glm::mat4> run_local_to_model(const Skeleton& s, std::span<const Transform> locals) {
  std::vector<glm::mat4> models(s.node_count());
  LocalToModelJob job;
  job.skeleton = &s;
  job.locals = locals;
  job.models = models;
  if (!job.Run()) return {};
  return models;
}

TEST(LocalToModelJob, MatchesHandComputedWorldMatrices) {
  const Skeleton s = branching_skeleton();
  const std::vector<glm::mat4> models = run_local_to_model(s, s.rest);
  ASSERT_EQ(models.size(), 5u);
  // Root: R90z maps x->y, y->-x; times scale 2.
  const glm::mat4 w0 = affine({0, 2, 0}, {-2, 0, 0}, {0, 0, 2}, {1, 2, 3});
  expect_mat_near(models[0], w0, 1e-6f);
  // Child: same linear part, origin at w0 * (1,0,0,1) = (1,4,3).
  expect_mat_near(models[1], affine({0, 2, 0}, {-2, 0, 0}, {0, 0, 2}, {1, 4, 3}), 1e-6f);
  // Grandchild local: cols (1,0,0), R90x*(0,3,0) = (0,0,3), R90x*(0,0,1) = (0,-1,0), t (0,1,0).
  // World: L1 * those, origin L1*(0,1,0) + (1,4,3) = (-2,0,0) + (1,4,3).
  expect_mat_near(models[2], affine({0, 2, 0}, {0, 0, 6}, {2, 0, 0}, {-1, 4, 3}), 1e-5f);
  expect_mat_near(models[3], affine({1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {5, 0, 0}), 0.0f);
  // Sibling branch: origin L0*(0,0,1) + (1,2,3) = (1,2,5).
  expect_mat_near(models[4], affine({0, 2, 0}, {-2, 0, 0}, {0, 0, 2}, {1, 2, 5}), 1e-6f);
}

// Random poses plus signed zeros, axis-aligned half turns and negative scales (where the
// sign of a zero entry depends on the exact operation order): the job must equal the scalar
// reference bit for bit, including the exact (0,0,0,1) last rows (hashes see every float).
TEST(LocalToModelJob, IsBitIdenticalToToMatrixAndAffineMul) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  Skeleton s;
  const std::vector<Transform> special = {
      trs({-0.0f, 0.0f, -0.0f}, glm::quat(1.0f, 0.0f, 0.0f, 0.0f), {1.0f, 1.0f, 1.0f}),
      trs({1.0f, -0.0f, 2.0f}, glm::quat(0.0f, 0.0f, 1.0f, 0.0f), {-1.0f, 1.0f, -0.0f}),
      trs({0.0f, 0.0f, 0.0f}, glm::quat(-0.0f, 1.0f, -0.0f, 0.0f), {2.0f, -3.0f, 1.0f}),
      trs({-5.0f, 0.0f, 0.0f}, glm::quat(-1.0f, -0.0f, 0.0f, -0.0f), {-1.0f, -1.0f, -1.0f}),
      trs({0.0f, 0.0f, 0.0f}, glm::quat(0.0f, 0.0f, 0.0f, 1.0f), {0.0f, 1.0f, 1.0f}),
  };
  const int count = 64 + static_cast<int>(special.size());
  for (int i = 0; i < count; ++i) {
    s.parents.push_back(static_cast<int16_t>(i == 0 ? -1 : static_cast<int>(rng() % i)));
    if (i % 13 == 0 && i / 13 < static_cast<int>(special.size())) {
      s.rest.push_back(special[static_cast<std::size_t>(i / 13)]);
      continue;
    }
    const glm::quat q = det_normalize(glm::quat(u(rng), u(rng), u(rng), u(rng)));
    s.rest.push_back(trs({u(rng), u(rng), u(rng)}, q, {u(rng), u(rng), u(rng)}));
  }
  const std::vector<glm::mat4> models = run_local_to_model(s, s.rest);
  ASSERT_EQ(models.size(), static_cast<std::size_t>(count));
  std::vector<glm::mat4> reference(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const glm::mat4 local = to_matrix(s.rest[i]);
    reference[i] = s.parents[i] < 0 ? local : affine_mul(reference[s.parents[i]], local);
  }
  EXPECT_TRUE(same_bits(models, reference));
}

class LocalToModelValidate : public testing::Test {
 protected:
  LocalToModelValidate() : skeleton_(branching_skeleton()), models_(5, glm::mat4(-42.0f)) {}
  LocalToModelJob valid_job() {
    LocalToModelJob job;
    job.skeleton = &skeleton_;
    job.locals = skeleton_.rest;
    job.models = models_;
    return job;
  }
  void expect_rejected(const LocalToModelJob& job, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(job.Validate());
    EXPECT_FALSE(job.Run());
    for (const glm::mat4& m : models_) EXPECT_EQ(m, glm::mat4(-42.0f));
  }
  Skeleton skeleton_;
  std::vector<glm::mat4> models_;
};

TEST_F(LocalToModelValidate, AcceptsAValidSetup) {
  EXPECT_TRUE(valid_job().Validate());
  EXPECT_TRUE(valid_job().Run());
}

TEST_F(LocalToModelValidate, RejectsEveryInvalidSetup) {
  expect_rejected(LocalToModelJob{}, "default job");
  LocalToModelJob job = valid_job();
  job.skeleton = nullptr;
  expect_rejected(job, "null skeleton");
  job = valid_job();
  job.locals = std::span<const Transform>(skeleton_.rest).first(4);
  expect_rejected(job, "locals too small");
  job = valid_job();
  job.locals = {};
  expect_rejected(job, "no locals");
  job = valid_job();
  job.models = std::span<glm::mat4>(models_).first(4);
  expect_rejected(job, "models too small");
  std::vector<glm::mat4> big(6);
  job = valid_job();
  job.models = big;
  EXPECT_FALSE(job.Validate());
  const Skeleton good = skeleton_;
  skeleton_.parents[2] = 2;
  expect_rejected(valid_job(), "node is its own parent");
  skeleton_ = good;
  skeleton_.parents[1] = 4;
  expect_rejected(valid_job(), "parent after child");
  skeleton_ = good;
  skeleton_.parents[3] = -2;
  expect_rejected(valid_job(), "parent below -1");
}

// Palette layout:
//   0 mesh node (root)   T(0,0,5) S(2,2,2)       -> world M, inverse: S(0.5) then T(0,0,-2.5)
//   1 joint root         T(1,0,0) R(90 about z)  -> W1
//   2 joint, child of 1  T(0,2,0)                -> W2 = W1 * T(0,2,0), origin (-1,0,0)
// Skin order lists node 2 first, then node 1 (skin order is not node order).
//   IBM0 (node 2) = T(0,0,3)
//   IBM1 (node 1) = S(0.5) with translation (1,1,1)
// palette[j] = inverse(M) * W(joint_j) * IBM_j:
//   palette[0]: W2*IBM0 = L1 with origin L1*(0,0,3) + (-1,0,0) = (-1,0,3);
//               inverse(M) halves it and moves z by -2.5: linear 0.5*L1, origin (-0.5,0,-1)
//   palette[1]: W1*IBM1 = 0.5*L1 with origin L1*(1,1,1) + (1,0,0) = (0,1,1);
//               inverse(M): linear 0.25*L1, origin (0,0.5,-2)
Skeleton palette_skeleton() {
  Skeleton s;
  s.parents = {-1, -1, 1};
  const glm::quat id(1.0f, 0.0f, 0.0f, 0.0f);
  s.rest = {trs({0, 0, 5}, id, {2, 2, 2}), trs({1, 0, 0}, kRotZ90, {1, 1, 1}),
            trs({0, 2, 0}, id, {1, 1, 1})};
  s.names = {"mesh", "hip", "leg"};
  s.source_nodes = {0, 1, 2};
  s.joint_nodes = {2, 1};
  s.inverse_bind = {affine({1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 3}),
                    affine({0.5f, 0, 0}, {0, 0.5f, 0}, {0, 0, 0.5f}, {1, 1, 1})};
  s.mesh_node = 0;
  return s;
}

std::vector<glm::mat4> run_palette(const Skeleton& s, std::span<const glm::mat4> models) {
  std::vector<glm::mat4> palette(s.joint_count());
  PaletteJob job;
  job.skeleton = &s;
  job.models = models;
  job.palette = palette;
  if (!job.Run()) return {};
  return palette;
}

TEST(PaletteJob, MatchesHandComputedMatricesWithMeshTransformAndInverseBinds) {
  const Skeleton s = palette_skeleton();
  const std::vector<glm::mat4> models = run_local_to_model(s, s.rest);
  const std::vector<glm::mat4> palette = run_palette(s, models);
  ASSERT_EQ(palette.size(), 2u);
  expect_mat_near(palette[0], affine({0, 0.5f, 0}, {-0.5f, 0, 0}, {0, 0, 0.5f}, {-0.5f, 0, -1}),
                  1e-6f);
  expect_mat_near(palette[1], affine({0, 0.25f, 0}, {-0.25f, 0, 0}, {0, 0, 0.25f}, {0, 0.5f, -2}),
                  1e-6f);
}

TEST(PaletteJob, WithoutMeshNodeIsWorldTimesInverseBind) {
  Skeleton s = palette_skeleton();
  s.mesh_node = -1;
  const std::vector<glm::mat4> models = run_local_to_model(s, s.rest);
  const std::vector<glm::mat4> palette = run_palette(s, models);
  ASSERT_EQ(palette.size(), 2u);
  // W2 * IBM0 and W1 * IBM1 from the layout comment above.
  expect_mat_near(palette[0], affine({0, 1, 0}, {-1, 0, 0}, {0, 0, 1}, {-1, 0, 3}), 1e-6f);
  expect_mat_near(palette[1], affine({0, 0.5f, 0}, {-0.5f, 0, 0}, {0, 0, 0.5f}, {0, 1, 1}), 1e-6f);
}

TEST(PaletteJob, IsBitIdenticalToAffineInverseAndAffineMul) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  Skeleton s;
  std::vector<glm::mat4> models;
  for (int i = 0; i < 40; ++i) {
    s.parents.push_back(-1);
    models.push_back(affine({u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)},
                            {u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}));
  }
  for (int j = 0; j < 33; ++j) {
    s.joint_nodes.push_back(static_cast<uint16_t>((j * 7) % 40));
    s.inverse_bind.push_back(affine({u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)},
                                    {u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}));
  }
  s.mesh_node = 5;
  const std::vector<glm::mat4> palette = run_palette(s, models);
  ASSERT_EQ(palette.size(), 33u);
  glm::mat4 mesh_inverse;
  ASSERT_TRUE(affine_inverse(models[5], mesh_inverse));
  std::vector<glm::mat4> reference;
  for (int j = 0; j < 33; ++j)
    reference.push_back(
        affine_mul(affine_mul(mesh_inverse, models[s.joint_nodes[j]]), s.inverse_bind[j]));
  EXPECT_TRUE(same_bits(palette, reference));
}

class PaletteValidate : public testing::Test {
 protected:
  PaletteValidate()
      : skeleton_(palette_skeleton()),
        models_(run_local_to_model(skeleton_, skeleton_.rest)),
        palette_(2, glm::mat4(-42.0f)) {}
  PaletteJob valid_job() {
    PaletteJob job;
    job.skeleton = &skeleton_;
    job.models = models_;
    job.palette = palette_;
    return job;
  }
  void expect_rejected(const PaletteJob& job, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(job.Validate());
    EXPECT_FALSE(job.Run());
    for (const glm::mat4& m : palette_) EXPECT_EQ(m, glm::mat4(-42.0f));
  }
  Skeleton skeleton_;
  std::vector<glm::mat4> models_;
  std::vector<glm::mat4> palette_;
};

TEST_F(PaletteValidate, AcceptsAValidSetup) {
  EXPECT_TRUE(valid_job().Validate());
  EXPECT_TRUE(valid_job().Run());
}

TEST_F(PaletteValidate, RejectsEveryInvalidSetup) {
  expect_rejected(PaletteJob{}, "default job");
  PaletteJob job = valid_job();
  job.skeleton = nullptr;
  expect_rejected(job, "null skeleton");
  job = valid_job();
  job.models = std::span<const glm::mat4>(models_).first(2);
  expect_rejected(job, "models too small");
  job = valid_job();
  job.models = {};
  expect_rejected(job, "no models");
  job = valid_job();
  job.palette = std::span<glm::mat4>(palette_).first(1);
  expect_rejected(job, "palette too small");
  std::vector<glm::mat4> big(3);
  job = valid_job();
  job.palette = big;
  EXPECT_FALSE(job.Validate());
  const Skeleton good = skeleton_;
  skeleton_.inverse_bind.pop_back();
  expect_rejected(valid_job(), "inverse binds shorter than joints");
  skeleton_ = good;
  skeleton_.joint_nodes[1] = 3;
  expect_rejected(valid_job(), "joint node out of range");
  skeleton_ = good;
  skeleton_.mesh_node = 3;
  expect_rejected(valid_job(), "mesh node out of range");
  skeleton_.mesh_node = -2;
  expect_rejected(valid_job(), "mesh node below -1");
}

TEST_F(PaletteValidate, SingularMeshWorldMatrixFailsWritingNothing) {
  models_[0] = affine({1, 0, 0}, {0, 0, 0}, {0, 0, 1}, {0, 0, 0});
  const PaletteJob job = valid_job();
  EXPECT_TRUE(job.Validate());  // sizes are fine; the matrix is the problem
  EXPECT_FALSE(job.Run());
  for (const glm::mat4& m : palette_) EXPECT_EQ(m, glm::mat4(-42.0f));
}

}  // namespace
}  // namespace posecast
