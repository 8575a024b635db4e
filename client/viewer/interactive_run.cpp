#include "interactive_run.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <optional>
#include <vector>

#include "debug_overlay.h"
#include "frame_stats.h"
#include "model_sync.h"
#include "posecast/render/gl_context.h"
#include "posecast/render/renderer.h"
#include "run_failure.h"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

namespace posecast::viewer {

namespace {

// Ctrl+C (SIGINT/SIGTERM) ends the loop normally, so --stats still prints.
volatile std::sig_atomic_t g_stop_requested = 0;
extern "C" void request_stop(int /*signal*/) { g_stop_requested = 1; }

// Everything the GLFW callbacks change; reached through the window's user pointer.
struct InputState {
  const DebugOverlay* overlay = nullptr;
  PoseSource* source = nullptr;
  bool overlay_visible = true;
  render::OrbitCamera camera;
  render::DrawOptions draw;
  bool paused = false;
  bool frame_requested = true;  // frame all entities on the first frame
  bool rotating = false;
  bool panning = false;
  double press_x = 0.0;  // where the left button went down: a release there is a click (fire)
  double press_y = 0.0;
  double last_x = 0.0;
  double last_y = 0.0;
  int framebuffer_width = 0;
  int framebuffer_height = 0;
};

InputState& state_of(GLFWwindow* window) {
  return *static_cast<InputState*>(glfwGetWindowUserPointer(window));
}

// Keys that drive the session (an owned entity, a replay): handed to the pose source.
std::optional<ViewerAction> session_key(int key) {
  switch (key) {
    case GLFW_KEY_1: return ViewerAction::kIdle;
    case GLFW_KEY_2: return ViewerAction::kWalk;
    case GLFW_KEY_3: return ViewerAction::kRun;
    case GLFW_KEY_4: return ViewerAction::kWave;
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_KP_ADD: return ViewerAction::kFaster;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT: return ViewerAction::kSlower;
    case GLFW_KEY_TAB: return ViewerAction::kNextOwned;
    case GLFW_KEY_P: return ViewerAction::kReplayToggle;
    case GLFW_KEY_PERIOD: return ViewerAction::kReplayStep;
    case GLFW_KEY_W:
    case GLFW_KEY_UP: return ViewerAction::kSteerFaster;
    case GLFW_KEY_S:
    case GLFW_KEY_DOWN: return ViewerAction::kSteerSlower;
    case GLFW_KEY_A:
    case GLFW_KEY_LEFT: return ViewerAction::kSteerLeft;  // a replay seeks back instead
    case GLFW_KEY_D:
    case GLFW_KEY_RIGHT: return ViewerAction::kSteerRight;
    case GLFW_KEY_C: return ViewerAction::kFollowToggle;
    case GLFW_KEY_LEFT_BRACKET: return ViewerAction::kReplaySlower;
    case GLFW_KEY_RIGHT_BRACKET: return ViewerAction::kReplayFaster;
    case GLFW_KEY_ENTER:
    case GLFW_KEY_KP_ENTER: return ViewerAction::kFire;
    default: return std::nullopt;
  }
}

void on_key(GLFWwindow* window, int key, int /*scancode*/, int action, int /*mods*/) {
  if (action != GLFW_PRESS) return;
  InputState& s = state_of(window);
  if (s.overlay && s.overlay_visible && s.overlay->wants_keyboard()) return;
  if (const std::optional<ViewerAction> session = session_key(key); session && s.source) {
    std::printf("posecast-viewer: %s\n", perform(*s.source, *session, s.camera).c_str());
    std::fflush(stdout);
    return;
  }
  switch (key) {
    case GLFW_KEY_ESCAPE:
    case GLFW_KEY_Q: glfwSetWindowShouldClose(window, GLFW_TRUE); break;
    case GLFW_KEY_F: s.frame_requested = true; break;
    case GLFW_KEY_K: s.draw.skeleton = !s.draw.skeleton; break;
    case GLFW_KEY_X: s.draw.wireframe = !s.draw.wireframe; break;
    case GLFW_KEY_G: s.draw.grid = !s.draw.grid; break;
    case GLFW_KEY_SPACE: s.paused = !s.paused; break;
    case GLFW_KEY_H: s.overlay_visible = !s.overlay_visible; break;
    default: break;
  }
}

void on_mouse_button(GLFWwindow* window, int button, int action, int mods) {
  InputState& s = state_of(window);
  // Presses over the overlay belong to it; releases always end a drag.
  const bool pressed = action == GLFW_PRESS;
  if (pressed && s.overlay && s.overlay_visible && s.overlay->wants_mouse()) return;
  glfwGetCursorPos(window, &s.last_x, &s.last_y);
  if (button == GLFW_MOUSE_BUTTON_LEFT) {
    const bool shift = (mods & GLFW_MOD_SHIFT) != 0;
    // A left click that did not drag (within 3 pixels) fires along the view.
    if (!pressed && s.rotating && std::abs(s.last_x - s.press_x) <= 3.0 && std::abs(s.last_y - s.press_y) <= 3.0 &&
        s.source != nullptr) {
      std::printf("posecast-viewer: %s\n", perform(*s.source, ViewerAction::kFire, s.camera).c_str());
      std::fflush(stdout);
    }
    if (pressed) s.press_x = s.last_x, s.press_y = s.last_y;
    s.rotating = pressed && !shift;
    s.panning = pressed && shift;
  } else if (button == GLFW_MOUSE_BUTTON_RIGHT || button == GLFW_MOUSE_BUTTON_MIDDLE) {
    s.panning = pressed;
  }
}

void on_cursor(GLFWwindow* window, double x, double y) {
  InputState& s = state_of(window);
  const auto dx = static_cast<float>(x - s.last_x);
  const auto dy = static_cast<float>(y - s.last_y);
  s.last_x = x;
  s.last_y = y;
  const float height = static_cast<float>(s.framebuffer_height > 0 ? s.framebuffer_height : 720);
  if (s.rotating) s.camera.orbit(-dx * 0.008f, dy * 0.008f);
  if (s.panning) s.camera.pan(-dx / height, dy / height);
}

void on_scroll(GLFWwindow* window, double /*x*/, double y) {
  InputState& s = state_of(window);
  if (s.overlay && s.overlay_visible && s.overlay->wants_mouse()) return;
  s.camera.zoom(y > 0 ? 0.88f : 1.0f / 0.88f);
}

void on_framebuffer_size(GLFWwindow* window, int width, int height) {
  InputState& s = state_of(window);
  s.framebuffer_width = width;
  s.framebuffer_height = height;
}

}  // namespace

int run_interactive(const ViewerOptions& options, PoseSource& source) {
  render::WindowOptions window_options;
  window_options.width = options.width;
  window_options.height = options.height;
  window_options.title = "posecast-viewer";
  Result<std::unique_ptr<render::GlContext>> context = render::create_window_context(window_options);
  if (!context) return fail(context.error().message);
  GLFWwindow* window = context.value()->window();
  const render::ShaderSources shaders =
      options.shader_dir.empty() ? render::ShaderSources() : render::ShaderSources(options.shader_dir);
  Result<std::unique_ptr<render::Renderer>> renderer = render::Renderer::create(shaders);
  if (!renderer) return fail(renderer.error().message);
  render::Renderer& r = *renderer.value();

  InputState input;
  input.source = &source;
  glfwGetFramebufferSize(window, &input.framebuffer_width, &input.framebuffer_height);
  glfwSetWindowUserPointer(window, &input);
  glfwSetKeyCallback(window, on_key);
  glfwSetMouseButtonCallback(window, on_mouse_button);
  glfwSetCursorPosCallback(window, on_cursor);
  glfwSetScrollCallback(window, on_scroll);
  glfwSetFramebufferSizeCallback(window, on_framebuffer_size);
  // After the viewer's callbacks, so ImGui's chain to them.
  Result<std::unique_ptr<DebugOverlay>> overlay = DebugOverlay::create(window);
  if (overlay) {
    input.overlay = overlay.value().get();
  } else {
    std::fprintf(stderr, "posecast-viewer: %s\n", overlay.error().message.c_str());
  }
  TimeHistory frame_history;
  TimeHistory update_history;
  const std::string context_text = render::describe_current_context();

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();  // play time 0 on the first frame
  auto last_frame = start;
  auto last_title = start;
  int64_t play_time_us = 0;
  std::vector<double> frame_us;
  std::vector<double> title_window_us;
  std::vector<float> ring_vertices;  // footstep rings, rebuilt every frame
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  while (!glfwWindowShouldClose(window) && !g_stop_requested) {
    glfwPollEvents();
    const auto now = Clock::now();
    if (now != start) {
      const auto step = std::chrono::duration_cast<std::chrono::microseconds>(now - last_frame);
      frame_us.push_back(static_cast<double>(step.count()));
      title_window_us.push_back(static_cast<double>(step.count()));
      frame_history.push(static_cast<float>(step.count()) / 1000.0f);
      if (!input.paused) play_time_us += step.count();
    }
    last_frame = now;

    source.wait_for_next_frame();  // with vsync at 60 Hz a live source rarely waits here
    const auto update_start = Clock::now();
    if (Status status = source.update(play_time_us); !status) return fail(status.error().message);
    update_history.push(
        std::chrono::duration<float, std::milli>(Clock::now() - update_start).count());
    for (const std::string& notice : source.take_notices()) std::printf("posecast-viewer: %s\n", notice.c_str());
    std::fflush(stdout);
    if (Status status = sync_models(r, source, options.skinning); !status) {
      return fail(status.error().message);
    }
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glViewport(0, 0, input.framebuffer_width, input.framebuffer_height);
    const float aspect = input.framebuffer_height > 0
                             ? static_cast<float>(input.framebuffer_width) /
                                   static_cast<float>(input.framebuffer_height)
                             : 1.0f;
    if (input.frame_requested) {
      input.camera.frame(r.bounds(source.entities()), aspect);
      input.frame_requested = false;
    }
    // Following the owned entity: the orbit keeps its angles and distance, its target moves.
    if (const std::optional<glm::vec3> followed = source.follow_target()) input.camera.target = *followed;
    const render::FrameView view =
        render::make_frame_view(input.camera, aspect, r.bounds(source.entities()));
    // Footstep rings where the recent animation events happened (docs/events.md).
    ring_vertices.clear();
    const float background[3] = {input.draw.background.x, input.draw.background.y, input.draw.background.z};
    append_event_rings(source.recent_events(), source.event_clock_us(), view.grid_cell * 0.35f, background,
                       ring_vertices);
    source.append_marks(background, ring_vertices);  // the joints recent shots hit
    render::DrawOptions with_rings = input.draw;
    with_rings.ground_lines = ring_vertices;
    Result<render::DrawStats> drawn = r.draw(view, source.entities(), with_rings);
    if (!drawn) return fail(drawn.error().message);
    if (input.overlay && input.overlay_visible) {
      OverlayFrame frame;
      frame.width = input.framebuffer_width;
      frame.height = input.framebuffer_height;
      frame.source = source.describe();
      frame.context = context_text;
      frame.frame_ms = &frame_history;
      frame.update_ms = &update_history;
      frame.stats = drawn.value();
      frame.entities = source.entities();
      frame.network = source.network_panel();
      frame.events = source.recent_events();
      overlay.value()->draw(frame, OverlayControls{&input.draw, &input.paused});
    }
    glfwSwapBuffers(window);

    if (now - last_title > std::chrono::milliseconds(500) && !title_window_us.empty()) {
      const FrameSummary summary = summarise(title_window_us);
      title_window_us.clear();
      last_title = now;
      char title[512];
      std::snprintf(title, sizeof title, "posecast-viewer | %s | %.1f fps (%.2f ms)%s%s%s",
                    source.describe().c_str(), 1e6 / summary.median_us, summary.median_us / 1000.0,
                    input.paused ? " | paused" : "", input.draw.skeleton ? " | skeleton" : "",
                    input.draw.wireframe ? " | wireframe" : "");
      glfwSetWindowTitle(window, title);
    }
  }
  if (options.stats) {
    std::printf("posecast-viewer: %s\n", source.describe().c_str());
    std::printf("  context: %s via %s\n", render::describe_current_context().c_str(),
                context.value()->backend());
    std::printf("  frame interval (vsync on), %zu frames: %s\n", frame_us.size(),
                format_ms(summarise(frame_us)).c_str());
  }
  return kExitOk;
}

}  // namespace posecast::viewer
