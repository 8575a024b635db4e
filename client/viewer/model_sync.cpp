#include "model_sync.h"

#include <cstdio>

namespace posecast::viewer {

Status sync_models(render::Renderer& renderer, const PoseSource& source,
                   render::SkinningMode skinning) {
  while (renderer.model_count() < source.model_count()) {
    std::vector<std::string> warnings;
    Result<uint32_t> id =
        renderer.add_model(source.model(renderer.model_count()), &warnings, skinning);
    for (const std::string& warning : warnings) {
      std::fprintf(stderr, "posecast-viewer: warning: %s\n", warning.c_str());
    }
    if (!id) return id.error();
  }
  return {};
}

}  // namespace posecast::viewer
