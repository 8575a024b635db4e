#pragma once
// What the renderer draws each frame: one skinned rig instance. A PoseSource (the viewer's
// local playback, later the network client) produces a list of these per frame.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <span>

namespace posecast::render {

struct RenderEntity {
  uint32_t model = 0;  // index of a model uploaded with Renderer::add_model
  uint32_t rig = 0;    // index into that Model::rigs
  // Palette space (the rig's mesh node, see palette.h) -> world: the entity's placement times
  // the mesh node's world matrix. Rotation, translation and uniform scale only.
  glm::mat4 world{1.0f};
  // The rig's joint_count() palette matrices; must stay valid until the frame is drawn.
  std::span<const glm::mat4> palette;
};

}  // namespace posecast::render
