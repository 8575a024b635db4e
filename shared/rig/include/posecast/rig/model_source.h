#pragma once
// Loading a model named by a "model source" string, the form scenarios, the CLI and the server
// accept: a path to a .gltf/.glb file, or "gen-rig:N" for the generated rig with N joints
// (the project's own asset, built in memory; no file needed), or "gen-rig:N:travel" for the
// same rig whose walk and run travel with their root (RigOptions::travelling_gaits).

#include <filesystem>
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

// Where to load a model source recorded elsewhere (a recording's models, replayed possibly on
// another machine or after the files moved); one rule for `posecast replay` and
// `posecast-server --replay`:
//   - "gen-rig:N" as is (no file);
//   - `search_dir` (empty: none) holding a file with the source's file name: that file, for an
//     absolute or a relative source;
//   - an absolute source: as recorded;
//   - a relative source: beside `base_dir` (the recording's folder) when a file is there, else
//     as recorded (relative to the current folder).
// Only checks existence; loading (and comparing the content hash with the recorded one) is the
// caller's job. Never fails: the fallback is the source as recorded.
std::string locate_model_source(const std::string& source, const std::filesystem::path& base_dir,
                                const std::string& search_dir);

}  // namespace posecast::rig
