#pragma once
// The viewer's debug overlay (Dear ImGui, from Debian's libimgui-dev, which ships the GLFW and
// OpenGL 3 backends compiled into libimgui.a): what is shown, frame and pose-update times as
// plots with median/p99, per-frame draw figures, the entity list (model, rig, joints, palette
// bytes, position), and toggles for skeleton lines, wireframe, grid and pause.
// Built only when libimgui-dev is found (POSECAST_VIEWER_HAS_IMGUI); otherwise create() says so
// and the viewer runs without it. Network plots (bytes/s, RTT, loss, jitter, interpolation
// delay, buffer depth) belong to the network pose source and will be added with it.

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "posecast/render/renderer.h"
#include "posecast/result.h"

struct GLFWwindow;

namespace posecast::viewer {

// The last kFrames samples of a per-frame time, oldest first once full.
class TimeHistory {
 public:
  static constexpr std::size_t kFrames = 240;
  void push(float milliseconds);
  // Samples in time order into `out` (kFrames entries); returns how many are valid.
  std::size_t ordered(std::array<float, kFrames>& out) const;

 private:
  std::array<float, kFrames> samples_{};
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

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
