#include "posecast/render/palette_buffer.h"

#include <cstring>

#include "posecast/render/dual_quaternion.h"

namespace posecast::render {

namespace {
std::size_t align_up(std::size_t value, std::size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
}  // namespace

PaletteBuffer::PaletteBuffer(uint32_t max_joints)
    : block_bytes_(static_cast<std::size_t>(max_joints) * sizeof(glm::mat4)) {
  glGetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT, &alignment_);
  if (alignment_ < 16) alignment_ = 16;  // GL guarantees a positive value; keep mat4 alignment
  glGenBuffers(1, &buffer_);
}

PaletteBuffer::~PaletteBuffer() {
  if (buffer_) glDeleteBuffers(1, &buffer_);
}

bool PaletteBuffer::upload(std::span<const RenderEntity> entities,
                           std::span<const SkinningMode> modes) {
  if (!modes.empty() && modes.size() != entities.size()) return false;
  for (const RenderEntity& entity : entities) {
    if (entity.palette.size() * sizeof(glm::mat4) > block_bytes_) return false;
  }
  // Dual-quaternion entities are converted first (into one scratch run, entity after entity):
  // whether a palette converts decides its packed size.
  packed_modes_.resize(entities.size());
  rigid_fallbacks_ = 0;
  std::size_t dual_count = 0;
  for (std::size_t i = 0; i < entities.size(); ++i) {
    packed_modes_[i] = SkinningMode::kLinearBlend;
    if (modes.empty() || modes[i] != SkinningMode::kDualQuaternion) continue;
    const std::span<const glm::mat4> palette = entities[i].palette;
    if (dual_scratch_.size() < dual_count + palette.size()) {
      dual_scratch_.resize(dual_count + palette.size());
    }
    if (palette_to_dual_quaternions(palette,
                                    std::span(dual_scratch_).subspan(dual_count, palette.size()))) {
      packed_modes_[i] = SkinningMode::kDualQuaternion;
      dual_count += palette.size();
    } else {
      ++rigid_fallbacks_;
    }
  }
  const auto alignment = static_cast<std::size_t>(alignment_);
  offsets_.resize(entities.size());
  std::size_t end = 0;
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const std::size_t entry = packed_modes_[i] == SkinningMode::kDualQuaternion
                                  ? sizeof(DualQuaternion)
                                  : sizeof(glm::mat4);
    offsets_[i] = end;
    end = align_up(end + entities[i].palette.size() * entry, alignment);
  }
  used_bytes_ = end;
  // The last range is a whole block long, so the buffer reaches past the last palette.
  const std::size_t required =
      entities.empty() ? block_bytes_ : offsets_.back() + block_bytes_;
  if (staging_.size() < end) staging_.resize(end);
  std::size_t dual_next = 0;
  for (std::size_t i = 0; i < entities.size(); ++i) {
    const std::span<const glm::mat4> palette = entities[i].palette;
    if (palette.empty()) continue;
    if (packed_modes_[i] == SkinningMode::kDualQuaternion) {
      std::memcpy(staging_.data() + offsets_[i], dual_scratch_.data() + dual_next,
                  palette.size() * sizeof(DualQuaternion));
      dual_next += palette.size();
    } else {
      std::memcpy(staging_.data() + offsets_[i], palette.data(), palette.size_bytes());
    }
  }
  glBindBuffer(GL_UNIFORM_BUFFER, buffer_);
  if (required > capacity_) capacity_ = required + required / 2;
  // Orphan: the driver hands out fresh storage while last frame's draws still read the old.
  glBufferData(GL_UNIFORM_BUFFER, static_cast<GLsizeiptr>(capacity_), nullptr, GL_STREAM_DRAW);
  if (end > 0) {
    glBufferSubData(GL_UNIFORM_BUFFER, 0, static_cast<GLsizeiptr>(end), staging_.data());
  }
  glBindBuffer(GL_UNIFORM_BUFFER, 0);
  return true;
}

void PaletteBuffer::bind(std::size_t entity, GLuint binding) const {
  glBindBufferRange(GL_UNIFORM_BUFFER, binding, buffer_,
                    static_cast<GLintptr>(offsets_[entity]),
                    static_cast<GLsizeiptr>(block_bytes_));
}

}  // namespace posecast::render
