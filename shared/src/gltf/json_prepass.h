#pragma once
// A first look at the glTF JSON, before tinygltf parses it, for what tinygltf 2.7.0 would
// hide: it silently drops animation channels it cannot parse (so later channel indices would
// no longer match the file), ignores optional fields of the wrong type, and would load
// external files while importing from memory, and uses a node's `matrix` silently when the node
// also has translation/rotation/scale. Also refuses unsupported required extensions before
// anything is loaded.

#include <string>
#include <string_view>
#include <vector>

#include "posecast/result.h"

namespace posecast::gltf {

struct PrepassResult {
  // Per animation: the file index of each channel tinygltf keeps, in tinygltf's order, so an
  // error about tinygltf's channel k can name the file's channels[kept_channels[a][k]].
  std::vector<std::vector<int>> kept_channels;
};

// `allow_external_uris` is false when importing from memory: buffer URIs must then be data:
// URIs. Errors read "<file>: <json path>: <reason>".
Result<PrepassResult> prepass_json(std::string_view json_text, const std::string& file,
                                   bool allow_external_uris);

// The required extensions posecast implements.
bool is_supported_required_extension(std::string_view name);

}  // namespace posecast::gltf
