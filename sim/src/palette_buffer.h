#pragma once
// Internal: an entity's palette, joint-count matrices on cache lines of their own
// (CacheLineAllocator), in two words where a std::vector takes three: every tick streams the
// World's entities through the cache, and at 10,000 entities each word an entity costs time.

#include <algorithm>
#include <cstdint>
#include <span>

#include <glm/mat4x4.hpp>

#include "cache_line_allocator.h"

namespace posecast::sim {

class PaletteBuffer {
 public:
  PaletteBuffer() = default;
  PaletteBuffer(const PaletteBuffer& other) { copy_from(other); }
  PaletteBuffer(PaletteBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  PaletteBuffer& operator=(const PaletteBuffer& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  PaletteBuffer& operator=(PaletteBuffer&& other) noexcept {
    if (this != &other) {
      release();
      std::swap(data_, other.data_);
      std::swap(size_, other.size_);
    }
    return *this;
  }
  ~PaletteBuffer() { release(); }

  // `count` copies of `value` (count below 2^32; a rig has at most 65,535 joints).
  void assign(std::size_t count, const glm::mat4& value) {
    if (count != size_) {
      release();
      if (count > 0) data_ = CacheLineAllocator<glm::mat4>().allocate(count);
      size_ = static_cast<uint32_t>(count);
    }
    std::fill(data_, data_ + size_, value);
  }
  std::size_t size() const { return size_; }
  glm::mat4* data() { return data_; }
  const glm::mat4* data() const { return data_; }
  glm::mat4& operator[](std::size_t i) { return data_[i]; }
  const glm::mat4& operator[](std::size_t i) const { return data_[i]; }
  operator std::span<glm::mat4>() { return {data_, size_}; }
  operator std::span<const glm::mat4>() const { return {data_, size_}; }

 private:
  void release() {
    if (data_ != nullptr) CacheLineAllocator<glm::mat4>().deallocate(data_, size_);
    data_ = nullptr;
    size_ = 0;
  }
  void copy_from(const PaletteBuffer& other) {
    if (other.size_ == 0) {
      release();
      return;
    }
    assign(other.size_, glm::mat4(1.0f));
    std::copy(other.data_, other.data_ + other.size_, data_);
  }

  glm::mat4* data_ = nullptr;
  uint32_t size_ = 0;
};

}  // namespace posecast::sim
