#pragma once
// Minimal binary glTF (.glb) writing: a growing BIN chunk with its bufferViews and accessors,
// and the container itself (private to shared/rig).
//
// All multi-byte values are written little-endian byte by byte, so the output does not depend
// on the host. JSON objects keep their keys sorted (nlohmann's std::map), and numbers are
// floats printed with nlohmann's shortest round-trip formatting: deterministic text.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace posecast::rig::detail {

using Json = nlohmann::basic_json<std::map, std::vector, std::string, bool, std::int64_t,
                                  std::uint64_t, float>;

// glTF enumerations used here.
inline constexpr int kUnsignedByte = 5121;
inline constexpr int kUnsignedShort = 5123;
inline constexpr int kUnsignedInt = 5125;
inline constexpr int kFloat = 5126;
inline constexpr int kArrayBuffer = 34962;
inline constexpr int kElementArrayBuffer = 34963;

class GlbBuilder {
 public:
  // Starts a bufferView at the next 4-byte boundary of the BIN chunk. Views do not nest.
  void begin_view();
  // Appends to the open view; returns the byte offset of the data within that view (a
  // multiple of 4, so any accessor type may start there).
  std::size_t append(std::span<const float> values);
  std::size_t append(std::span<const uint16_t> values);
  std::size_t append(std::span<const uint32_t> values);
  std::size_t append(std::span<const uint8_t> bytes);
  // Closes the open view; `target` is 0 (none) or kArrayBuffer / kElementArrayBuffer.
  // Returns the bufferView index.
  int end_view(int target = 0);
  // A bufferView holding exactly `values` (convenience for one-accessor views).
  int add_view(std::span<const float> values, int target = 0);

  // Adds an accessor ({bufferView, byteOffset, componentType, count, type} plus any extra
  // members already in `extra`, e.g. min/max) and returns its index.
  int add_accessor(int view, std::size_t byte_offset, int component_type, std::size_t count,
                   const char* type, Json extra = Json::object());

  const Json& buffer_views() const { return views_; }
  const Json& accessors() const { return accessors_; }
  const std::vector<uint8_t>& bin() const { return bin_; }

 private:
  void align();
  std::vector<uint8_t> bin_;
  Json views_ = Json::array();
  Json accessors_ = Json::array();
  std::size_t view_start_ = 0;
};

// The .glb container: 12-byte header, JSON chunk padded with spaces to 4 bytes, BIN chunk
// padded with zeros to 4 bytes (left out when `bin` is empty).
std::vector<uint8_t> pack_glb(const std::string& json, const std::vector<uint8_t>& bin);

}  // namespace posecast::rig::detail
