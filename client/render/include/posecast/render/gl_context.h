#pragma once
// OpenGL 3.3+ core contexts: a GLFW window (visible for the interactive viewer, hidden for
// headless rendering under X/Xvfb) or a raw EGL context on Mesa's surfaceless platform (no X
// at all). Headless rendering always draws into an OffscreenTarget, so either works.

#include <memory>
#include <string>

#include "posecast/result.h"

struct GLFWwindow;

namespace posecast::render {

// The message every "cannot get a context" failure starts with when there is no X display.
inline constexpr const char kNoDisplayMessage[] =
    "no display: run under xvfb-run, see docs/viewer.md";

class GlContext {
 public:
  virtual ~GlContext() = default;
  GlContext() = default;
  GlContext(const GlContext&) = delete;
  GlContext& operator=(const GlContext&) = delete;

  virtual void make_current() = 0;
  // "glfw" or "egl-surfaceless".
  virtual const char* backend() const = 0;
  // The GLFW window, or nullptr for EGL (no default framebuffer to present).
  virtual GLFWwindow* window() const = 0;
};

struct WindowOptions {
  int width = 1280;
  int height = 720;
  bool visible = true;
  bool vsync = true;
  std::string title = "posecast";
};

// A GLFW window with a current 3.3+ core context. Fails with kNoDisplayMessage when DISPLAY is
// unset, or with GLFW's reason. GLFW is initialised on first use and terminated when the last
// window closes. Main thread only.
Result<std::unique_ptr<GlContext>> create_window_context(const WindowOptions& options);

// A current 3.3+ core context on EGL_PLATFORM_SURFACELESS_MESA (no default framebuffer: draw
// into an OffscreenTarget). Fails with the EGL reason (no Mesa, missing extension, ...).
Result<std::unique_ptr<GlContext>> create_surfaceless_context();

// For headless work: a hidden GLFW window when DISPLAY is set (what CI exercises under
// xvfb-run), else EGL surfaceless; falls back to the other when the first fails. The error,
// when both fail, starts with kNoDisplayMessage and gives both reasons.
Result<std::unique_ptr<GlContext>> create_offscreen_context();

// "<GL_RENDERER> | <GL_VERSION>" of the current context.
std::string describe_current_context();

}  // namespace posecast::render
