#pragma once
// How a model's vertices are skinned: linear blend of the palette matrices (the default) or
// dual-quaternion blending of the same palette converted per joint (dual_quaternion.h).

#include <cstdint>
#include <optional>
#include <string_view>

namespace posecast::render {

enum class SkinningMode : uint8_t {
  kLinearBlend = 0,     // shaders/skinned.vert.glsl: sum of weighted matrices
  kDualQuaternion = 1,  // shaders/skinned_dq.vert.glsl: blended unit dual quaternions
};

// "lbs" / "dqs", the names the viewer's --skinning flag takes.
inline const char* to_string(SkinningMode mode) {
  return mode == SkinningMode::kDualQuaternion ? "dqs" : "lbs";
}

// Inverse of to_string; nullopt for any other text.
inline std::optional<SkinningMode> parse_skinning_mode(std::string_view text) {
  if (text == "lbs") return SkinningMode::kLinearBlend;
  if (text == "dqs") return SkinningMode::kDualQuaternion;
  return std::nullopt;
}

}  // namespace posecast::render
