#pragma once
// GLSL program objects: compile, link, look up uniforms. Needs a current context.

#include <string>
#include <vector>

#include "posecast/render/gl.h"
#include "posecast/result.h"

namespace posecast::render {

struct ShaderStage {
  GLenum type = GL_VERTEX_SHADER;
  std::string name;    // file name, used in messages
  std::string source;  // full GLSL text
};

// Owns one linked program; move-only.
class ShaderProgram {
 public:
  ShaderProgram() = default;
  ~ShaderProgram();
  ShaderProgram(ShaderProgram&& other) noexcept;
  ShaderProgram& operator=(ShaderProgram&& other) noexcept;
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;

  // Compiles and links the stages. `feedback_varyings` (optional) are captured interleaved by
  // transform feedback. Errors name the stage's file and carry the driver's log.
  static Result<ShaderProgram> build(const std::vector<ShaderStage>& stages,
                                     const std::vector<const char*>& feedback_varyings = {});

  GLuint id() const { return program_; }
  // -1 when the uniform is absent or optimised out (glUniform* ignores -1).
  GLint uniform(const char* name) const { return glGetUniformLocation(program_, name); }

 private:
  explicit ShaderProgram(GLuint program) : program_(program) {}
  GLuint program_ = 0;
};

}  // namespace posecast::render
