#include "posecast/render/shader_program.h"

#include <utility>

namespace posecast::render {

namespace {

std::string shader_log(GLuint shader) {
  GLint length = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<std::size_t>(length > 0 ? length : 1), '\0');
  glGetShaderInfoLog(shader, length, nullptr, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string program_log(GLuint program) {
  GLint length = 0;
  glGetProgramiv(program, GL_INFO_LOG_LENGTH, &length);
  std::string log(static_cast<std::size_t>(length > 0 ? length : 1), '\0');
  glGetProgramInfoLog(program, length, nullptr, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

ShaderProgram::~ShaderProgram() {
  if (program_) glDeleteProgram(program_);
}

ShaderProgram::ShaderProgram(ShaderProgram&& other) noexcept
    : program_(std::exchange(other.program_, 0u)) {}

ShaderProgram& ShaderProgram::operator=(ShaderProgram&& other) noexcept {
  if (this != &other) {
    if (program_) glDeleteProgram(program_);
    program_ = std::exchange(other.program_, 0u);
  }
  return *this;
}

Result<ShaderProgram> ShaderProgram::build(const std::vector<ShaderStage>& stages,
                                           const std::vector<const char*>& feedback_varyings) {
  const GLuint program = glCreateProgram();
  std::vector<GLuint> shaders;
  auto cleanup = [&] {
    for (GLuint shader : shaders) glDeleteShader(shader);
  };
  for (const ShaderStage& stage : stages) {
    const GLuint shader = glCreateShader(stage.type);
    shaders.push_back(shader);
    const char* text = stage.source.c_str();
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    GLint compiled = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &compiled);
    if (compiled != GL_TRUE) {
      Error error{stage.name + ": compile failed: " + shader_log(shader)};
      cleanup();
      glDeleteProgram(program);
      return error;
    }
    glAttachShader(program, shader);
  }
  if (!feedback_varyings.empty()) {
    glTransformFeedbackVaryings(program, static_cast<GLsizei>(feedback_varyings.size()),
                                feedback_varyings.data(), GL_INTERLEAVED_ATTRIBS);
  }
  glLinkProgram(program);
  cleanup();
  GLint linked = GL_FALSE;
  glGetProgramiv(program, GL_LINK_STATUS, &linked);
  if (linked != GL_TRUE) {
    std::string names;
    for (const ShaderStage& stage : stages) names += (names.empty() ? "" : "+") + stage.name;
    Error error{names + ": link failed: " + program_log(program)};
    glDeleteProgram(program);
    return error;
  }
  return ShaderProgram(program);
}

}  // namespace posecast::render
