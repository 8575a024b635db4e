#pragma once
// glTF 2.0 importer: the only code in posecast that sees tinygltf. It reads a .gltf or .glb
// file and builds validated, immutable runtime objects (Model), or returns an Error whose
// message names the file, the glTF object and the reason, e.g.
//   "bad.gltf: animations[1].samplers[3].input: key times are not increasing".
// It never crashes and never reads out of bounds on a malformed file.

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/result.h"

namespace posecast {

struct ImportOptions {
  // Skins with more joints than this are refused (the renderer's uniform block holds 512).
  uint32_t max_joints = 512;
  // Keys per track above this are refused (cursors are 32-bit; this bounds memory too).
  uint32_t max_keys_per_track = 1u << 20;
  bool load_meshes = true;
  bool load_images = true;
  // The rig config (rig_config.h) as JSON text, and its name in messages. Empty: for
  // import_gltf_file the sidecar "<stem>.posecast.json" beside the file when there is one,
  // else the defaults. Non-empty config bytes join Model::content_hash.
  std::string rig_config_json;
  std::string rig_config_name = "rig config";
};

// The sidecar config path of a model file: "dir/Fox.glb" -> "dir/Fox.posecast.json".
std::string rig_config_sidecar_path(const std::string& model_path);

Result<Model> import_gltf_file(const std::string& path, const ImportOptions& options = {});

// Same, from bytes already in memory (a .glb, or .gltf JSON whose buffers are all data: URIs).
// `name` is used in messages and as Model::source.
Result<Model> import_gltf_memory(const std::vector<uint8_t>& bytes, const std::string& name,
                                 const ImportOptions& options = {});

}  // namespace posecast
