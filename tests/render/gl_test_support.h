#pragma once
// Shared OpenGL context for render tests: created once per test binary (hidden GLFW window
// when DISPLAY is set, else EGL surfaceless); tests derive from GlTest and are skipped with the
// reason when no context can be made.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "posecast/render/gl_context.h"
#include "posecast/rig/model_source.h"

namespace posecast::render::testing {

class GlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (context_ || !context_error_.empty()) return;
    Result<std::unique_ptr<GlContext>> context = create_offscreen_context();
    if (context) {
      context_ = std::move(context.value());
    } else {
      context_error_ = context.error().message;
    }
  }
  void SetUp() override {
    if (!context_) GTEST_SKIP() << "no OpenGL context: " << context_error_;
    context_->make_current();
  }
  // The context outlives every suite (GLFW and EGL both dislike being torn down and re-made
  // many times); it is released at exit.
  static inline std::unique_ptr<GlContext> context_;
  static inline std::string context_error_;
};

inline bool assets_present() {
  return std::filesystem::exists(std::string(POSECAST_ASSETS_DIR) + "/Fox.glb");
}

inline std::string fox_path() { return std::string(POSECAST_ASSETS_DIR) + "/Fox.glb"; }

}  // namespace posecast::render::testing
