#include "gltf_builder.h"

#include <cstring>
#include <stdexcept>

namespace posecast::testing {
namespace {

int component_size(int component_type) {
  switch (component_type) {
    case kByte:
    case kUnsignedByte: return 1;
    case kShort:
    case kUnsignedShort: return 2;
    case kUnsignedInt:
    case kFloatType: return 4;
    default: throw std::invalid_argument("GltfBuilder: unknown component type");
  }
}

std::size_t components(const std::string& type) {
  if (type == "SCALAR") return 1;
  if (type == "VEC2") return 2;
  if (type == "VEC3") return 3;
  if (type == "VEC4" || type == "MAT2") return 4;
  if (type == "MAT3") return 9;
  if (type == "MAT4") return 16;
  throw std::invalid_argument("GltfBuilder: unknown accessor type " + type);
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

int append(nlohmann::json& root, const char* array, nlohmann::json value) {
  nlohmann::json& list = root[array];
  if (!list.is_array()) list = nlohmann::json::array();
  list.push_back(std::move(value));
  return static_cast<int>(list.size() - 1);
}

}  // namespace

std::string base64_encode(const std::vector<uint8_t>& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63u];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint32_t{bytes[i]} << 16;
    out += kAlphabet[(v >> 18) & 63u];
    out += kAlphabet[(v >> 12) & 63u];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint32_t{bytes[i]} << 16) | (uint32_t{bytes[i + 1]} << 8);
    out += kAlphabet[(v >> 18) & 63u];
    out += kAlphabet[(v >> 12) & 63u];
    out += kAlphabet[(v >> 6) & 63u];
    out += '=';
  }
  return out;
}

GltfBuilder::GltfBuilder() { json_["asset"] = {{"version", "2.0"}}; }

int GltfBuilder::add_view(const void* data, std::size_t size, int byte_stride) {
  while (buffer_.size() % 4 != 0) buffer_.push_back(0);
  const std::size_t offset = buffer_.size();
  const auto* p = static_cast<const uint8_t*>(data);
  buffer_.insert(buffer_.end(), p, p + size);
  nlohmann::json view = {{"buffer", 0}, {"byteOffset", offset}, {"byteLength", size}};
  if (byte_stride != 0) view["byteStride"] = byte_stride;
  return append(json_, "bufferViews", std::move(view));
}

int GltfBuilder::add_accessor(nlohmann::json accessor) { return append(json_, "accessors", std::move(accessor)); }

int GltfBuilder::add_floats(const std::vector<float>& values, const std::string& type) {
  const int view = add_view(values.data(), values.size() * sizeof(float));
  nlohmann::json a = {{"bufferView", view},
                      {"componentType", kFloatType},
                      {"count", values.size() / components(type)},
                      {"type", type}};
  if (type == "SCALAR" && !values.empty()) {
    float lo = values[0], hi = values[0];
    for (float v : values) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    a["min"] = {lo};
    a["max"] = {hi};
  }
  return add_accessor(std::move(a));
}

int GltfBuilder::add_ints(const std::vector<int64_t>& values, int component_type, const std::string& type,
                          bool normalized) {
  const int size = component_size(component_type);
  std::vector<uint8_t> bytes;
  for (int64_t v : values) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < size; ++i) bytes.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  const int view = add_view(bytes.data(), bytes.size());
  nlohmann::json a = {{"bufferView", view},
                      {"componentType", component_type},
                      {"count", values.size() / components(type)},
                      {"type", type}};
  if (normalized) a["normalized"] = true;
  return add_accessor(std::move(a));
}

int GltfBuilder::add_node(nlohmann::json node) { return append(json_, "nodes", std::move(node)); }

int GltfBuilder::add_skin(const std::vector<int>& joints, int inverse_bind_accessor) {
  nlohmann::json skin = {{"joints", joints}};
  if (inverse_bind_accessor >= 0) skin["inverseBindMatrices"] = inverse_bind_accessor;
  return append(json_, "skins", std::move(skin));
}

int GltfBuilder::add_mesh(nlohmann::json mesh) { return append(json_, "meshes", std::move(mesh)); }

int GltfBuilder::add_animation(const std::vector<Channel>& channels, const std::string& name) {
  nlohmann::json anim = {{"channels", nlohmann::json::array()}, {"samplers", nlohmann::json::array()}};
  if (!name.empty()) anim["name"] = name;
  for (const Channel& c : channels) {
    const int input = add_floats(c.times, "SCALAR");
    const std::string type = c.path == "rotation" ? "VEC4" : c.path == "weights" ? "SCALAR" : "VEC3";
    const int output = add_floats(c.values, type);
    anim["samplers"].push_back({{"input", input}, {"output", output}, {"interpolation", c.interpolation}});
    anim["channels"].push_back(
        {{"sampler", anim["samplers"].size() - 1}, {"target", {{"node", c.node}, {"path", c.path}}}});
  }
  return append(json_, "animations", std::move(anim));
}

std::vector<uint8_t> GltfBuilder::to_gltf() const {
  nlohmann::json doc = json_;
  if (!buffer_.empty() || doc.contains("bufferViews")) {
    std::vector<uint8_t> data = buffer_;
    if (data.empty()) data.push_back(0);  // tinygltf refuses empty data: URIs
    doc["buffers"] = {{{"byteLength", data.size()},
                       {"uri", "data:application/octet-stream;base64," + base64_encode(data)}}};
  }
  const std::string text = doc.dump();
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::vector<uint8_t> GltfBuilder::to_glb() const {
  nlohmann::json doc = json_;
  std::vector<uint8_t> bin = buffer_;
  if (!bin.empty()) doc["buffers"] = {{{"byteLength", bin.size()}}};
  while (bin.size() % 4 != 0) bin.push_back(0);
  std::string text = doc.dump();
  while (text.size() % 4 != 0) text += ' ';
  std::vector<uint8_t> out;
  const std::size_t total = 12 + 8 + text.size() + (bin.empty() ? 0 : 8 + bin.size());
  out.reserve(total);
  put_u32(out, 0x46546C67u);  // "glTF"
  put_u32(out, 2);
  put_u32(out, static_cast<uint32_t>(total));
  put_u32(out, static_cast<uint32_t>(text.size()));
  put_u32(out, 0x4E4F534Au);
  out.insert(out.end(), text.begin(), text.end());
  if (!bin.empty()) {
    put_u32(out, static_cast<uint32_t>(bin.size()));
    put_u32(out, 0x004E4942u);
    out.insert(out.end(), bin.begin(), bin.end());
  }
  return out;
}

}  // namespace posecast::testing
