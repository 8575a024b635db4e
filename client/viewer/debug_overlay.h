#pragma once
// The viewer's debug overlay (Dear ImGui, from Debian's libimgui-dev, which ships the GLFW and
// OpenGL 3 backends compiled into libimgui.a): what is shown, frame and pose-update times as
// plots with median/p99, per-frame draw figures, the entity list (model, rig, joints, palette
// bytes, position), and toggles for skeleton lines, wireframe, grid and pause.
// Built only when libimgui-dev is found (POSECAST_VIEWER_HAS_IMGUI); otherwise create() says so
// and the viewer runs without it. With a network source (--connect) it adds plots of kbit/s,
// RTT, loss, jitter, interpolation delay, buffer depth and decode time (NetworkPanel), and the
// control and replay lines.

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "event_marks.h"
#include "network_panel.h"
#include "posecast/render/renderer.h"
#include "posecast/result.h"
#include "time_history.h"

struct GLFWwindow;

namespace posecast::viewer {

struct OverlayFrame {
  int width = 0;   // framebuffer size in pixels
  int height = 0;
  float delta_seconds = 1.0f / 60.0f;
  std::string source;   // PoseSource::describe()
  std::string context;  // GL renderer and version
  const TimeHistory* frame_ms = nullptr;
  const TimeHistory* update_ms = nullptr;
  render::DrawStats stats;
  std::span<const render::RenderEntity> entities;
  const NetworkPanel* network = nullptr;  // PoseSource::network_panel(); null for local sources
  std::span<const ViewerEvent> events;    // PoseSource::recent_events(), oldest first
};

// Settings the overlay's widgets change.
struct OverlayControls {
  render::DrawOptions* draw = nullptr;
  bool* paused = nullptr;
};

class DebugOverlay {
 public:
  virtual ~DebugOverlay() = default;
  // `window`: take input from this GLFW window (interactive; install the viewer's own GLFW
  // callbacks first, the overlay chains to them). nullptr: no input, the display size comes
  // from each OverlayFrame (headless screenshots). Needs a current context.
  static Result<std::unique_ptr<DebugOverlay>> create(GLFWwindow* window);

  // True while the pointer is over an overlay window / a text field has focus.
  virtual bool wants_mouse() const = 0;
  virtual bool wants_keyboard() const = 0;
  // Draws into the bound framebuffer, over the scene.
  virtual void draw(const OverlayFrame& frame, const OverlayControls& controls) = 0;
};

}  // namespace posecast::viewer
