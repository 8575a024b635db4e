#include "posecast/render/skinning_capture.h"

#include <string>

#include "posecast/render/dual_quaternion.h"

namespace posecast::render {

Result<SkinningCapture> SkinningCapture::create(const ShaderSources& sources,
                                                uint32_t max_joints, SkinningMode mode) {
  const std::string name = mode == SkinningMode::kDualQuaternion ? "skinned_dq.vert.glsl"
                                                                  : "skinned.vert.glsl";
  Result<std::string> vertex =
      sources.load(name, "#define POSECAST_MAX_JOINTS " + std::to_string(max_joints) + "\n");
  if (!vertex) return vertex.error();
  Result<ShaderProgram> program =
      ShaderProgram::build({{GL_VERTEX_SHADER, name, vertex.value()}},
                           {"v_skinned_position", "v_skinned_normal"});
  if (!program) return program.error();
  SkinningCapture capture;
  capture.program_ = std::move(program.value());
  capture.max_joints_ = max_joints;
  capture.mode_ = mode;
  const GLuint block = glGetUniformBlockIndex(capture.program_.id(), "Palette");
  if (block == GL_INVALID_INDEX) return Error{name + ": no uniform block 'Palette'"};
  glUniformBlockBinding(capture.program_.id(), block, 0);
  Result<OffscreenTarget> target = OffscreenTarget::create(1, 1);
  if (!target) return target.error();
  capture.framebuffer_ = std::make_unique<OffscreenTarget>(std::move(target.value()));
  return capture;
}

Result<std::vector<SkinnedVertex>> SkinningCapture::run(const GpuMesh& mesh,
                                                        std::span<const glm::mat4> palette) const {
  if (palette.size() > max_joints_) {
    return Error{"skinning capture: palette of " + std::to_string(palette.size()) +
                 " joints exceeds the block's " + std::to_string(max_joints_)};
  }
  const bool as_dual = mode_ == SkinningMode::kDualQuaternion;
  std::vector<DualQuaternion> dual(as_dual ? palette.size() : 0);
  if (as_dual && !palette_to_dual_quaternions(palette, dual)) {
    return Error{"skinning capture: the palette is not rigid (dual quaternions hold no scale)"};
  }
  const void* data = as_dual ? static_cast<const void*>(dual.data())
                             : static_cast<const void*>(palette.data());
  const std::size_t bytes = as_dual ? dual.size() * sizeof(DualQuaternion) : palette.size_bytes();
  GLuint buffer = 0;
  glGenBuffers(1, &buffer);
  // The matrix block's size, which also covers the dual-quaternion block (half of it).
  const GLsizeiptr block_bytes = static_cast<GLsizeiptr>(max_joints_ * sizeof(glm::mat4));
  glBindBuffer(GL_UNIFORM_BUFFER, buffer);
  glBufferData(GL_UNIFORM_BUFFER, block_bytes, nullptr, GL_STATIC_DRAW);
  if (bytes > 0) glBufferSubData(GL_UNIFORM_BUFFER, 0, static_cast<GLsizeiptr>(bytes), data);
  glBindBuffer(GL_UNIFORM_BUFFER, 0);
  glBindBufferRange(GL_UNIFORM_BUFFER, 0, buffer, 0, block_bytes);
  Result<std::vector<SkinnedVertex>> out = run_with_bound_palette(mesh);
  glBindBufferBase(GL_UNIFORM_BUFFER, 0, 0);
  glDeleteBuffers(1, &buffer);
  return out;
}

Result<std::vector<SkinnedVertex>> SkinningCapture::run_with_bound_palette(
    const GpuMesh& mesh) const {
  // Captured per uploaded (welded) vertex, returned per source vertex.
  std::vector<SkinnedVertex> out(mesh.vertex_count);
  if (mesh.vertex_count == 0) return std::vector<SkinnedVertex>(mesh.vertex_of_source.size());
  while (glGetError() != GL_NO_ERROR) {
  }
  GLuint feedback = 0;
  glGenBuffers(1, &feedback);
  const auto feedback_bytes = static_cast<GLsizeiptr>(out.size() * sizeof(SkinnedVertex));
  glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, feedback);
  glBufferData(GL_TRANSFORM_FEEDBACK_BUFFER, feedback_bytes, nullptr, GL_STATIC_READ);
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, feedback);

  GLint previous_framebuffer = 0;
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &previous_framebuffer);
  framebuffer_->bind();
  glUseProgram(program_.id());
  const glm::mat4 identity(1.0f);
  glUniformMatrix4fv(program_.uniform("u_model"), 1, GL_FALSE, &identity[0][0]);
  glUniformMatrix4fv(program_.uniform("u_view_projection"), 1, GL_FALSE, &identity[0][0]);
  glEnable(GL_RASTERIZER_DISCARD);
  glBindVertexArray(mesh.vertex_array);
  glBeginTransformFeedback(GL_POINTS);
  glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(mesh.vertex_count));
  glEndTransformFeedback();
  glBindVertexArray(0);
  glDisable(GL_RASTERIZER_DISCARD);
  glUseProgram(0);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, static_cast<GLuint>(previous_framebuffer));
  static_assert(sizeof(SkinnedVertex) == 24, "matches the two interleaved vec3 varyings");
  glGetBufferSubData(GL_TRANSFORM_FEEDBACK_BUFFER, 0, feedback_bytes, out.data());
  const GLenum error = glGetError();
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, 0);
  glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, 0);
  glDeleteBuffers(1, &feedback);
  if (error != GL_NO_ERROR) {
    return Error{"skinning capture: GL error " + std::to_string(error)};
  }
  std::vector<SkinnedVertex> per_source(mesh.vertex_of_source.size());
  for (std::size_t v = 0; v < per_source.size(); ++v) per_source[v] = out[mesh.vertex_of_source[v]];
  return per_source;
}

}  // namespace posecast::render
