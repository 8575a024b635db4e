#pragma once
// The generated rig's base colour texture: a small deterministic PNG (private to shared/rig).

#include <cstdint>
#include <vector>

namespace posecast::rig::detail {

inline constexpr uint32_t kTextureSize = 32;  // pixels per side

// A kTextureSize x kTextureSize 8-bit RGB PNG: a soft scale pattern (light checks with a darker
// band), meant to be tinted by the material's base colour factor. Stored (uncompressed) deflate
// blocks keep the encoder a few lines long; the file is about 3 KB.
std::vector<uint8_t> make_rig_texture_png();

}  // namespace posecast::rig::detail
