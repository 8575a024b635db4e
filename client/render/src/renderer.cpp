#include "posecast/render/renderer.h"

#include <algorithm>
#include <cmath>

#include "posecast/render/rigid_rig.h"

namespace posecast::render {

namespace {

constexpr GLuint kPaletteBinding = 0;
constexpr uint32_t kMaxPaletteJoints = 512;  // what the importer accepts (gltf_import.h)

Result<ShaderProgram> build_program(const ShaderSources& sources, const char* vertex_name,
                                    const char* fragment_name, const std::string& defines = {}) {
  Result<std::string> vertex = sources.load(vertex_name, defines);
  if (!vertex) return vertex.error();
  Result<std::string> fragment = sources.load(fragment_name, defines);
  if (!fragment) return fragment.error();
  return ShaderProgram::build({{GL_VERTEX_SHADER, vertex_name, vertex.value()},
                               {GL_FRAGMENT_SHADER, fragment_name, fragment.value()}});
}

// The shaders' gamma encoding (shaders/grid.frag.glsl: a two-square-root fit of x^(1/2.2)),
// so the clear colour equals the grid's faded edge; `linear` in [0, 1].
glm::vec3 gamma_encode(const glm::vec3& linear) {
  const glm::vec3 root2 = glm::sqrt(linear);
  return 0.955040f * root2 + 0.095503f * glm::sqrt(root2) - 0.051163f * linear;
}

}  // namespace

uint32_t max_palette_joints() {
  GLint max_block_bytes = 0;
  glGetIntegerv(GL_MAX_UNIFORM_BLOCK_SIZE, &max_block_bytes);
  const uint32_t joints =
      std::min<uint32_t>(kMaxPaletteJoints, static_cast<uint32_t>(std::max(max_block_bytes, 0)) / 64u);
  return joints >= 256 ? joints : 0;
}

FrameView make_frame_view(const OrbitCamera& camera, float aspect, const Aabb& scene) {
  FrameView view;
  view.view = camera.view();
  view.projection = camera.projection(aspect);
  view.camera_position = camera.position();
  view.grid_center = glm::vec3(camera.target.x, 0.0f, camera.target.z);
  const glm::vec3 size = scene.size();
  const float scale = std::max({size.x, size.z, size.y, camera.distance * 0.25f, 1e-3f});
  // Minor lines at the power of ten just under the scene's size: a 1.8 m figure gets 1 m
  // cells (10 m major lines), Fox (about 150 units long) 100-unit cells.
  view.grid_cell = std::pow(10.0f, std::floor(std::log10(scale)));
  view.grid_extent = std::max(camera.distance * 4.0f, scale * 2.0f);
  return view;
}

Renderer::~Renderer() {
  models_.clear();
  palettes_.reset();
  const GLuint arrays[2] = {grid_vertex_array_, lines_vertex_array_};
  const GLuint buffers[2] = {grid_buffer_, lines_buffer_};
  glDeleteVertexArrays(2, arrays);
  glDeleteBuffers(2, buffers);
}

Result<std::unique_ptr<Renderer>> Renderer::create(const ShaderSources& sources) {
  std::unique_ptr<Renderer> r(new Renderer());
  r->max_joints_ = max_palette_joints();
  if (r->max_joints_ == 0) {
    return Error{"GL_MAX_UNIFORM_BLOCK_SIZE is under 16384 bytes: the palette block needs "
                 "room for 256 joints"};
  }
  const std::string defines = "#define POSECAST_MAX_JOINTS " + std::to_string(r->max_joints_) + "\n";

  // One program per SkinningMode: linear blend, dual quaternions.
  const char* const skinning_shaders[2] = {"skinned.vert.glsl", "skinned_dq.vert.glsl"};
  for (int mode = 0; mode < 2; ++mode) {
    Result<ShaderProgram> skinned =
        build_program(sources, skinning_shaders[mode], "lit.frag.glsl", defines);
    if (!skinned) return skinned.error();
    SkinnedProgram& sp = r->skinned_[mode];
    sp.program = std::move(skinned.value());
    const GLuint block = glGetUniformBlockIndex(sp.program.id(), "Palette");
    if (block == GL_INVALID_INDEX) {
      return Error{std::string(skinning_shaders[mode]) + ": no uniform block 'Palette'"};
    }
    glUniformBlockBinding(sp.program.id(), block, kPaletteBinding);
    SkinnedUniforms& su = sp.uniforms;
    su.model = sp.program.uniform("u_model");
    su.view_projection = sp.program.uniform("u_view_projection");
    su.base_color = sp.program.uniform("u_base_color");
    su.texture = sp.program.uniform("u_base_color_texture");
    su.has_texture = sp.program.uniform("u_has_texture");
    su.light_direction = sp.program.uniform("u_light_direction");
    su.camera_position = sp.program.uniform("u_camera_position");
  }
  Result<ShaderProgram> grid = build_program(sources, "grid.vert.glsl", "grid.frag.glsl");
  if (!grid) return grid.error();
  r->grid_ = std::move(grid.value());
  Result<ShaderProgram> lines = build_program(sources, "lines.vert.glsl", "lines.frag.glsl");
  if (!lines) return lines.error();
  r->lines_ = std::move(lines.value());

  GridUniforms& gu = r->grid_uniforms_;
  gu.view_projection = r->grid_.uniform("u_view_projection");
  gu.center = r->grid_.uniform("u_grid_center");
  gu.extent = r->grid_.uniform("u_grid_extent");
  gu.cell = r->grid_.uniform("u_grid_cell");
  gu.background = r->grid_.uniform("u_background");
  r->lines_view_projection_ = r->lines_.uniform("u_view_projection");

  r->palettes_ = std::make_unique<PaletteBuffer>(r->max_joints_);

  // Grid: one quad as a triangle strip of corners in -1..1.
  const float corners[8] = {-1.0f, -1.0f, 1.0f, -1.0f, -1.0f, 1.0f, 1.0f, 1.0f};
  glGenVertexArrays(1, &r->grid_vertex_array_);
  glBindVertexArray(r->grid_vertex_array_);
  glGenBuffers(1, &r->grid_buffer_);
  glBindBuffer(GL_ARRAY_BUFFER, r->grid_buffer_);
  glBufferData(GL_ARRAY_BUFFER, sizeof corners, corners, GL_STATIC_DRAW);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, nullptr);

  glGenVertexArrays(1, &r->lines_vertex_array_);
  glBindVertexArray(r->lines_vertex_array_);
  glGenBuffers(1, &r->lines_buffer_);
  glBindBuffer(GL_ARRAY_BUFFER, r->lines_buffer_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float),
                        reinterpret_cast<const void*>(3 * sizeof(float)));
  glBindVertexArray(0);
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  return r;
}

Result<uint32_t> Renderer::add_model(const Model& model, std::vector<std::string>* warnings,
                                     SkinningMode skinning) {
  Result<GpuModel> gpu = GpuModel::upload(model, max_joints_, warnings);
  if (!gpu) return gpu.error();
  if (skinning == SkinningMode::kDualQuaternion) {
    for (std::size_t r = 0; r < model.rigs.size(); ++r) {
      const std::string problem = rig_scale_problem(model.rigs[r]);
      if (problem.empty()) continue;
      if (warnings) {
        warnings->push_back(model.source + ": skin " + std::to_string(r) + ": " + problem +
                            "; dual quaternions hold no scale, drawn with linear blend skinning");
      }
      skinning = SkinningMode::kLinearBlend;
      break;
    }
  }
  models_.push_back(std::move(gpu.value()));
  model_skinning_.push_back(skinning);
  return static_cast<uint32_t>(models_.size() - 1);
}

Aabb Renderer::bounds(std::span<const RenderEntity> entities) const {
  Aabb box;
  for (const RenderEntity& e : entities) {
    if (e.model >= models_.size() || e.rig >= models_[e.model].rigs().size()) continue;
    box.add(transform_aabb(e.world, models_[e.model].rigs()[e.rig].bind_bounds));
  }
  return box;
}

Result<DrawStats> Renderer::draw(const FrameView& view, std::span<const RenderEntity> entities,
                                 const DrawOptions& options) {
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const RenderEntity& e = entities[i];
    if (e.model >= models_.size() || e.rig >= models_[e.model].rigs().size()) {
      return Error{"entity " + std::to_string(i) + ": unknown model " + std::to_string(e.model) +
                   " rig " + std::to_string(e.rig)};
    }
    const uint32_t joints = models_[e.model].rigs()[e.rig].joint_count;
    if (e.palette.size() != joints) {
      return Error{"entity " + std::to_string(i) + ": palette has " +
                   std::to_string(e.palette.size()) + " matrices, the rig " +
                   std::to_string(joints) + " joints"};
    }
  }
  DrawStats stats;
  stats.entities = static_cast<uint32_t>(entities.size());
  entity_skinning_.resize(entities.size());
  for (std::size_t i = 0; i < entities.size(); ++i) {
    entity_skinning_[i] = model_skinning_[entities[i].model];
  }
  palettes_->upload(entities, entity_skinning_);  // sizes checked above, cannot fail
  stats.palette_bytes = palettes_->bytes_uploaded();
  stats.rigid_fallbacks = palettes_->rigid_fallbacks();

  const glm::vec3 clear = gamma_encode(options.background);
  glClearColor(clear.x, clear.y, clear.z, 1.0f);
  glClearDepth(1.0);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  glEnable(GL_DEPTH_TEST);
  glDepthFunc(GL_LESS);
  // glTF: a material that is not doubleSided has its back faces culled (not in the wireframe
  // view). Front faces wind counter-clockwise, clockwise under a transform whose determinant is
  // negative (per entity, below). Culling is set per sub-mesh only when it changes.
  glCullFace(GL_BACK);
  glDisable(GL_CULL_FACE);
  bool culling = false;
  GLenum front_face = GL_CCW;
  glFrontFace(front_face);
  const glm::mat4 view_projection = view.projection * view.view;

  if (options.grid) draw_grid(view, view_projection, options);

  const glm::vec3 light = glm::normalize(options.light_direction);
  for (const SkinnedProgram& sp : skinned_) {
    glUseProgram(sp.program.id());
    glUniformMatrix4fv(sp.uniforms.view_projection, 1, GL_FALSE, &view_projection[0][0]);
    glUniform3fv(sp.uniforms.light_direction, 1, &light[0]);
    glUniform3fv(sp.uniforms.camera_position, 1, &view.camera_position[0]);
    glUniform1i(sp.uniforms.texture, 0);
  }
  glActiveTexture(GL_TEXTURE0);
  if (options.wireframe) glPolygonMode(GL_FRONT_AND_BACK, GL_LINE);
  GLuint bound_texture = ~0u;
  int program = -1;  // index into skinned_ of the program in use
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const RenderEntity& e = entities[i];
    palettes_->bind(i, kPaletteBinding);
    const int mode = static_cast<int>(palettes_->packed_mode(i));
    if (mode == static_cast<int>(SkinningMode::kDualQuaternion)) ++stats.dual_quaternion_entities;
    if (mode != program) {
      program = mode;
      glUseProgram(skinned_[program].program.id());
      bound_texture = ~0u;  // u_has_texture is per program
    }
    const SkinnedUniforms& su = skinned_[program].uniforms;
    glUniformMatrix4fv(su.model, 1, GL_FALSE, &e.world[0][0]);
    // Winding from the determinant of `world` (placement x the mesh node's world: glTF's
    // "node's global transform"). A palette that mirrors (negative joint scale) is not looked
    // at: faces it turns over would be culled as back faces.
    const GLenum entity_front = glm::determinant(glm::mat3(e.world)) < 0.0f ? GL_CW : GL_CCW;
    if (entity_front != front_face) {
      front_face = entity_front;
      glFrontFace(front_face);
    }
    for (const GpuMesh& mesh : models_[e.model].rigs()[e.rig].meshes) {
      glBindVertexArray(mesh.vertex_array);
      for (const GpuSubMesh& sub : mesh.submeshes) {
        if (sub.index_count == 0) continue;
        // The wireframe debug view shows every triangle, back faces included.
        if (const bool cull = !sub.double_sided && !options.wireframe; cull != culling) {
          culling = cull;
          if (culling) {
            glEnable(GL_CULL_FACE);
          } else {
            glDisable(GL_CULL_FACE);
          }
        }
        glUniform4fv(su.base_color, 1, &sub.base_color[0]);
        if (sub.texture != bound_texture) {
          glBindTexture(GL_TEXTURE_2D, sub.texture);
          glUniform1i(su.has_texture, sub.texture != 0 ? 1 : 0);
          bound_texture = sub.texture;
        }
        glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(sub.index_count), GL_UNSIGNED_INT,
                       reinterpret_cast<const void*>(static_cast<uintptr_t>(sub.first_index) *
                                                     sizeof(uint32_t)));
        ++stats.draw_calls;
        stats.triangles += sub.index_count / 3;
      }
    }
  }
  if (options.wireframe) glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
  glDisable(GL_CULL_FACE);  // the skeleton lines and whatever draws next expect no culling
  glFrontFace(GL_CCW);
  glBindVertexArray(0);
  glBindTexture(GL_TEXTURE_2D, 0);

  if (!options.ground_lines.empty()) draw_lines(options.ground_lines, view_projection, /*depth_test=*/true);
  if (options.skeleton) draw_skeletons(entities, view_projection);
  glUseProgram(0);
  return stats;
}

void Renderer::draw_grid(const FrameView& view, const glm::mat4& view_projection,
                         const DrawOptions& options) {
  glUseProgram(grid_.id());
  const GridUniforms& gu = grid_uniforms_;
  glUniformMatrix4fv(gu.view_projection, 1, GL_FALSE, &view_projection[0][0]);
  glUniform3fv(gu.center, 1, &view.grid_center[0]);
  glUniform1f(gu.extent, view.grid_extent);
  glUniform1f(gu.cell, view.grid_cell);
  glUniform3fv(gu.background, 1, &options.background[0]);
  // The grid sits under everything: drawn first, depth writes off so meshes below y = 0
  // (feet slightly under the ground) still show.
  glDepthMask(GL_FALSE);
  glBindVertexArray(grid_vertex_array_);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glBindVertexArray(0);
  glDepthMask(GL_TRUE);
}

void Renderer::draw_skeletons(std::span<const RenderEntity> entities,
                              const glm::mat4& view_projection) {
  line_vertices_.clear();
  auto push = [this](const glm::vec3& p, const glm::vec3& c) {
    line_vertices_.insert(line_vertices_.end(), {p.x, p.y, p.z, c.x, c.y, c.z});
  };
  const glm::vec3 bone_color(1.0f, 0.85f, 0.2f);
  const glm::vec3 root_color(1.0f, 0.3f, 0.9f);
  for (const RenderEntity& e : entities) {
    const GpuRig& rig = models_[e.model].rigs()[e.rig];
    for (uint32_t j = 0; j < rig.joint_count; ++j) {
      const glm::vec3 joint(e.world * (e.palette[j] * rig.joint_bind_origin[j]));
      const int32_t parent = rig.joint_parent[j];
      if (parent >= 0) {
        const auto p = static_cast<std::size_t>(parent);
        const glm::vec3 parent_joint(e.world * (e.palette[p] * rig.joint_bind_origin[p]));
        push(parent_joint, bone_color);
        push(joint, bone_color);
      } else {
        // A small cross marks each root joint.
        const float s = std::max(glm::length(rig.bind_bounds.size()) * 0.02f, 1e-3f);
        for (int axis = 0; axis < 3; ++axis) {
          glm::vec3 d(0.0f);
          d[axis] = s;
          push(joint - d, root_color);
          push(joint + d, root_color);
        }
      }
    }
  }
  draw_lines(line_vertices_, view_projection, /*depth_test=*/false);
}

void Renderer::draw_lines(std::span<const float> vertices, const glm::mat4& view_projection, bool depth_test) {
  if (vertices.size() < 12) return;
  const std::size_t bytes = vertices.size() / 6 * 6 * sizeof(float);
  glBindBuffer(GL_ARRAY_BUFFER, lines_buffer_);
  if (bytes > lines_capacity_) lines_capacity_ = bytes * 2;
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(lines_capacity_), nullptr, GL_STREAM_DRAW);
  glBufferSubData(GL_ARRAY_BUFFER, 0, static_cast<GLsizeiptr>(bytes), vertices.data());
  glBindBuffer(GL_ARRAY_BUFFER, 0);
  glUseProgram(lines_.id());
  glUniformMatrix4fv(lines_view_projection_, 1, GL_FALSE, &view_projection[0][0]);
  if (!depth_test) glDisable(GL_DEPTH_TEST);  // bones show through the skin
  glBindVertexArray(lines_vertex_array_);
  glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(bytes / (6 * sizeof(float)) / 2 * 2));
  glBindVertexArray(0);
  glEnable(GL_DEPTH_TEST);
}

}  // namespace posecast::render
