// glTF material.doubleSided: single-sided triangles are culled when seen from behind, and the
// front face follows the sign of the entity transform's determinant (a mirrored placement keeps
// the same faces visible). The generated rig's model with its mesh replaced by one triangle
// bound to joint 0, identity palette, no grid, black background: a pixel that is not black is
// the triangle. (The importer's reading of doubleSided is tested in tests/import.)

#include <gtest/gtest.h>

#include <glm/gtc/matrix_transform.hpp>

#include "gl_test_support.h"
#include "posecast/render/offscreen_target.h"
#include "posecast/render/renderer.h"

namespace posecast::render::testing {
namespace {

constexpr int kSize = 64;

class FaceCulling : public GlTest {
 protected:
  // The triangle (0,0,0), (1,0,0), (0,1,0): counter-clockwise seen from +Z, normals +Z.
  static Model triangle(bool double_sided) {
    Result<Model> model = rig::load_model_source("gen-rig:2");
    EXPECT_TRUE(model.ok()) << model.error().message;
    if (!model) return Model{};
    SkinnedMesh mesh;
    mesh.name = "triangle";
    mesh.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    mesh.normals.assign(3, glm::vec3(0, 0, 1));
    mesh.uvs.assign(3, glm::vec2(0.0f));
    mesh.joints.assign(3, glm::u16vec4(0));
    mesh.weights.assign(3, glm::vec4(1, 0, 0, 0));
    mesh.indices = {0, 1, 2};
    SubMesh sub;
    sub.index_count = 3;
    sub.double_sided = double_sided;
    mesh.submeshes = {sub};
    model.value().rigs.at(0).meshes = {mesh};
    return std::move(model).value();
  }

  // Pixels drawn (not background) looking at the triangle's middle from `eye_z` on the Z axis.
  static int pixels_drawn(const Model& model, float eye_z, const glm::mat4& world = glm::mat4(1.0f),
                          bool wireframe = false) {
    Result<std::unique_ptr<Renderer>> renderer = Renderer::create();
    EXPECT_TRUE(renderer.ok()) << renderer.error().message;
    if (!renderer) return -1;
    Result<uint32_t> id = renderer.value()->add_model(model);
    EXPECT_TRUE(id.ok()) << id.error().message;
    if (!id) return -1;
    const std::vector<glm::mat4> palette(model.rigs.at(0).skeleton.joint_count(), glm::mat4(1.0f));
    RenderEntity entity;
    entity.model = id.value();
    entity.world = world;
    entity.palette = palette;
    Result<OffscreenTarget> target = OffscreenTarget::create(kSize, kSize);
    EXPECT_TRUE(target.ok()) << target.error().message;
    if (!target) return -1;
    target.value().bind();
    FrameView view;
    const glm::vec3 middle = glm::vec3(world * glm::vec4(0.3f, 0.3f, 0.0f, 1.0f));
    view.camera_position = middle + glm::vec3(0.0f, 0.0f, eye_z);
    view.view = glm::lookAt(view.camera_position, middle, glm::vec3(0.0f, 1.0f, 0.0f));
    view.projection = glm::perspective(glm::radians(60.0f), 1.0f, 0.1f, 10.0f);
    DrawOptions options;
    options.grid = false;
    options.wireframe = wireframe;
    options.background = glm::vec3(0.0f);
    Result<DrawStats> drawn =
        renderer.value()->draw(view, std::span<const RenderEntity>(&entity, 1), options);
    EXPECT_TRUE(drawn.ok()) << drawn.error().message;
    const std::vector<uint8_t> rgba = target.value().read_rgba();
    int count = 0;
    for (std::size_t i = 0; i + 3 < rgba.size(); i += 4) {
      if (rgba[i] != 0 || rgba[i + 1] != 0 || rgba[i + 2] != 0) ++count;
    }
    return count;
  }
};

TEST_F(FaceCulling, SingleSidedTriangleIsCulledFromBehindAndDrawnFromTheFront) {
  const Model single = triangle(false);
  EXPECT_GT(pixels_drawn(single, 2.0f), kSize * kSize / 20);
  EXPECT_EQ(pixels_drawn(single, -2.0f), 0);
}

TEST_F(FaceCulling, DoubleSidedTriangleIsDrawnFromBothSides) {
  const Model both = triangle(true);
  const int front = pixels_drawn(both, 2.0f);
  EXPECT_GT(front, kSize * kSize / 20);
  EXPECT_EQ(pixels_drawn(both, -2.0f), front);  // the mirror image: as many pixels
}

TEST_F(FaceCulling, AMirroringPlacementSwapsTheWinding) {
  // Mirrored in x, the triangle winds clockwise seen from +Z; glTF makes clockwise the front
  // under a negative determinant, so it is still seen from +Z and culled from -Z.
  const Model single = triangle(false);
  const glm::mat4 mirror = glm::scale(glm::mat4(1.0f), glm::vec3(-1.0f, 1.0f, 1.0f));
  EXPECT_GT(pixels_drawn(single, 2.0f, mirror), kSize * kSize / 20);
  EXPECT_EQ(pixels_drawn(single, -2.0f, mirror), 0);
}

TEST_F(FaceCulling, WireframeShowsBackFacesToo) {
  const Model single = triangle(false);
  const int front = pixels_drawn(single, 2.0f, glm::mat4(1.0f), /*wireframe=*/true);
  EXPECT_GT(front, 0);
  EXPECT_LT(front, pixels_drawn(single, 2.0f));  // lines, not the filled triangle
  EXPECT_GT(pixels_drawn(single, -2.0f, glm::mat4(1.0f), /*wireframe=*/true), 0);
}

}  // namespace
}  // namespace posecast::render::testing
