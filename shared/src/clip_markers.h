#pragma once
// Internal: clip markers (docs/events.md) from JSON, shared by the rig config's `events` and the
// glTF importer's `animations[i].extras.posecast_events`: one list syntax, one set of checks.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "posecast/clip.h"
#include "posecast/result.h"
#include "posecast/rig_config.h"

namespace posecast {

// A JSON array of { "name": string, "time": seconds >= 0, "duration": seconds >= 0 (optional) }.
// `where` prefixes messages: "<where>[2].time: expected a number".
Result<std::vector<MarkerSpec>> parse_marker_list(const nlohmann::json& list, const std::string& where);

// Adds `specs` to the clip: each time, rounded to microseconds, must lie in [0, duration]; a
// name the clip already has is refused. Sorts the clip's markers (Clip::markers) afterwards.
Status add_clip_markers(Clip& clip, const std::vector<MarkerSpec>& specs, const std::string& where);

}  // namespace posecast
