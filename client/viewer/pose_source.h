#pragma once
// PoseSource: where the viewer's entities come from, frame by frame. The viewer owns one and,
// each frame, calls update(now) and draws entities(). Two implementations:
//   LocalPlaybackSource (local_playback_source.h): --model FILE, clips evaluated locally with
//     the core library; the only place the viewer evaluates clips.
//   NetworkPoseSource (network_pose_source.h): --connect HOST:PORT, decoded, interpolated
//     palettes from a server; models named by the welcome manifest.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <glm/vec3.hpp>

#include "event_marks.h"
#include "network_panel.h"
#include "posecast/model.h"
#include "posecast/render/orbit_camera.h"
#include "posecast/render/render_entity.h"
#include "posecast/result.h"
#include "viewer_action.h"

namespace posecast::viewer {

class PoseSource {
 public:
  virtual ~PoseSource() = default;

  // Models that RenderEntity::model indexes: ids 0..model_count()-1. Append-only: a source
  // may learn models late (a network source after its welcome message); the viewer uploads
  // each new id once, in order.
  virtual std::size_t model_count() const = 0;
  virtual const Model& model(std::size_t id) const = 0;

  // Blocks until the source's next frame is due: a live source paces to real time; others
  // never wait (the default). The viewer calls it before update(), outside the frame's timing,
  // so --stats figures are the frame's own work, not the wait.
  virtual void wait_for_next_frame() {}

  // Advances to render time `now_us` (microseconds since the viewer started; headless runs step
  // it by a fixed 1/60 s so their images are reproducible). Errors stop the viewer.
  virtual Status update(int64_t now_us) = 0;

  // This frame's entities; the palette spans stay valid until the next update().
  virtual std::span<const render::RenderEntity> entities() const = 0;

  // One line for the window title and the stats: what is shown.
  virtual std::string describe() const = 0;

  // Carries out a key or scripted action (viewer_action.h). Returns one line saying what was
  // sent, or why nothing was (the viewer prints it).
  virtual std::string act(ViewerAction action) {
    return std::string(to_string(action)) + ": not available without --connect";
  }

  // Fires a hit query along the view: `eye` is the camera's position, `forward` its unit line
  // of sight (through the screen centre). Returns one line saying what was fired, or why not;
  // the answer comes later (take_notices). Sources without a server fire nothing.
  virtual std::string fire(const glm::vec3& /*eye*/, const glm::vec3& /*forward*/) {
    return "fire: not available without --connect";
  }

  // Lines to print that no key asked for (the answers to hit queries), oldest first; taken once.
  virtual std::vector<std::string> take_notices() { return {}; }

  // Appends this frame's extra world-space lines (render::DrawOptions::ground_lines: x y z r g b
  // per vertex, two a segment), e.g. the joints recent shots hit; `background` is what marks
  // fade into.
  virtual void append_marks(const float /*background*/[3], std::vector<float>& /*out*/) {}

  // Where the camera should look when it follows an entity (the owned one), or nullopt.
  virtual std::optional<glm::vec3> follow_target() const { return std::nullopt; }

  // Network figures for the overlay; null for sources without a network.
  virtual const NetworkPanel* network_panel() const { return nullptr; }

  // The animation events fired recently (at most kMaxRecentEvents, oldest first; docs/events.md)
  // and the clock they were fired on (ViewerEvent::fired_us); none for sources without a network.
  virtual std::span<const ViewerEvent> recent_events() const { return {}; }
  virtual int64_t event_clock_us() const { return 0; }
};

// Carries out `action` on `source`: kFire along `camera`'s line of sight (through the screen
// centre), the others through act(). Returns the line to print.
std::string perform(PoseSource& source, ViewerAction action, const render::OrbitCamera& camera);

}  // namespace posecast::viewer
