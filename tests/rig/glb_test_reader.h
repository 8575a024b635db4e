#pragma once
// Test-side reader for the generated rig's .glb: an independent parser (nlohmann_json, no
// tinygltf), so the format tests do not depend on the importer they feed.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace posecast::rig::test {

// The clips of every generated rig, in file order (shared/rig/src/rig_clips.cpp).
inline const std::vector<std::string> kClipNames = {"idle", "walk", "run", "wave", "step_pose", "sway_cubic"};

struct GlbFile {
  nlohmann::json json;
  std::vector<uint8_t> bin;  // BIN chunk payload (including its zero padding)
};

// Parses the container; throws std::runtime_error saying what is wrong when the header or a
// chunk is malformed (lengths, types, alignment, padding).
GlbFile parse_glb(const std::vector<uint8_t>& bytes);

// The generated rig for `joints` (generated once per process and cached). Fails the calling
// test with an exception if generation fails.
const std::vector<uint8_t>& rig_bytes(uint32_t joints);
const GlbFile& rig_file(uint32_t joints);

// Accessor `index` as a flat array of its components: floats read as is, unsigned integer
// types widened. Throws std::runtime_error when the accessor leaves its bufferView.
std::vector<float> read_floats(const GlbFile& file, int index);
std::vector<uint32_t> read_uints(const GlbFile& file, int index);

// Member `key` of `object`, or `fallback` when absent. (Used instead of json::value(), whose
// string overload trips a gcc 12 -Wnull-dereference false positive.)
std::string string_or(const nlohmann::json& object, const char* key, const std::string& fallback);
std::size_t size_or(const nlohmann::json& object, const char* key, std::size_t fallback);

// Index of the node named `name`, or -1.
int find_node(const GlbFile& file, const std::string& name);
// Parent node index of every node (-1 for roots).
std::vector<int> node_parents(const GlbFile& file);

}  // namespace posecast::rig::test
