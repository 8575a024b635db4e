#pragma once
// Bounds-checked reading of glTF accessors: byteOffset, byteStride, alignment and sparse
// substitution as glTF 2.0 defines them, with every range checked against the buffer view and
// the buffer before a byte is read. Integer components decode with the spec's formulas
// (normalised: BYTE max(c/127, -1), UNSIGNED_BYTE c/255, SHORT max(c/32767, -1),
// UNSIGNED_SHORT c/65535; not normalised: the integer's value).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gltf/import_context.h"

namespace posecast::gltf {

// Storages (component type + normalized flag) one use of an accessor accepts; a bit set.
enum Storage : uint32_t {
  kFloat = 1u << 0,
  kByteNorm = 1u << 1,
  kUByteNorm = 1u << 2,
  kShortNorm = 1u << 3,
  kUShortNorm = 1u << 4,
  kByte = 1u << 5,
  kUByte = 1u << 6,
  kShort = 1u << 7,
  kUShort = 1u << 8,
  kUInt = 1u << 9,
};

// Accessors without a bufferView (all zeros, perhaps with sparse values) hold at most this many
// elements: nothing in the file bounds their size otherwise.
inline constexpr std::size_t kMaxUnbackedAccessorCount = std::size_t{1} << 24;

// One use of an accessor: where the file refers to it (for messages), which accessor, the
// accessor type the use needs (TINYGLTF_TYPE_*), and the storages it allows.
struct AccessorUse {
  std::string path;  // e.g. "animations[0].samplers[2].output"
  int accessor = -1;
  int type = 0;
  uint32_t storages = 0;
};

// Element count of the accessor of `use`, after checking the index and type/storage (no data
// read). Lets callers refuse sizes before reading.
Result<std::size_t> accessor_count(const ImportContext& ctx, const AccessorUse& use);

// All components of all elements as floats (count * components values, element-major).
Result<std::vector<float>> read_floats(const ImportContext& ctx, const AccessorUse& use);

// All components as unsigned integers; `use.storages` must only allow kUByte, kUShort, kUInt.
Result<std::vector<uint32_t>> read_uints(const ImportContext& ctx, const AccessorUse& use);

// The bytes of buffer view `view` after checking it lies inside its buffer; `ref_path` names
// where the file refers to the view.
Result<std::span<const uint8_t>> buffer_view_bytes(const ImportContext& ctx, int view,
                                                   const std::string& ref_path);

// Name of a storage for messages, e.g. "UNSIGNED_SHORT normalized".
std::string storage_name(int component_type, bool normalized);

}  // namespace posecast::gltf
