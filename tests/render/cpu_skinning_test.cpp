// The CPU linear-blend skinning reference, checked by hand-worked cases (no GL needed).

#include <gtest/gtest.h>

#include <glm/gtc/matrix_transform.hpp>

#include <vector>

#include "posecast/render/cpu_skinning.h"
#include "one_vertex_mesh.h"

namespace posecast::render {
namespace {

TEST(CpuSkinning, HalfAndHalfBetweenTwoTranslationsLandsInTheMiddle) {
  const SkinnedMesh mesh = one_vertex_mesh({1, 2, 3}, {0, 1, 0}, {0, 1, 0, 0}, {0.5f, 0.5f, 0, 0});
  const std::vector<glm::mat4> palette = {glm::translate(glm::mat4(1.0f), {2, 0, 0}),
                                          glm::translate(glm::mat4(1.0f), {0, 4, 0})};
  std::vector<SkinnedVertex> out(1);
  ASSERT_TRUE(skin_vertices_cpu(mesh, palette, out));
  EXPECT_EQ(out[0].position, glm::vec3(2, 4, 3));
  EXPECT_EQ(out[0].normal, glm::vec3(0, 1, 0));  // translations leave normals alone
}

TEST(CpuSkinning, RotatesNormalAndRenormalisesUnderScale) {
  // 90 degrees about Z then scale 3: (1,0,0) -> (0,3,0) for positions, normal stays unit.
  const glm::mat4 m = glm::scale(glm::rotate(glm::mat4(1.0f), glm::radians(90.0f), {0, 0, 1}),
                                 glm::vec3(3.0f));
  const SkinnedMesh mesh = one_vertex_mesh({1, 0, 0}, {1, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0});
  std::vector<SkinnedVertex> out(1);
  ASSERT_TRUE(skin_vertices_cpu(mesh, std::vector<glm::mat4>{m}, out));
  EXPECT_NEAR(out[0].position.x, 0.0f, 1e-6f);
  EXPECT_NEAR(out[0].position.y, 3.0f, 1e-6f);
  EXPECT_NEAR(out[0].normal.y, 1.0f, 1e-6f);
  EXPECT_NEAR(glm::length(out[0].normal), 1.0f, 1e-6f);
}

TEST(CpuSkinning, ZeroWeightInfluenceMayNameAnyJoint) {
  const SkinnedMesh mesh = one_vertex_mesh({1, 1, 1}, {0, 0, 1}, {0, 999, 0, 0}, {1, 0, 0, 0});
  std::vector<SkinnedVertex> out(1);
  ASSERT_TRUE(skin_vertices_cpu(mesh, std::vector<glm::mat4>{glm::mat4(1.0f)}, out));
  EXPECT_EQ(out[0].position, glm::vec3(1, 1, 1));
}

TEST(CpuSkinning, ZeroNormalStaysZero) {
  const SkinnedMesh mesh = one_vertex_mesh({1, 1, 1}, {0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0});
  std::vector<SkinnedVertex> out(1);
  ASSERT_TRUE(skin_vertices_cpu(mesh, std::vector<glm::mat4>{glm::mat4(2.0f)}, out));
  EXPECT_EQ(out[0].normal, glm::vec3(0.0f));
}

TEST(CpuSkinning, RejectsWeightedJointOutsideThePaletteAndWrongOutputSize) {
  const SkinnedMesh mesh = one_vertex_mesh({1, 1, 1}, {0, 0, 1}, {0, 3, 0, 0}, {0.5f, 0.5f, 0, 0});
  std::vector<SkinnedVertex> out(1);
  EXPECT_FALSE(skin_vertices_cpu(mesh, std::vector<glm::mat4>(2, glm::mat4(1.0f)), out));
  std::vector<SkinnedVertex> too_many(2);
  EXPECT_FALSE(skin_vertices_cpu(mesh, std::vector<glm::mat4>(4, glm::mat4(1.0f)), too_many));
}

}  // namespace
}  // namespace posecast::render
