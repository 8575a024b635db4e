#pragma once
// A framebuffer object of a fixed size (RGBA8 colour, 24-bit depth) for headless rendering and
// tests, with read-back in top-to-bottom row order (PNG order).

#include <cstdint>
#include <vector>

#include "posecast/render/gl.h"
#include "posecast/result.h"

namespace posecast::render {

class OffscreenTarget {
 public:
  ~OffscreenTarget();
  OffscreenTarget(OffscreenTarget&& other) noexcept;
  OffscreenTarget& operator=(OffscreenTarget&&) = delete;
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  // Needs a current context. Errors: size outside 1..GL_MAX_RENDERBUFFER_SIZE, incomplete FBO.
  static Result<OffscreenTarget> create(int width, int height);

  void bind() const;  // as the draw framebuffer, with the viewport set to its size
  // Waits for rendering and returns width*height*4 bytes, first row = top of the image.
  std::vector<uint8_t> read_rgba() const;

  int width() const { return width_; }
  int height() const { return height_; }

 private:
  OffscreenTarget() = default;
  GLuint framebuffer_ = 0;
  GLuint renderbuffers_[2] = {};  // colour, depth
  int width_ = 0;
  int height_ = 0;
};

}  // namespace posecast::render
