#pragma once
// Where GLSL text comes from: the copies of shaders/*.glsl embedded at build time
// (client/render/embed_shaders.cmake), or, when a directory is given, the files in it (the
// viewer's --shader-dir, for editing shaders without rebuilding).

#include <string>

#include "posecast/result.h"

namespace posecast::render {

class ShaderSources {
 public:
  ShaderSources() = default;  // embedded copies
  explicit ShaderSources(std::string directory) : directory_(std::move(directory)) {}

  // The text of `name` (e.g. "skinned.vert.glsl") with `defines` ("#define X 1\n" lines)
  // inserted after its #version line. Errors: unknown name, unreadable file, no #version.
  Result<std::string> load(const std::string& name, const std::string& defines = {}) const;

  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;  // empty: embedded
};

}  // namespace posecast::render
