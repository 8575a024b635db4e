// DebugOverlay when the build found no Dear ImGui (libimgui-dev): the viewer runs without it.
#include "debug_overlay.h"

namespace posecast::viewer {

Result<std::unique_ptr<DebugOverlay>> DebugOverlay::create(GLFWwindow* /*window*/) {
  return Error{"debug overlay: built without Dear ImGui (install libimgui-dev and reconfigure)"};
}

}  // namespace posecast::viewer
