#include "gltf/glb_container.h"

namespace posecast::gltf {
namespace {

constexpr uint32_t kMagic = 0x46546C67u;      // "glTF"
constexpr uint32_t kChunkJson = 0x4E4F534Au;  // "JSON"
constexpr uint32_t kChunkBin = 0x004E4942u;   // "BIN\0"

uint32_t load_u32_le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

Error glb_error(const std::string& file, const char* where, const std::string& reason) {
  return Error{file + ": " + where + ": " + reason};
}

}  // namespace

bool is_glb(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && load_u32_le(bytes.data()) == kMagic;
}

Result<GlbLayout> parse_glb(std::span<const uint8_t> bytes, const std::string& file) {
  if (bytes.size() < 12) return glb_error(file, "GLB header", "file shorter than the 12-byte header");
  if (load_u32_le(bytes.data()) != kMagic) return glb_error(file, "GLB header", "magic is not glTF");
  const uint32_t version = load_u32_le(bytes.data() + 4);
  if (version != 2)
    return glb_error(file, "GLB header", "version " + std::to_string(version) + " is not 2");
  const uint64_t length = load_u32_le(bytes.data() + 8);
  if (length != bytes.size())
    return glb_error(file, "GLB header",
                     "declared length " + std::to_string(length) + " but the file has " +
                         std::to_string(bytes.size()) + " bytes");

  GlbLayout layout;
  // Chunk 0: JSON.
  if (length < 20) return glb_error(file, "GLB chunk 0", "missing (file ends after the header)");
  const uint64_t json_size = load_u32_le(bytes.data() + 12);
  if (load_u32_le(bytes.data() + 16) != kChunkJson)
    return glb_error(file, "GLB chunk 0", "first chunk is not of type JSON");
  if (json_size == 0) return glb_error(file, "GLB chunk 0", "JSON chunk is empty");
  if (json_size % 4 != 0)
    return glb_error(file, "GLB chunk 0", "JSON chunk length is not a multiple of 4");
  if (20 + json_size > length)
    return glb_error(file, "GLB chunk 0",
                     "JSON chunk of " + std::to_string(json_size) + " bytes runs past the file end");
  layout.json_offset = 20;
  layout.json_size = static_cast<std::size_t>(json_size);

  // Chunk 1: BIN, optional.
  const uint64_t bin_header = 20 + json_size;
  if (bin_header == length) return layout;
  if (bin_header + 8 > length)
    return glb_error(file, "GLB chunk 1", "truncated chunk header");
  const uint64_t bin_size = load_u32_le(bytes.data() + bin_header);
  const uint32_t bin_type = load_u32_le(bytes.data() + bin_header + 4);
  if (bin_type != kChunkBin) {
    // Unknown chunk types are to be ignored; but tinygltf reads any second chunk as BIN, so a
    // file whose second chunk is not BIN cannot be handed on safely.
    return glb_error(file, "GLB chunk 1", "second chunk is not of type BIN");
  }
  if (bin_size % 4 != 0)
    return glb_error(file, "GLB chunk 1", "BIN chunk length is not a multiple of 4");
  if (bin_size < 4)
    return glb_error(file, "GLB chunk 1", "BIN chunk is empty (omit the chunk instead)");
  if (bin_header + 8 + bin_size > length)
    return glb_error(file, "GLB chunk 1",
                     "BIN chunk of " + std::to_string(bin_size) + " bytes runs past the file end");
  layout.has_bin = true;
  layout.bin_offset = static_cast<std::size_t>(bin_header + 8);
  layout.bin_size = static_cast<std::size_t>(bin_size);
  return layout;
}

}  // namespace posecast::gltf
