#pragma once
// PoseSource: where the viewer's entities come from, frame by frame. The viewer owns one and,
// each frame, calls update(now) and draws entities(). Two implementations are planned:
//   LocalPlaybackSource (local_playback_source.h): --model FILE, clips evaluated locally with
//     the core library; the only place the viewer evaluates clips.
//   a network source (later, on posecast_client in client/net/): decoded, interpolated palettes
//     from a server; models named by the welcome manifest.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "posecast/model.h"
#include "posecast/render/render_entity.h"
#include "posecast/result.h"

namespace posecast::viewer {

class PoseSource {
 public:
  virtual ~PoseSource() = default;

  // Models that RenderEntity::model indexes: ids 0..model_count()-1. Append-only: a source
  // may learn models late (a network source after its welcome message); the viewer uploads
  // each new id once, in order.
  virtual std::size_t model_count() const = 0;
  virtual const Model& model(std::size_t id) const = 0;

  // Advances to render time `now_us` (microseconds since the viewer started; headless runs step
  // it by a fixed 1/60 s so their images are reproducible). Errors stop the viewer.
  virtual Status update(int64_t now_us) = 0;

  // This frame's entities; the palette spans stay valid until the next update().
  virtual std::span<const render::RenderEntity> entities() const = 0;

  // One line for the window title and the stats: what is shown.
  virtual std::string describe() const = 0;
};

}  // namespace posecast::viewer
