#pragma once
// Loading a model named by a "model source" string, the form scenarios, the CLI and the server
// accept: a path to a .gltf/.glb file, or "gen-rig:N" for the generated rig with N joints
// (the project's own asset, built in memory; no file needed).

#include <string>

#include "posecast/gltf_import.h"
#include "posecast/model.h"
#include "posecast/result.h"

namespace posecast::rig {

// True when `source` has the "gen-rig:" prefix.
bool is_generated_rig_source(const std::string& source);

// Loads `source`. Errors: a malformed "gen-rig:N" (N not an integer in 2..512), or any import
// error (the message names the file and the object).
Result<Model> load_model_source(const std::string& source, const ImportOptions& options = {});

}  // namespace posecast::rig
