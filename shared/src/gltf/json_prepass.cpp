#include "gltf/json_prepass.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <exception>

#include "gltf/json_path.h"

namespace posecast::gltf {
namespace {

using nlohmann::json;

Error fail(const std::string& file, const std::string& path, const std::string& reason) {
  return Error{file + ": " + path + ": " + reason};
}

// An integer the way tinygltf reads one (JSON integer, signed or unsigned).
bool is_integer(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && (it->is_number_integer() || it->is_number_unsigned());
}

bool get_u64(const json& o, const char* key, uint64_t& out) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_unsigned()) return false;
  out = it->get<uint64_t>();
  return true;
}

const json* array_member(const json& root, const char* key) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_array()) return nullptr;
  return &*it;
}

Status check_extensions(const json& root, const std::string& file) {
  const json* required = array_member(root, "extensionsRequired");
  if (!required) return {};
  for (std::size_t i = 0; i < required->size(); ++i) {
    const json& e = (*required)[i];
    const std::string name = e.is_string() ? e.get<std::string>() : e.dump();
    if (!is_supported_required_extension(name))
      return fail(file, at("extensionsRequired", i), "unsupported required extension " + name);
  }
  return {};
}

Status check_buffer_uris(const json& root, const std::string& file) {
  const json* buffers = array_member(root, "buffers");
  if (!buffers) return {};
  for (std::size_t i = 0; i < buffers->size(); ++i) {
    const json& b = (*buffers)[i];
    if (!b.is_object()) continue;  // tinygltf reports it
    auto uri = b.find("uri");
    if (uri == b.end() || !uri->is_string()) continue;
    const std::string s = uri->get<std::string>();
    if (s.rfind("data:", 0) != 0)
      return fail(file, at("buffers", i) + ".uri",
                  "external file '" + s + "' cannot be loaded when importing from memory");
  }
  return {};
}

// tinygltf hands a bufferView image to the image loader as &buffer.data[view.byteOffset]
// without checking the range; refuse such views before it gets there.
Status check_image_views(const json& root, const std::string& file) {
  const json* images = array_member(root, "images");
  const json* views = array_member(root, "bufferViews");
  const json* buffers = array_member(root, "buffers");
  if (!images) return {};
  for (std::size_t i = 0; i < images->size(); ++i) {
    const json& img = (*images)[i];
    uint64_t v = 0;
    if (!img.is_object() || !get_u64(img, "bufferView", v)) continue;
    const std::string path = at("images", i) + ".bufferView";
    if (!views || v >= views->size())
      return fail(file, path, "bufferView index " + std::to_string(v) + " out of range");
    const json& view = (*views)[v];
    uint64_t b = 0, offset = 0, length = 0, buffer_length = 0;
    if (!view.is_object() || !get_u64(view, "buffer", b)) continue;  // tinygltf reports it
    get_u64(view, "byteOffset", offset);
    get_u64(view, "byteLength", length);
    if (!buffers || b >= buffers->size())
      return fail(file, at("bufferViews", v) + ".buffer",
                  "buffer index " + std::to_string(b) + " out of range");
    if (!(*buffers)[b].is_object() || !get_u64((*buffers)[b], "byteLength", buffer_length)) continue;
    if (offset > buffer_length || length > buffer_length - offset)
      return fail(file, path,
                  at("bufferViews", v) + " (offset " + std::to_string(offset) + ", length " +
                      std::to_string(length) + ") exceeds " + at("buffers", b) + ".byteLength " +
                      std::to_string(buffer_length));
  }
  return {};
}

// tinygltf reads `matrix` and silently drops translation/rotation/scale when a node has both,
// which the glTF schema forbids.
Status check_node_transforms(const json& root, const std::string& file) {
  const json* nodes = array_member(root, "nodes");
  if (!nodes) return {};
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const json& n = (*nodes)[i];
    if (!n.is_object() || !n.contains("matrix")) continue;
    for (const char* key : {"translation", "rotation", "scale"})
      if (n.contains(key))
        return fail(file, at("nodes", i), std::string("has both matrix and ") + key);
  }
  return {};
}

Status check_animations(const json& root, const std::string& file, PrepassResult& out) {
  const json* animations = array_member(root, "animations");
  if (!animations) return {};
  out.kept_channels.resize(animations->size());
  for (std::size_t a = 0; a < animations->size(); ++a) {
    const json& anim = (*animations)[a];
    const std::string apath = at("animations", a);
    if (!anim.is_object()) return fail(file, apath, "not a JSON object");
    if (const json* samplers = array_member(anim, "samplers")) {
      for (std::size_t s = 0; s < samplers->size(); ++s) {
        const json& smp = (*samplers)[s];
        const std::string spath = apath + "." + at("samplers", s);
        if (!smp.is_object()) return fail(file, spath, "not a JSON object");
        if (!is_integer(smp, "input")) return fail(file, spath + ".input", "missing or not an integer");
        if (!is_integer(smp, "output"))
          return fail(file, spath + ".output", "missing or not an integer");
        auto interp = smp.find("interpolation");
        if (interp != smp.end() && !interp->is_string())
          return fail(file, spath + ".interpolation", "not a string");
      }
    }
    const json* channels = array_member(anim, "channels");
    if (!channels) continue;
    for (std::size_t c = 0; c < channels->size(); ++c) {
      const json& ch = (*channels)[c];
      const std::string cpath = apath + "." + at("channels", c);
      if (!ch.is_object()) return fail(file, cpath, "not a JSON object");
      if (!is_integer(ch, "sampler")) return fail(file, cpath + ".sampler", "missing or not an integer");
      auto target = ch.find("target");
      if (target == ch.end() || !target->is_object())
        return fail(file, cpath + ".target", "missing or not an object");
      auto path = target->find("path");
      if (path == target->end() || !path->is_string())
        return fail(file, cpath + ".target.path", "missing or not a string");
      auto node = target->find("node");
      if (node == target->end()) continue;  // the spec: such a channel is ignored
      if (!is_integer(*target, "node")) return fail(file, cpath + ".target.node", "not an integer");
      out.kept_channels[a].push_back(static_cast<int>(c));
    }
  }
  return {};
}

}  // namespace

bool is_supported_required_extension(std::string_view name) {
  return name == "KHR_mesh_quantization";
}

Result<PrepassResult> prepass_json(std::string_view json_text, const std::string& file,
                                   bool allow_external_uris) {
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end());
  } catch (const std::exception& e) {
    return fail(file, "$", std::string("invalid JSON: ") + e.what());
  }
  if (!root.is_object()) return fail(file, "$", "the document is not a JSON object");
  PrepassResult result;
  if (Status s = check_extensions(root, file); !s) return s.error();
  if (!allow_external_uris) {
    if (Status s = check_buffer_uris(root, file); !s) return s.error();
  }
  if (Status s = check_image_views(root, file); !s) return s.error();
  if (Status s = check_node_transforms(root, file); !s) return s.error();
  if (Status s = check_animations(root, file, result); !s) return s.error();
  return result;
}

}  // namespace posecast::gltf
