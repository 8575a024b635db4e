#include "headless_run.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "debug_overlay.h"
#include "frame_stats.h"
#include "model_sync.h"
#include "posecast/render/gl_context.h"
#include "posecast/render/image_io.h"
#include "posecast/render/offscreen_target.h"
#include "posecast/render/renderer.h"
#include "run_failure.h"

namespace posecast::viewer {

namespace {

constexpr int64_t kFrameStepUs = 16667;  // 1/60 s

double micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int run_headless(const ViewerOptions& options, PoseSource& source) {
  Result<std::unique_ptr<render::GlContext>> context = render::create_offscreen_context();
  if (!context) return fail(context.error().message);
  const render::ShaderSources shaders =
      options.shader_dir.empty() ? render::ShaderSources() : render::ShaderSources(options.shader_dir);
  Result<std::unique_ptr<render::Renderer>> renderer = render::Renderer::create(shaders);
  if (!renderer) return fail(renderer.error().message);
  if (Status status = sync_models(*renderer.value(), source, options.skinning); !status) {
    return fail(status.error().message);
  }
  Result<render::OffscreenTarget> target =
      render::OffscreenTarget::create(options.width, options.height);
  if (!target) return fail(target.error().message);

  const float aspect = static_cast<float>(options.width) / static_cast<float>(options.height);
  render::OrbitCamera camera;
  camera.frame(renderer.value()->bounds(source.entities()), aspect);
  const render::DrawOptions draw_options;

  std::unique_ptr<DebugOverlay> overlay;
  if (options.overlay) {
    Result<std::unique_ptr<DebugOverlay>> created = DebugOverlay::create(nullptr);
    if (!created) return fail(created.error().message);
    overlay = std::move(created.value());
  }
  TimeHistory frame_history;
  TimeHistory update_history;
  const std::string context_text = render::describe_current_context();

  std::vector<double> frame_us;
  std::vector<double> update_us;
  frame_us.reserve(options.frames);
  update_us.reserve(options.frames);
  render::DrawStats last{};
  std::vector<float> ring_vertices;
  target.value().bind();
  std::size_t next_action = 0;
  for (uint32_t frame = 0; frame < options.frames; ++frame) {
    // Scripted keys (--act): printed like the interactive viewer prints what a key did.
    while (next_action < options.actions.size() && options.actions[next_action].frame <= frame) {
      const ViewerAction action = options.actions[next_action++].action;
      std::printf("posecast-viewer: frame %u: %s\n", frame, perform(source, action, camera).c_str());
    }
    source.wait_for_next_frame();  // a live source's real-time pacing: not the frame's work
    const auto start = std::chrono::steady_clock::now();
    if (Status status = source.update(static_cast<int64_t>(frame) * kFrameStepUs); !status) {
      return fail(status.error().message);
    }
    if (Status status = sync_models(*renderer.value(), source, options.skinning); !status) {
      return fail(status.error().message);
    }
    update_us.push_back(micros_since(start));
    for (const std::string& notice : source.take_notices()) std::printf("posecast-viewer: frame %u: %s\n", frame, notice.c_str());
    const render::FrameView view =
        render::make_frame_view(camera, aspect, renderer.value()->bounds(source.entities()));
    ring_vertices.clear();
    const float background[3] = {draw_options.background.x, draw_options.background.y, draw_options.background.z};
    append_event_rings(source.recent_events(), source.event_clock_us(), view.grid_cell * 0.35f, background,
                       ring_vertices);
    source.append_marks(background, ring_vertices);
    render::DrawOptions with_rings = draw_options;
    with_rings.ground_lines = ring_vertices;  // footstep rings (docs/events.md), joints hit
    Result<render::DrawStats> drawn = renderer.value()->draw(view, source.entities(), with_rings);
    if (!drawn) return fail(drawn.error().message);
    last = drawn.value();
    if (overlay) {
      OverlayFrame overlay_frame;
      overlay_frame.width = options.width;
      overlay_frame.height = options.height;
      overlay_frame.source = source.describe();
      overlay_frame.context = context_text;
      overlay_frame.frame_ms = &frame_history;
      overlay_frame.update_ms = &update_history;
      overlay_frame.stats = last;
      overlay_frame.entities = source.entities();
      overlay_frame.network = source.network_panel();
      overlay_frame.events = source.recent_events();
      render::DrawOptions shown = draw_options;
      bool paused = false;
      overlay->draw(overlay_frame, OverlayControls{&shown, &paused});
    }
    glFinish();  // the frame is done when the GPU (llvmpipe) is: time what a viewer would wait
    frame_us.push_back(micros_since(start));
    frame_history.push(static_cast<float>(frame_us.back() / 1000.0));
    update_history.push(static_cast<float>(update_us.back() / 1000.0));
  }
  if (const GLenum error = glGetError(); error != GL_NO_ERROR) {
    return fail("OpenGL error 0x" + std::to_string(error) + " while rendering");
  }

  // Described now, at the last frame: the source's figures that depend on the clock (a network
  // source's delay: newest server time - render time) would otherwise count the screenshot's
  // read-back and PNG encoding (about 100 ms at 1280x720) as delay.
  const std::string final_description = source.describe();

  if (!options.screenshot.empty()) {
    render::RgbaImage image{options.width, options.height, target.value().read_rgba()};
    if (Status status = render::write_png(options.screenshot, image); !status) {
      return fail(status.error().message);
    }
  }

  if (options.stats) {
    std::printf("posecast-viewer: %s\n", final_description.c_str());
    std::printf("  context: %s via %s, %dx%d offscreen\n",
                render::describe_current_context().c_str(), context.value()->backend(),
                options.width, options.height);
    // The first frame also compiles shaders in the driver (llvmpipe JIT): reported apart.
    const double first = frame_us.front();
    std::vector<double> steady(frame_us.begin() + (frame_us.size() > 1 ? 1 : 0), frame_us.end());
    std::vector<double> steady_update(update_us.begin() + (update_us.size() > 1 ? 1 : 0),
                                      update_us.end());
    std::printf("  frame time (update + upload + draw + glFinish), %zu frames after the first: %s\n",
                steady.size(), format_ms(summarise(steady)).c_str());
    std::printf("  first frame: %.2f ms\n", first / 1000.0);
    std::printf("  pose update (local evaluation, or the network client's update; wall time): %s\n",
                format_ms(summarise(steady_update)).c_str());
    std::printf("  per frame: %u entities, %u draw calls, %llu triangles, %zu palette bytes\n",
                last.entities, last.draw_calls, static_cast<unsigned long long>(last.triangles),
                last.palette_bytes);
    std::printf("  skinning (--skinning %s): %u entities with dual quaternions, %u with linear "
                "blend, %u of them fallen back from dual quaternions (palette not rigid)\n",
                render::to_string(options.skinning), last.dual_quaternion_entities,
                last.entities - last.dual_quaternion_entities, last.rigid_fallbacks);
  }
  if (!options.screenshot.empty()) {
    std::printf("posecast-viewer: wrote %s (%dx%d)\n", options.screenshot.c_str(), options.width,
                options.height);
  }
  return kExitOk;
}

}  // namespace posecast::viewer
