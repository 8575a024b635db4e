#include "glb_test_reader.h"

#include <cstring>
#include <map>
#include <stdexcept>

#include "posecast/rig/rig_generator.h"

namespace posecast::rig::test {

namespace {

uint32_t u32_at(const std::vector<uint8_t>& b, std::size_t at) {
  if (at + 4 > b.size()) throw std::runtime_error("read past the end at byte " + std::to_string(at));
  return static_cast<uint32_t>(b[at]) | static_cast<uint32_t>(b[at + 1]) << 8 |
         static_cast<uint32_t>(b[at + 2]) << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

std::size_t component_size(int type) {
  switch (type) {
    case 5121: return 1;
    case 5123: return 2;
    case 5125:
    case 5126: return 4;
    default: throw std::runtime_error("unexpected componentType " + std::to_string(type));
  }
}

std::size_t component_count(const std::string& type) {
  if (type == "SCALAR") return 1;
  if (type == "VEC2") return 2;
  if (type == "VEC3") return 3;
  if (type == "VEC4") return 4;
  if (type == "MAT4") return 16;
  throw std::runtime_error("unexpected accessor type " + type);
}

// Start of accessor `index`'s data in the BIN chunk, after checking it stays in its view.
std::size_t accessor_start(const GlbFile& file, int index, std::size_t& count, int& type) {
  const auto& accessor = file.json.at("accessors").at(static_cast<std::size_t>(index));
  const auto& view = file.json.at("bufferViews").at(accessor.at("bufferView").get<std::size_t>());
  type = accessor.at("componentType").get<int>();
  count = accessor.at("count").get<std::size_t>() * component_count(accessor.at("type").get<std::string>());
  const std::size_t offset = size_or(accessor, "byteOffset", 0);
  const std::size_t view_offset = size_or(view, "byteOffset", 0);
  const std::size_t view_length = view.at("byteLength").get<std::size_t>();
  if (offset % component_size(type) != 0)
    throw std::runtime_error("accessor " + std::to_string(index) + " is misaligned");
  if (offset + count * component_size(type) > view_length || view_offset + view_length > file.bin.size())
    throw std::runtime_error("accessor " + std::to_string(index) + " leaves its bufferView");
  return view_offset + offset;
}

}  // namespace

GlbFile parse_glb(const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 20) throw std::runtime_error("shorter than a header and a chunk header");
  if (u32_at(bytes, 0) != 0x46546C67u) throw std::runtime_error("bad magic");
  if (u32_at(bytes, 4) != 2u) throw std::runtime_error("version is not 2");
  if (u32_at(bytes, 8) != bytes.size()) throw std::runtime_error("header length != file size");
  const uint32_t json_length = u32_at(bytes, 12);
  if (u32_at(bytes, 16) != 0x4E4F534Au) throw std::runtime_error("first chunk is not JSON");
  if (json_length % 4 != 0) throw std::runtime_error("JSON chunk length not a multiple of 4");
  if (20u + json_length > bytes.size()) throw std::runtime_error("JSON chunk runs past the end");
  std::string text(bytes.begin() + 20, bytes.begin() + 20 + json_length);
  const std::size_t end = text.find_last_not_of(' ');
  if (end == std::string::npos || text[end] != '}' || text.size() - end - 1 > 3)
    throw std::runtime_error("JSON chunk not padded with at most 3 spaces");
  GlbFile file;
  file.json = nlohmann::json::parse(text);
  const std::size_t bin_header = 20u + json_length;
  if (bin_header == bytes.size()) return file;
  const uint32_t bin_length = u32_at(bytes, bin_header);
  if (u32_at(bytes, bin_header + 4) != 0x004E4942u) throw std::runtime_error("second chunk is not BIN");
  if (bin_length % 4 != 0) throw std::runtime_error("BIN chunk length not a multiple of 4");
  if (bin_header + 8u + bin_length != bytes.size()) throw std::runtime_error("BIN chunk does not end the file");
  file.bin.assign(bytes.begin() + static_cast<std::ptrdiff_t>(bin_header + 8), bytes.end());
  return file;
}

const std::vector<uint8_t>& rig_bytes(uint32_t joints) {
  static std::map<uint32_t, std::vector<uint8_t>> cache;
  auto it = cache.find(joints);
  if (it == cache.end()) {
    Result<std::vector<uint8_t>> glb = generate_rig_glb(RigOptions{joints});
    if (!glb) throw std::runtime_error(glb.error().message);
    it = cache.emplace(joints, std::move(glb).value()).first;
  }
  return it->second;
}

const GlbFile& rig_file(uint32_t joints) {
  static std::map<uint32_t, GlbFile> cache;
  auto it = cache.find(joints);
  if (it == cache.end()) it = cache.emplace(joints, parse_glb(rig_bytes(joints))).first;
  return it->second;
}

std::vector<float> read_floats(const GlbFile& file, int index) {
  std::size_t count = 0;
  int type = 0;
  const std::size_t start = accessor_start(file, index, count, type);
  if (type != 5126) throw std::runtime_error("accessor " + std::to_string(index) + " is not FLOAT");
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const uint32_t bits = u32_at(file.bin, start + 4 * i);
    std::memcpy(&out[i], &bits, sizeof bits);
  }
  return out;
}

std::vector<uint32_t> read_uints(const GlbFile& file, int index) {
  std::size_t count = 0;
  int type = 0;
  const std::size_t start = accessor_start(file, index, count, type);
  std::vector<uint32_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    switch (type) {
      case 5121: out[i] = file.bin[start + i]; break;
      case 5123: out[i] = static_cast<uint32_t>(file.bin[start + 2 * i] | file.bin[start + 2 * i + 1] << 8); break;
      case 5125: out[i] = u32_at(file.bin, start + 4 * i); break;
      default: throw std::runtime_error("accessor " + std::to_string(index) + " is not an unsigned integer type");
    }
  }
  return out;
}

std::string string_or(const nlohmann::json& object, const char* key, const std::string& fallback) {
  return object.contains(key) ? object.at(key).get<std::string>() : fallback;
}

std::size_t size_or(const nlohmann::json& object, const char* key, std::size_t fallback) {
  return object.contains(key) ? object.at(key).get<std::size_t>() : fallback;
}

int find_node(const GlbFile& file, const std::string& name) {
  const auto& nodes = file.json.at("nodes");
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (string_or(nodes[i], "name", "") == name) return static_cast<int>(i);
  return -1;
}

std::vector<int> node_parents(const GlbFile& file) {
  const auto& nodes = file.json.at("nodes");
  std::vector<int> parents(nodes.size(), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].contains("children")) continue;
    for (const auto& child : nodes[i].at("children")) parents.at(child.get<std::size_t>()) = static_cast<int>(i);
  }
  return parents;
}

}  // namespace posecast::rig::test
