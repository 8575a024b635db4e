#pragma once
// Interactive mode: a GLFW window with an orbit camera (mouse), keys to frame all entities and
// toggle skeleton lines, wireframe and the grid.

#include "pose_source.h"
#include "viewer_options.h"

namespace posecast::viewer {

// Returns the process exit code; errors are printed as one line on stderr.
int run_interactive(const ViewerOptions& options, PoseSource& source);

}  // namespace posecast::viewer
