#pragma once
// The binary glTF container (.glb): a 12-byte header, a JSON chunk, an optional BIN chunk.
// Checked here, strictly and before tinygltf sees the bytes, so that no later reader can step
// outside the file (tinygltf 2.7.0 checks a BIN chunk's length without its 8-byte header).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "posecast/result.h"

namespace posecast::gltf {

struct GlbLayout {
  std::size_t json_offset = 0;  // first byte of the JSON chunk's data
  std::size_t json_size = 0;
  bool has_bin = false;
  std::size_t bin_offset = 0;
  std::size_t bin_size = 0;
};

// True when the bytes start with the GLB magic "glTF".
bool is_glb(std::span<const uint8_t> bytes);

// Checks magic, version 2, the header's total length against the byte count, the JSON chunk
// (first, type JSON, 4-byte aligned length) and the BIN chunk when present (second, type BIN,
// inside the file). Chunks after the second are ignored, as the spec requires.
// Errors read "<file>: GLB header: ..." or "<file>: GLB chunk N: ...".
Result<GlbLayout> parse_glb(std::span<const uint8_t> bytes, const std::string& file);

}  // namespace posecast::gltf
