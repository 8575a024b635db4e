// DebugOverlay on Dear ImGui 1.86 (Debian's libimgui-dev: headers in /usr/include/imgui, the
// GLFW and OpenGL 3 backends compiled into libimgui.a, found through pkg-config "imgui").

#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdio>

#include "debug_overlay.h"

namespace posecast::viewer {

namespace {

struct Percentiles {
  float median = 0.0f;
  float p99 = 0.0f;
  float max = 0.0f;
};

Percentiles percentiles(const std::array<float, TimeHistory::kFrames>& samples, std::size_t n) {
  Percentiles p;
  if (n == 0) return p;
  std::array<float, TimeHistory::kFrames> sorted = samples;
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n));
  p.median = sorted[n / 2];
  p.p99 = sorted[std::min(n - 1, (n * 99 + 99) / 100 - 1)];
  p.max = sorted[n - 1];
  return p;
}

void plot_values(const char* label, const TimeHistory* history, const char* unit) {
  if (!history) return;
  std::array<float, TimeHistory::kFrames> samples{};
  const std::size_t n = history->ordered(samples);
  const Percentiles p = percentiles(samples, n);
  ImGui::Text("%s: median %.2f %s, p99 %.2f %s", label, static_cast<double>(p.median), unit,
              static_cast<double>(p.p99), unit);
  ImGui::PlotLines((std::string("##") + label).c_str(), samples.data(), static_cast<int>(n), 0,
                   nullptr, 0.0f, std::max(p.max * 1.15f, 0.1f),
                   ImVec2(ImGui::GetContentRegionAvail().x, 48.0f));
}

class ImGuiOverlay final : public DebugOverlay {
 public:
  explicit ImGuiOverlay(GLFWwindow* window) : window_(window) {}
  ~ImGuiOverlay() override {
    ImGui_ImplOpenGL3_Shutdown();
    if (window_) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }

  bool wants_mouse() const override { return ImGui::GetIO().WantCaptureMouse; }
  bool wants_keyboard() const override { return ImGui::GetIO().WantCaptureKeyboard; }

  void draw(const OverlayFrame& frame, const OverlayControls& controls) override {
    ImGuiIO& io = ImGui::GetIO();
    ImGui_ImplOpenGL3_NewFrame();
    if (window_) {
      ImGui_ImplGlfw_NewFrame();
    } else {
      io.DisplaySize = ImVec2(static_cast<float>(frame.width), static_cast<float>(frame.height));
      io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
      io.DeltaTime = std::max(frame.delta_seconds, 1e-4f);
    }
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(10.0f, 10.0f), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(380.0f, 0.0f), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.8f);
    ImGui::Begin("posecast (H hides)");
    ImGui::TextWrapped("%s", frame.source.c_str());
    ImGui::TextDisabled("%s", frame.context.c_str());
    ImGui::Separator();
    plot_values("frame", frame.frame_ms, "ms");
    plot_values("pose update", frame.update_ms, "ms");
    ImGui::Text("%u entities, %u draws, %llu triangles", frame.stats.entities,
                frame.stats.draw_calls, static_cast<unsigned long long>(frame.stats.triangles));
    ImGui::Text("palette upload: %zu bytes/frame", frame.stats.palette_bytes);
    ImGui::Text("dual-quaternion skinned: %u", frame.stats.dual_quaternion_entities);
    ImGui::Separator();
    if (controls.draw) {
      ImGui::Checkbox("skeleton (K)", &controls.draw->skeleton);
      ImGui::SameLine();
      ImGui::Checkbox("wireframe (X)", &controls.draw->wireframe);
      ImGui::SameLine();
      ImGui::Checkbox("grid (G)", &controls.draw->grid);
    }
    if (controls.paused) ImGui::Checkbox("paused (Space)", controls.paused);
    if (frame.network && ImGui::CollapsingHeader("events", ImGuiTreeNodeFlags_DefaultOpen)) {
      // The latest animation events first (docs/events.md): tick, entity, clip / marker.
      if (frame.events.empty()) ImGui::TextDisabled("none yet");
      constexpr std::size_t kShown = 8;
      for (std::size_t k = 0; k < frame.events.size() && k < kShown; ++k) {
        const ViewerEvent& e = frame.events[frame.events.size() - 1 - k];
        ImGui::Text("tick %u  entity %u  %s / %s", e.tick, e.entity, e.clip.c_str(), e.marker.c_str());
      }
    }
    if (frame.network && ImGui::CollapsingHeader("hit queries", ImGuiTreeNodeFlags_DefaultOpen)) {
      const HitPanel& h = frame.network->hits;
      ImGui::Text("fired %llu: %llu hits, %llu misses, %llu refused", static_cast<unsigned long long>(h.fired),
                  static_cast<unsigned long long>(h.hits), static_cast<unsigned long long>(h.misses),
                  static_cast<unsigned long long>(h.refused));
      ImGui::Text("%llu of %llu answers as this viewer's frame showed", static_cast<unsigned long long>(h.agreed),
                  static_cast<unsigned long long>(h.agreed + h.disagreed));
      ImGui::TextDisabled("%s", h.last.empty() ? "Enter or a left click fires along the view" : h.last.c_str());
    }
    // Client-side prediction: only when the client's statistics carry it (prediction_panel.h).
    if (frame.network && frame.network->prediction &&
        ImGui::CollapsingHeader("prediction", ImGuiTreeNodeFlags_DefaultOpen)) {
      const PredictionPanel& p = *frame.network->prediction;
      ImGui::Text("predicted frames %llu, corrections %llu, confirmed %llu",
                  static_cast<unsigned long long>(p.predicted_frames), static_cast<unsigned long long>(p.corrections),
                  static_cast<unsigned long long>(p.confirmed));
    }
    if (frame.network && ImGui::CollapsingHeader("network", ImGuiTreeNodeFlags_DefaultOpen)) {
      const NetworkPanel& n = *frame.network;
      ImGui::TextWrapped("%s", n.control.c_str());
      if (!n.replay.empty()) ImGui::TextWrapped("%s", n.replay.c_str());
      if (!n.last_action.empty()) ImGui::TextDisabled("%s", n.last_action.c_str());
      plot_values("in", &n.kbit_in, "kbit/s");
      plot_values("RTT", &n.rtt_ms, "ms");
      plot_values("loss", &n.loss_percent, "%");
      plot_values("jitter", &n.jitter_ms, "ms");
      plot_values("interpolation delay", &n.delay_ms, "ms");
      plot_values("buffer depth", &n.buffer_depth, "ticks");
      plot_values("decode + interpolate", &n.decode_ms, "ms");
    }
    if (ImGui::CollapsingHeader("entities", ImGuiTreeNodeFlags_DefaultOpen)) {
      draw_entity_table(frame.entities);
    }
    ImGui::End();
    ImGui::Render();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }

 private:
  static void draw_entity_table(std::span<const render::RenderEntity> entities) {
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("entities", 6, flags, ImVec2(0.0f, 180.0f))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* name : {"#", "model", "rig", "joints", "bytes", "position"}) {
      ImGui::TableSetupColumn(name);
    }
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;  // only visible rows cost anything, even for 10000 entities
    clipper.Begin(static_cast<int>(entities.size()));
    while (clipper.Step()) {
      for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
        const render::RenderEntity& e = entities[static_cast<std::size_t>(row)];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%d", row);
        ImGui::TableNextColumn();
        ImGui::Text("%u", e.model);
        ImGui::TableNextColumn();
        ImGui::Text("%u", e.rig);
        ImGui::TableNextColumn();
        ImGui::Text("%zu", e.palette.size());
        ImGui::TableNextColumn();
        ImGui::Text("%zu", e.palette.size_bytes());
        ImGui::TableNextColumn();
        ImGui::Text("%.2f %.2f %.2f", static_cast<double>(e.world[3].x),
                    static_cast<double>(e.world[3].y), static_cast<double>(e.world[3].z));
      }
    }
    ImGui::EndTable();
  }

  GLFWwindow* window_;
};

}  // namespace

Result<std::unique_ptr<DebugOverlay>> DebugOverlay::create(GLFWwindow* window) {
  if (ImGui::GetCurrentContext()) return Error{"debug overlay: one overlay at a time"};
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // no imgui.ini beside the user's files
  ImGui::StyleColorsDark();
  if (window && !ImGui_ImplGlfw_InitForOpenGL(window, true)) {
    ImGui::DestroyContext();
    return Error{"debug overlay: ImGui GLFW backend failed to start"};
  }
  if (!ImGui_ImplOpenGL3_Init("#version 330 core")) {
    if (window) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    return Error{"debug overlay: ImGui OpenGL 3 backend failed to start"};
  }
  return std::unique_ptr<DebugOverlay>(std::make_unique<ImGuiOverlay>(window));
}

}  // namespace posecast::viewer
