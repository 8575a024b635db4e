#include "posecast/render/offscreen_target.h"

#include <cstring>
#include <string>
#include <utility>

namespace posecast::render {

OffscreenTarget::~OffscreenTarget() {
  if (framebuffer_) glDeleteFramebuffers(1, &framebuffer_);
  if (renderbuffers_[0]) glDeleteRenderbuffers(2, renderbuffers_);
}

OffscreenTarget::OffscreenTarget(OffscreenTarget&& other) noexcept
    : framebuffer_(std::exchange(other.framebuffer_, 0u)),
      width_(other.width_),
      height_(other.height_) {
  renderbuffers_[0] = std::exchange(other.renderbuffers_[0], 0u);
  renderbuffers_[1] = std::exchange(other.renderbuffers_[1], 0u);
}

Result<OffscreenTarget> OffscreenTarget::create(int width, int height) {
  GLint max_size = 0;
  glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_size);
  if (width < 1 || height < 1 || width > max_size || height > max_size) {
    return Error{"offscreen target " + std::to_string(width) + "x" + std::to_string(height) +
                 ": size must be 1.." + std::to_string(max_size)};
  }
  OffscreenTarget target;
  target.width_ = width;
  target.height_ = height;
  glGenRenderbuffers(2, target.renderbuffers_);
  glBindRenderbuffer(GL_RENDERBUFFER, target.renderbuffers_[0]);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindRenderbuffer(GL_RENDERBUFFER, target.renderbuffers_[1]);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, width, height);
  glBindRenderbuffer(GL_RENDERBUFFER, 0);
  glGenFramebuffers(1, &target.framebuffer_);
  glBindFramebuffer(GL_FRAMEBUFFER, target.framebuffer_);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                            target.renderbuffers_[0]);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER,
                            target.renderbuffers_[1]);
  const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    return Error{"offscreen target: framebuffer incomplete (status 0x" +
                 std::to_string(status) + ")"};
  }
  return target;
}

void OffscreenTarget::bind() const {
  glBindFramebuffer(GL_FRAMEBUFFER, framebuffer_);
  glViewport(0, 0, width_, height_);
}

std::vector<uint8_t> OffscreenTarget::read_rgba() const {
  const auto row = static_cast<std::size_t>(width_) * 4;
  std::vector<uint8_t> pixels(row * static_cast<std::size_t>(height_));
  glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer_);
  glReadBuffer(GL_COLOR_ATTACHMENT0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  // GL's first row is the bottom one; PNG's is the top.
  std::vector<uint8_t> line(row);
  for (std::size_t top = 0, bottom = static_cast<std::size_t>(height_) - 1; top < bottom;
       ++top, --bottom) {
    std::memcpy(line.data(), pixels.data() + top * row, row);
    std::memcpy(pixels.data() + top * row, pixels.data() + bottom * row, row);
    std::memcpy(pixels.data() + bottom * row, line.data(), row);
  }
  return pixels;
}

}  // namespace posecast::render
