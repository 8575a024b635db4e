#include "posecast/render/shader_sources.h"

#include <fstream>
#include <sstream>

#include "posecast/render/embedded_shaders.h"

namespace posecast::render {

Result<std::string> ShaderSources::load(const std::string& name,
                                        const std::string& defines) const {
  std::string text;
  if (directory_.empty()) {
    bool found = false;
    for (const embedded::EmbeddedShader& shader : embedded::kShaders) {
      if (name == shader.name) {
        text = shader.source;
        found = true;
        break;
      }
    }
    if (!found) return Error{name + ": no such embedded shader"};
  } else {
    const std::string path = directory_ + "/" + name;
    std::ifstream file(path, std::ios::binary);
    if (!file) return Error{path + ": cannot open shader file"};
    std::ostringstream buffer;
    buffer << file.rdbuf();
    text = buffer.str();
  }
  // #version must stay the first line, so the defines go right after it.
  const std::size_t version = text.find("#version");
  if (version == std::string::npos) return Error{name + ": no #version line"};
  const std::size_t line_end = text.find('\n', version);
  if (line_end == std::string::npos) return Error{name + ": nothing after the #version line"};
  text.insert(line_end + 1, defines);
  return text;
}

}  // namespace posecast::render
