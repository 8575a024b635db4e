#include "posecast/render/skinning_capture.h"

#include <string>

namespace posecast::render {

Result<SkinningCapture> SkinningCapture::create(const ShaderSources& sources,
                                                uint32_t max_joints) {
  Result<std::string> vertex = sources.load(
      "skinned.vert.glsl", "#define POSECAST_MAX_JOINTS " + std::to_string(max_joints) + "\n");
  if (!vertex) return vertex.error();
  Result<ShaderProgram> program =
      ShaderProgram::build({{GL_VERTEX_SHADER, "skinned.vert.glsl", vertex.value()}},
                           {"v_skinned_position", "v_skinned_normal"});
  if (!program) return program.error();
  SkinningCapture capture;
  capture.program_ = std::move(program.value());
  capture.max_joints_ = max_joints;
  const GLuint block = glGetUniformBlockIndex(capture.program_.id(), "Palette");
  if (block == GL_INVALID_INDEX) return Error{"skinned.vert.glsl: no uniform block 'Palette'"};
  glUniformBlockBinding(capture.program_.id(), block, 0);
  return capture;
}

Result<std::vector<SkinnedVertex>> SkinningCapture::run(const GpuMesh& mesh,
                                                        std::span<const glm::mat4> palette) const {
  if (palette.size() > max_joints_) {
    return Error{"skinning capture: palette of " + std::to_string(palette.size()) +
                 " joints exceeds the block's " + std::to_string(max_joints_)};
  }
  std::vector<SkinnedVertex> out(mesh.vertex_count);
  if (mesh.vertex_count == 0) return out;
  while (glGetError() != GL_NO_ERROR) {
  }

  GLuint buffers[2] = {};  // palette, feedback
  glGenBuffers(2, buffers);
  const GLsizeiptr block_bytes = static_cast<GLsizeiptr>(max_joints_ * sizeof(glm::mat4));
  glBindBuffer(GL_UNIFORM_BUFFER, buffers[0]);
  glBufferData(GL_UNIFORM_BUFFER, block_bytes, nullptr, GL_STATIC_DRAW);
  glBufferSubData(GL_UNIFORM_BUFFER, 0, static_cast<GLsizeiptr>(palette.size_bytes()),
                  palette.data());
  glBindBufferRange(GL_UNIFORM_BUFFER, 0, buffers[0], 0, block_bytes);

  const auto feedback_bytes = static_cast<GLsizeiptr>(out.size() * sizeof(SkinnedVertex));
  glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, buffers[1]);
  glBufferData(GL_TRANSFORM_FEEDBACK_BUFFER, feedback_bytes, nullptr, GL_STATIC_READ);
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, buffers[1]);

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
  static_assert(sizeof(SkinnedVertex) == 24, "matches the two interleaved vec3 varyings");
  glGetBufferSubData(GL_TRANSFORM_FEEDBACK_BUFFER, 0, feedback_bytes, out.data());
  const GLenum error = glGetError();
  glBindBufferBase(GL_TRANSFORM_FEEDBACK_BUFFER, 0, 0);
  glBindBuffer(GL_TRANSFORM_FEEDBACK_BUFFER, 0);
  glBindBuffer(GL_UNIFORM_BUFFER, 0);
  glDeleteBuffers(2, buffers);
  if (error != GL_NO_ERROR) {
    return Error{"skinning capture: GL error 0x" + std::to_string(error)};
  }
  return out;
}

}  // namespace posecast::render
