#pragma once
// How a viewer run (headless_run.cpp, interactive_run.cpp) reports the failure that ends it.

#include <cstdio>
#include <string>

#include "viewer_options.h"

namespace posecast::viewer {

// Prints "posecast-viewer: <why>" to stderr and returns kExitFailure.
inline int fail(const std::string& why) {
  std::fprintf(stderr, "posecast-viewer: %s\n", why.c_str());
  return kExitFailure;
}

}  // namespace posecast::viewer
