#pragma once
// Uploads the models a PoseSource has announced and the renderer has not seen yet (ids are
// append-only, so the renderer's model ids equal the source's).

#include "pose_source.h"
#include "posecast/render/renderer.h"

namespace posecast::viewer {

// Each model is added with `skinning`. Image-decode and skinning-fallback warnings go to stderr
// as "posecast-viewer: warning: ..." lines.
Status sync_models(render::Renderer& renderer, const PoseSource& source,
                   render::SkinningMode skinning);

}  // namespace posecast::viewer
