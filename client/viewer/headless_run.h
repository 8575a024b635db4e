#pragma once
// Headless mode: render --frames N frames offscreen at a fixed 1/60 s step, optionally write
// the last one as a PNG and print frame-time statistics. Needs no window: a hidden GLFW window
// under X/Xvfb, or EGL surfaceless without X.

#include "pose_source.h"
#include "viewer_options.h"

namespace posecast::viewer {

// Returns the process exit code; errors are printed as one line on stderr.
int run_headless(const ViewerOptions& options, PoseSource& source);

}  // namespace posecast::viewer
