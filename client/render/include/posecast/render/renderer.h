#pragma once
// The renderer: GPU skinning of many entities from one palette uniform buffer, a lit textured
// surface, a ground grid, skeleton lines and wireframe for debugging. Draws into whatever
// framebuffer is bound (a window's, or an OffscreenTarget).
//
// Per frame: every entity's palette goes into one buffer with a single upload
// (PaletteBuffer), then one glBindBufferRange + one draw per SubMesh per entity. Meshes are
// uploaded once per model (GpuModel).

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/render/gpu_model.h"
#include "posecast/render/orbit_camera.h"
#include "posecast/render/palette_buffer.h"
#include "posecast/render/render_entity.h"
#include "posecast/render/shader_program.h"
#include "posecast/render/shader_sources.h"
#include "posecast/render/skinning_mode.h"
#include "posecast/result.h"

namespace posecast::render {

// Palette entries the skinning shader's uniform block holds on the current context:
// min(512, GL_MAX_UNIFORM_BLOCK_SIZE / 64); 0 when that is under 256 (below GL 3.3's minimum).
uint32_t max_palette_joints();

struct FrameView {
  glm::mat4 view{1.0f};
  glm::mat4 projection{1.0f};
  glm::vec3 camera_position{0.0f};
  glm::vec3 grid_center{0.0f};
  float grid_cell = 1.0f;     // spacing of the minor grid lines
  float grid_extent = 50.0f;  // half size of the grid quad
};

// A view from an orbit camera; the grid's cell size is a power of ten that suits the scene.
FrameView make_frame_view(const OrbitCamera& camera, float aspect, const Aabb& scene);

struct DrawOptions {
  bool grid = true;
  bool skeleton = false;   // joint-to-parent lines over the meshes
  bool wireframe = false;  // meshes as lines
  glm::vec3 background{0.10f, 0.11f, 0.13f};              // linear
  glm::vec3 light_direction{0.35f, 0.80f, 0.48f};         // towards the light; normalised
  // Extra line segments in world space, depth-tested (the viewer's footstep rings): x y z r g b
  // per vertex, two vertices a segment. Must stay valid during draw().
  std::span<const float> ground_lines;
};

struct DrawStats {
  uint32_t entities = 0;
  uint32_t draw_calls = 0;
  uint64_t triangles = 0;
  std::size_t palette_bytes = 0;
  uint32_t dual_quaternion_entities = 0;  // drawn with skinned_dq.vert.glsl
  // Entities of a dual-quaternion model drawn with LBS this frame because their palette was
  // not rigid (PaletteBuffer::rigid_fallbacks).
  uint32_t rigid_fallbacks = 0;
};

class Renderer {
 public:
  // Needs a current 3.3+ core context (kept current while the renderer lives). Compiles the
  // shaders from `sources`. Errors name the shader file and carry the driver's log.
  static Result<std::unique_ptr<Renderer>> create(const ShaderSources& sources = {});

  // Palette entries the skinning shader's block holds: min(512, GL_MAX_UNIFORM_BLOCK_SIZE/64).
  uint32_t max_joints() const { return max_joints_; }

  // Uploads a model's meshes; returns its id (0, 1, 2, ... in call order), the
  // RenderEntity::model value. Image decode failures become warnings, not errors.
  // `skinning` is the model's skinning mode; kDualQuaternion on a model with a rig whose
  // joints carry scale (rig_scale_problem) gives kLinearBlend instead, with a warning naming
  // the joint. skinning_mode() tells the mode in effect.
  Result<uint32_t> add_model(const Model& model, std::vector<std::string>* warnings = nullptr,
                             SkinningMode skinning = SkinningMode::kLinearBlend);
  std::size_t model_count() const { return models_.size(); }
  const GpuModel& model(uint32_t id) const { return models_[id]; }
  SkinningMode skinning_mode(uint32_t id) const { return model_skinning_[id]; }

  // Clears the bound framebuffer and draws the entities. Errors (nothing drawn): an entity
  // names an unknown model or rig, or its palette is not the rig's joint count.
  Result<DrawStats> draw(const FrameView& view, std::span<const RenderEntity> entities,
                         const DrawOptions& options);

  // World-space box around the entities' bind-pose bounds (empty when there are none).
  Aabb bounds(std::span<const RenderEntity> entities) const;

 private:
  Renderer() = default;
  void draw_grid(const FrameView& view, const glm::mat4& view_projection,
                 const DrawOptions& options);
  void draw_skeletons(std::span<const RenderEntity> entities, const glm::mat4& view_projection);
  // Segments (x y z r g b per vertex) through the lines program.
  void draw_lines(std::span<const float> vertices, const glm::mat4& view_projection, bool depth_test);

  struct SkinnedUniforms {
    GLint model = -1, view_projection = -1, base_color = -1, texture = -1, has_texture = -1,
          light_direction = -1, camera_position = -1;
  };
  // One lit skinned program per SkinningMode (same fragment shader, same uniforms).
  struct SkinnedProgram {
    ShaderProgram program;
    SkinnedUniforms uniforms;
  };
  struct GridUniforms {
    GLint view_projection = -1, center = -1, extent = -1, cell = -1, background = -1;
  };

  uint32_t max_joints_ = 0;
  SkinnedProgram skinned_[2];  // indexed by SkinningMode
  ShaderProgram grid_;
  ShaderProgram lines_;
  GridUniforms grid_uniforms_;
  GLint lines_view_projection_ = -1;
  std::unique_ptr<PaletteBuffer> palettes_;
  std::vector<GpuModel> models_;
  std::vector<SkinningMode> model_skinning_;  // per model, the mode in effect
  std::vector<SkinningMode> entity_skinning_;  // per entity of the frame, reused
  GLuint grid_vertex_array_ = 0;
  GLuint grid_buffer_ = 0;
  GLuint lines_vertex_array_ = 0;
  GLuint lines_buffer_ = 0;
  std::size_t lines_capacity_ = 0;
  std::vector<float> line_vertices_;  // reused each frame: x y z r g b per vertex

 public:
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;
};

}  // namespace posecast::render
