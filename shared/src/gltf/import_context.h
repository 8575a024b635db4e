#pragma once
// What every part of the glTF importer shares while building one Model: the file's name (for
// messages), the model tinygltf parsed, the options, and how to word an error.
// Internal to the importer (shared/src/gltf/): the only code in posecast that sees tinygltf.

#include <tiny_gltf.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "gltf/json_path.h"
#include "posecast/gltf_import.h"
#include "posecast/result.h"

namespace posecast::gltf {

struct ImportContext {
  std::string file;  // as given by the caller; first part of every message
  const tinygltf::Model* doc = nullptr;
  ImportOptions options;
  // KHR_mesh_quantization is listed in extensionsUsed/extensionsRequired: mesh attributes
  // (POSITION, NORMAL, TEXCOORD_n) may then use the integer storages of that extension.
  bool mesh_quantization = false;

  const tinygltf::Model& gltf() const { return *doc; }

  // "<file>: <path>: <reason>", the one form of every importer message.
  Error error(std::string_view path, std::string_view reason) const {
    std::string m = file;
    m += ": ";
    m += path;
    m += ": ";
    m += reason;
    return Error{std::move(m)};
  }
};

}  // namespace posecast::gltf
