#pragma once
// GltfBuilder: small glTF 2.0 documents built in memory, for hand-crafted importer tests.
//
// All binary data goes into one buffer (buffers[0]); every add_* call appends its bytes
// (4-byte aligned) as a new bufferView and returns the index of what it created. to_gltf()
// writes the buffer as a base64 data: URI, to_glb() as the GLB BIN chunk. The JSON is open
// through json(), so a test can set any field -- valid or deliberately broken -- before writing.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace posecast::testing {

// glTF component type codes, for readability in tests.
inline constexpr int kByte = 5120;
inline constexpr int kUnsignedByte = 5121;
inline constexpr int kShort = 5122;
inline constexpr int kUnsignedShort = 5123;
inline constexpr int kUnsignedInt = 5125;
inline constexpr int kFloatType = 5126;

class GltfBuilder {
 public:
  GltfBuilder();  // {"asset": {"version": "2.0"}}

  nlohmann::json& json() { return json_; }
  const nlohmann::json& json() const { return json_; }
  std::vector<uint8_t>& buffer() { return buffer_; }

  // Appends raw bytes as a new bufferView (byteStride set when non-zero); returns its index.
  int add_view(const void* data, std::size_t size, int byte_stride = 0);

  // Appends `accessor` (a JSON object) to accessors; returns its index.
  int add_accessor(nlohmann::json accessor);

  // An accessor over a new view holding the floats; `type` is "SCALAR", "VEC2", ... "MAT4".
  // SCALAR accessors get min/max (animation inputs need them).
  int add_floats(const std::vector<float>& values, const std::string& type);

  // An accessor over a new view holding integers of `component_type` (kByte ... kUnsignedInt),
  // each value converted with static_cast; `normalized` sets the accessor flag.
  int add_ints(const std::vector<int64_t>& values, int component_type, const std::string& type,
               bool normalized = false);

  int add_node(nlohmann::json node);  // returns the node index
  int add_skin(const std::vector<int>& joints, int inverse_bind_accessor = -1);
  int add_mesh(nlohmann::json mesh);

  // One animation with one sampler per channel: each entry is (node, path, times, values,
  // interpolation). Returns the animation index.
  struct Channel {
    int node;
    std::string path;  // "translation", "rotation", "scale", "weights"
    std::vector<float> times;
    std::vector<float> values;
    std::string interpolation = "LINEAR";
  };
  int add_animation(const std::vector<Channel>& channels, const std::string& name = "");

  std::vector<uint8_t> to_gltf() const;  // JSON text; buffer as data:application/octet-stream
  std::vector<uint8_t> to_glb() const;   // binary glTF with a BIN chunk when the buffer is non-empty

 private:
  nlohmann::json json_;
  std::vector<uint8_t> buffer_;
};

std::string base64_encode(const std::vector<uint8_t>& bytes);

}  // namespace posecast::testing
