#pragma once
// All entities' palettes in one uniform buffer, re-uploaded each frame with a single
// glBufferSubData after orphaning. Entity i's palette starts at offsets[i], a multiple of
// GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT; it is bound with glBindBufferRange over the shader's
// whole block size (max_joints mat4s), so ranges may overlap the next entities' data (the
// shader reads only the entity's own joints) and the buffer is sized so that every range ends
// inside it, as GL requires.
//
// An entity skinned with dual quaternions gets its palette converted here, at upload
// (dual_quaternion.h says why here): two vec4s per joint instead of a mat4, in the same buffer.

#include <glm/mat4x4.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posecast/render/dual_quaternion.h"
#include "posecast/render/gl.h"
#include "posecast/render/render_entity.h"
#include "posecast/render/skinning_mode.h"

namespace posecast::render {

class PaletteBuffer {
 public:
  // Needs a current context; max_joints is the shader block's array size.
  explicit PaletteBuffer(uint32_t max_joints);
  ~PaletteBuffer();
  PaletteBuffer(const PaletteBuffer&) = delete;
  PaletteBuffer& operator=(const PaletteBuffer&) = delete;

  // Packs and uploads every entity's palette: entity i as matrices, or as unit dual
  // quaternions when modes[i] is kDualQuaternion (`modes` empty: every entity as matrices;
  // otherwise one per entity). A dual-quaternion entity whose palette holds a matrix that is
  // not rigid (is_rigid: scale, shear, mirror) is packed as matrices instead, for the LBS
  // shader; packed_mode() tells. False (uploading nothing) when a palette has more than
  // max_joints entries or `modes` has the wrong size. Reuses its staging memory: no allocation
  // once the largest frame has been seen.
  bool upload(std::span<const RenderEntity> entities, std::span<const SkinningMode> modes = {});
  // Binds entity i's range (from the last upload) to uniform binding point `binding`.
  void bind(std::size_t entity, GLuint binding) const;

  // How entity i's palette was packed in the last upload.
  SkinningMode packed_mode(std::size_t entity) const { return packed_modes_[entity]; }
  // Dual-quaternion entities of the last upload packed as matrices (palette not rigid).
  uint32_t rigid_fallbacks() const { return rigid_fallbacks_; }

  // Byte offset of entity i's palette in the last upload.
  std::size_t offset(std::size_t entity) const { return offsets_[entity]; }
  GLint alignment() const { return alignment_; }
  std::size_t block_bytes() const { return block_bytes_; }
  std::size_t bytes_uploaded() const { return used_bytes_; }  // last upload

 private:
  GLuint buffer_ = 0;
  GLint alignment_ = 256;
  std::size_t block_bytes_ = 0;
  std::size_t capacity_ = 0;   // GL buffer size
  std::size_t used_bytes_ = 0;
  std::vector<std::byte> staging_;
  std::vector<std::size_t> offsets_;
  std::vector<SkinningMode> packed_modes_;
  std::vector<DualQuaternion> dual_scratch_;  // the frame's conversions, in entity order
  uint32_t rigid_fallbacks_ = 0;
};

}  // namespace posecast::render
