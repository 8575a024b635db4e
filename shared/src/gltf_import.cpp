// glTF 2.0 import: the entry points of gltf_import.h. The file is checked in layers -- the GLB
// container (gltf/glb_container), a JSON pre-pass (gltf/json_prepass), tinygltf's parse with
// posecast's image and file callbacks, then every object posecast uses (gltf/*_builder) -- and
// the result is validated (Skeleton::validate, Clip::validate) before it is returned.
//
// tinygltf is Debian's compiled libtinygltf 2.7.0: TINYGLTF_IMPLEMENTATION is not defined here.
// That build decodes images with stb_image; posecast wants the encoded bytes (the renderer
// decodes), so an image loader callback keeps them as they are.

#include "posecast/gltf_import.h"

#include <tiny_gltf.h>

#include <exception>
#include <filesystem>
#include <fstream>

#include "gltf/accessor_reader.h"
#include "gltf/clip_builder.h"
#include "gltf/glb_container.h"
#include "gltf/import_context.h"
#include "gltf/json_prepass.h"
#include "gltf/mesh_builder.h"
#include "gltf/node_graph.h"
#include "gltf/skeleton_builder.h"
#include "posecast/hash.h"
#include "posecast/rig_config.h"
#include "clip_markers.h"
#include "posecast/root_motion_extraction.h"

namespace posecast {
namespace {

using gltf::at;
using gltf::ImportContext;

// --- tinygltf callbacks ----------------------------------------------------------------------

struct LoaderState {
  bool keep_images = true;
  bool allow_files = false;  // false when importing from memory: no file is ever opened
  std::string base_dir;      // external URIs resolve inside this folder only
};

// Keeps an image's encoded bytes instead of decoding them with stb_image. Images in a
// bufferView are read later by posecast with its own bounds checks: tinygltf 2.7.0 passes a
// pointer for them that it computed without checking the view against the buffer.
bool keep_encoded_image(tinygltf::Image* image, const int /*index*/, std::string* /*err*/,
                        std::string* /*warn*/, int /*req_width*/, int /*req_height*/,
                        const unsigned char* bytes, int size, void* user) {
  const auto* state = static_cast<const LoaderState*>(user);
  image->as_is = true;
  if (image->bufferView >= 0) return true;
  if (state->keep_images && bytes != nullptr && size > 0) image->image.assign(bytes, bytes + size);
  return true;
}

// Whole file into `out`; false when it cannot be opened or read. (Sized read rather than
// istreambuf_iterator, which trips gcc 12's -Wnull-dereference.)
bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return false;
  const std::streamoff size = in.tellg();
  if (size < 0) return false;
  out.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(out.data()), size)) return false;
  return true;
}

// File access for external buffers and images: only inside the glTF file's folder (no
// absolute URIs), and never when importing from memory.
bool file_exists(const std::string& path, void* user) {
  const auto* state = static_cast<const LoaderState*>(user);
  if (!state->allow_files) return false;
  const std::string prefix =
      !state->base_dir.empty() && state->base_dir.back() == '/' ? state->base_dir : state->base_dir + "/";
  if (path.rfind(prefix, 0) != 0) return false;
  const std::string rest = path.substr(prefix.size());
  if (rest.empty() || rest.front() == '/' || rest.find("://") != std::string::npos) return false;
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string expand_file_path(const std::string& path, void*) { return path; }

bool read_whole_file(std::vector<unsigned char>* out, std::string* err, const std::string& path,
                     void* user) {
  if (!file_exists(path, user)) {
    if (err) *err += "file not found or not allowed: " + path;
    return false;
  }
  if (!read_file(path, *out)) {
    if (err) *err += "cannot read " + path;
    return false;
  }
  return true;
}

bool refuse_write(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
  if (err) *err += "posecast never writes files while importing";
  return false;
}

// tinygltf's messages, one line each, joined with "; ".
std::string join_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) {
      if (!out.empty()) out += "; ";
      out += line;
    }
    start = end + 1;
  }
  return out;
}

// Lines tinygltf 2.7.0 writes to `err` even when loading succeeds, about things the spec
// allows: a channel whose target has no `node` (to be ignored; the pre-pass accounted for it)
// and a skin without inverseBindMatrices (identity matrices). Anything else there is real.
std::string without_benign_notes(const std::string& err) {
  std::string out;
  std::size_t start = 0;
  while (start < err.size()) {
    std::size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string line = err.substr(start, end - start);
    if (line != "'node' property is missing." &&
        line != "`node` field is missing in animation.channels.target" &&
        line != "'inverseBindMatrices' property is missing in Skin.")
      out += line + "\n";
    start = end + 1;
  }
  return join_lines(out);
}

std::string sniff_mime_type(const std::vector<uint8_t>& bytes, const std::string& uri) {
  if (bytes.size() >= 8 && bytes[0] == 0x89 && bytes[1] == 'P' && bytes[2] == 'N' && bytes[3] == 'G')
    return "image/png";
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) return "image/jpeg";
  const std::string ext = std::filesystem::path(uri).extension().string();
  if (ext == ".png" || ext == ".PNG") return "image/png";
  if (ext == ".jpg" || ext == ".jpeg" || ext == ".JPG" || ext == ".JPEG") return "image/jpeg";
  return "";
}

// --- building the Model ----------------------------------------------------------------------

Status load_images(const ImportContext& ctx, Model& model) {
  const tinygltf::Model& m = ctx.gltf();
  for (std::size_t i = 0; i < m.images.size(); ++i) {
    const tinygltf::Image& img = m.images[i];
    const std::string path = at("images", i);
    EncodedImage out;
    if (img.bufferView >= 0) {
      if (img.mimeType.empty())
        return ctx.error(path + ".mimeType", "required when the image is in a bufferView");
      Result<std::span<const uint8_t>> bytes = gltf::buffer_view_bytes(ctx, img.bufferView, path + ".bufferView");
      if (!bytes) return bytes.error();
      out.bytes.assign(bytes.value().begin(), bytes.value().end());
      out.mime_type = img.mimeType;
    } else {
      out.bytes.assign(img.image.begin(), img.image.end());
      out.mime_type = img.mimeType.empty() ? sniff_mime_type(out.bytes, img.uri) : img.mimeType;
      if (out.bytes.empty())
        model.warnings.push_back(
            ctx.error(path + ".uri", "'" + img.uri + "' could not be loaded; the image is left empty").message);
    }
    model.images.push_back(std::move(out));
  }
  return {};
}

// A tinygltf extras value as JSON (numbers as doubles; binary blobs as null: extras have none).
nlohmann::json to_json(const tinygltf::Value& value) {
  if (value.IsBool()) return value.Get<bool>();
  if (value.IsNumber()) return value.GetNumberAsDouble();
  if (value.IsString()) return value.Get<std::string>();
  if (value.IsArray()) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < value.ArrayLen(); ++i) out.push_back(to_json(value.Get(static_cast<int>(i))));
    return out;
  }
  if (value.IsObject()) {
    nlohmann::json out = nlohmann::json::object();
    for (const std::string& key : value.Keys()) out[key] = to_json(value.Get(key));
    return out;
  }
  return nullptr;
}

// Each animation's `extras.posecast_events` (docs/events.md), parsed once for every rig.
Result<std::vector<std::vector<MarkerSpec>>> file_markers(const ImportContext& ctx) {
  const tinygltf::Model& m = ctx.gltf();
  std::vector<std::vector<MarkerSpec>> out(m.animations.size());
  for (std::size_t a = 0; a < m.animations.size(); ++a) {
    const tinygltf::Value& extras = m.animations[a].extras;
    if (!extras.IsObject() || !extras.Has("posecast_events")) continue;
    Result<std::vector<MarkerSpec>> list = parse_marker_list(
        to_json(extras.Get("posecast_events")), ctx.file + ": " + at("animations", a) + ".extras.posecast_events");
    if (!list) return list.error();
    out[a] = std::move(list).value();
  }
  return out;
}

Result<Model> build_model(const ImportContext& ctx, const gltf::PrepassResult& prepass, Model model,
                          const RigConfig& config, const std::string& config_name) {
  const tinygltf::Model& m = ctx.gltf();
  if (m.asset.version.empty()) return ctx.error("asset.version", "missing");
  if (m.asset.version.rfind("2.", 0) != 0)
    return ctx.error("asset.version", "glTF version '" + m.asset.version + "' is not 2.x");

  Result<gltf::NodeGraph> graph = gltf::build_node_graph(ctx);
  if (!graph) return graph.error();

  std::vector<gltf::BuiltSkeleton> skeletons;
  if (m.skins.empty()) {
    Result<gltf::BuiltSkeleton> s = gltf::build_all_nodes_skeleton(ctx, graph.value());
    if (!s) return s.error();
    skeletons.push_back(std::move(s).value());
  } else {
    for (std::size_t k = 0; k < m.skins.size(); ++k) {
      Result<gltf::BuiltSkeleton> s = gltf::build_skin_skeleton(ctx, graph.value(), k);
      if (!s) return s.error();
      skeletons.push_back(std::move(s).value());
    }
  }
  model.has_skins = !m.skins.empty();

  Result<std::vector<gltf::DecodedAnimation>> animations =
      gltf::decode_animations(ctx, graph.value(), prepass.kept_channels);
  if (!animations) return animations.error();

  if (ctx.options.load_images) {
    if (Status s = load_images(ctx, model); !s) return s.error();
  }
  Result<std::vector<std::vector<MarkerSpec>>> markers = file_markers(ctx);
  if (!markers) return markers.error();

  for (std::size_t r = 0; r < skeletons.size(); ++r) {
    Rig rig;
    rig.skeleton = std::move(skeletons[r].skeleton);
    const std::string rig_path = model.has_skins ? at("skins", r) : std::string("nodes");
    if (Status s = rig.skeleton.validate(); !s)
      return ctx.error(rig_path, "skeleton failed validation: " + s.error().message);
    for (std::size_t a = 0; a < animations.value().size(); ++a) {
      Result<Clip> clip = gltf::bind_clip(ctx, a, animations.value()[a], skeletons[r]);
      if (!clip) return clip.error();
      rig.clips.push_back(std::move(clip).value());
    }
    for (std::size_t a = 0; a < rig.clips.size() && a < markers.value().size(); ++a) {
      if (Status s = add_clip_markers(rig.clips[a], markers.value()[a],
                                      ctx.file + ": " + at("animations", a) + ".extras.posecast_events");
          !s)
        return s.error();
    }
    if (Status s = apply_clip_markers(config, rig.clips, config_name); !s) return s.error();
    Result<ResolvedRigConfig> motion = resolve_rig_config(config, rig.skeleton, rig.clips, config_name);
    if (!motion) return motion.error();
    rig.motion_config = std::move(motion).value();
    extract_root_motion(rig, ctx.file, model.warnings);
    for (std::size_t a = 0; a < rig.clips.size(); ++a) {
      Clip& clip = rig.clips[a];
      clip.derive_slerp_terms();
      clip.derive_rotation_blocks();
      clip.derive_field_keys();
      if (Status s = clip.validate(rig.skeleton); !s)
        return ctx.error(at("animations", a), "clip failed validation for " + rig_path + ": " + s.error().message);
    }
    if (model.has_skins && ctx.options.load_meshes) {
      Result<std::vector<SkinnedMesh>> meshes =
          gltf::build_skin_meshes(ctx, graph.value(), r, model.images.size());
      if (!meshes) return meshes.error();
      rig.meshes = std::move(meshes).value();
    }
    model.rigs.push_back(std::move(rig));
  }
  return model;
}

// Everything after the bytes are in memory. `base_dir` is where external URIs resolve when
// `allow_files` is set; `name` is the file name used in messages and as Model::source.
Result<Model> import_bytes(const std::vector<uint8_t>& bytes, const std::string& name,
                           const ImportOptions& options, bool allow_files, const std::string& base_dir) {
  if (bytes.empty()) return Error{name + ": $: the file is empty"};
  if (bytes.size() > 0xFFFFFFFFu) return Error{name + ": $: files of 4 GiB or more are not supported"};

  const bool glb = gltf::is_glb(bytes);
  std::string_view json_text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (glb) {
    Result<gltf::GlbLayout> layout = gltf::parse_glb(bytes, name);
    if (!layout) return layout.error();
    json_text = json_text.substr(layout.value().json_offset, layout.value().json_size);
  }
  Result<gltf::PrepassResult> prepass = gltf::prepass_json(json_text, name, allow_files);
  if (!prepass) return prepass.error();

  LoaderState state;
  state.keep_images = options.load_images;
  state.allow_files = allow_files;
  state.base_dir = base_dir;
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(&keep_encoded_image, &state);
  loader.SetFsCallbacks(tinygltf::FsCallbacks{&file_exists, &expand_file_path, &read_whole_file,
                                              &refuse_write, &state});
  tinygltf::Model doc;
  std::string err, warn;
  bool loaded = false;
  try {
    loaded = glb ? loader.LoadBinaryFromMemory(&doc, &err, &warn, bytes.data(),
                                               static_cast<unsigned int>(bytes.size()), base_dir)
                 : loader.LoadASCIIFromString(&doc, &err, &warn, json_text.data(),
                                              static_cast<unsigned int>(json_text.size()), base_dir);
  } catch (const std::exception& e) {
    return Error{name + ": $: tinygltf: " + e.what()};
  } catch (...) {
    return Error{name + ": $: tinygltf: unknown exception"};
  }
  if (!loaded) {
    const std::string why = join_lines(err);
    return Error{name + ": $: tinygltf: " + (why.empty() ? "failed to load" : why)};
  }
  if (const std::string rest = without_benign_notes(err); !rest.empty())
    return Error{name + ": $: tinygltf: " + rest};

  ImportContext ctx;
  ctx.file = name;
  ctx.doc = &doc;
  ctx.options = options;
  for (const auto* list : {&doc.extensionsUsed, &doc.extensionsRequired})
    for (const std::string& e : *list)
      if (e == "KHR_mesh_quantization") ctx.mesh_quantization = true;

  Model model;
  model.source = name;
  if (options.load_images && !warn.empty()) model.warnings.push_back(name + ": $: tinygltf: " + join_lines(warn));

  // Asset identity: the file's bytes, then each external buffer's, in buffer order.
  std::vector<uint8_t> identity(bytes.begin(), bytes.end());
  for (const tinygltf::Buffer& b : doc.buffers)
    if (!b.uri.empty() && b.uri.rfind("data:", 0) != 0) identity.insert(identity.end(), b.data.begin(), b.data.end());
  // The rig config, when there is one, is part of the asset: peers must agree on it too.
  RigConfig config;
  if (!options.rig_config_json.empty()) {
    Result<RigConfig> parsed = parse_rig_config(options.rig_config_json, options.rig_config_name);
    if (!parsed) return parsed.error();
    config = std::move(parsed).value();
    identity.insert(identity.end(), options.rig_config_json.begin(), options.rig_config_json.end());
  }
  model.content_hash = hash_bytes(identity);

  return build_model(ctx, prepass.value(), std::move(model), config, options.rig_config_name);
}

}  // namespace

std::string rig_config_sidecar_path(const std::string& model_path) {
  std::filesystem::path sidecar(model_path);
  sidecar.replace_extension(".posecast.json");
  return sidecar.string();
}

Result<Model> import_gltf_file(const std::string& path, const ImportOptions& given_options) {
  std::vector<uint8_t> bytes;
  if (!read_file(path, bytes)) return Error{path + ": $: cannot open or read the file"};
  ImportOptions options = given_options;
  if (options.rig_config_json.empty()) {
    const std::string sidecar = rig_config_sidecar_path(path);
    std::error_code ec;
    if (std::filesystem::is_regular_file(sidecar, ec)) {
      std::vector<uint8_t> config;
      if (!read_file(sidecar, config)) return Error{sidecar + ": $: cannot open or read the file"};
      if (config.empty()) return Error{sidecar + ": $: the file is empty"};
      options.rig_config_json.assign(config.begin(), config.end());
      options.rig_config_name = sidecar;
    }
  }
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  return import_bytes(bytes, path, options, /*allow_files=*/true, base_dir);
}

Result<Model> import_gltf_memory(const std::vector<uint8_t>& bytes, const std::string& name,
                                 const ImportOptions& options) {
  return import_bytes(bytes, name, options, /*allow_files=*/false, "");
}

}  // namespace posecast
