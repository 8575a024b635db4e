#pragma once
// Rig config: which joint carries root motion, which joints are the feet and which clips the
// locomotion plays, for one model. It comes from a JSON document (docs/movement.md):
//
//   { "root_motion": true,                    // optional; false: every clip stays in place
//     "root_motion_joint": "hips",            // optional; default: see resolve_rig_config
//     "foot_joints": ["toe_l", "toe_r"],      // optional; default: found by name
//     "foot_lock": true,                      // optional, default false: lock the walk and run
//                                             // clips' planted feet (root_motion_extraction.h)
//     "travel_threshold": 0.05,               // optional, (0, 1]; kDefaultTravelThreshold
//     "locomotion": { "idle": "idle", "walk": "walk", "run": "run" },  // optional clip names
//     "events": { "walk": [ { "name": "step_l", "time": 0.1 },         // optional markers per
//                           { "name": "step_r", "time": 0.6, "duration": 0.05 } ] } }  // clip
//
// A model file's config is the sidecar "<stem>.posecast.json" beside it (Fox.glb ->
// Fox.posecast.json), read by import_gltf_file; the generated rig passes its own
// (rig::generated_rig_config_json). Its bytes join Model::content_hash, so peers that load the
// same model with a different config see a different asset.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "posecast/result.h"

namespace posecast {

struct Clip;
struct Skeleton;

// A clip travels when its root moves at least this fraction of the rig's rest size (the
// largest extent of its joints' rest positions) over one loop, or turns 0.1 rad or more.
inline constexpr float kDefaultTravelThreshold = 0.05f;

enum class LocomotionRole : uint8_t { kIdle = 0, kWalk = 1, kRun = 2 };
inline constexpr std::size_t kLocomotionRoleCount = 3;
// "idle", "walk", "run": the default clip name substrings (case-insensitive) per role.
const char* to_string(LocomotionRole role);

// One clip marker as written in a config or a glTF file's extras (docs/events.md), in seconds.
struct MarkerSpec {
  std::string name;
  double time_seconds = 0.0;
  double duration_seconds = 0.0;
};
// The rig config's markers of one clip (by name).
struct ClipMarkersConfig {
  std::string clip;
  std::vector<MarkerSpec> markers;
};

// A parsed config, names not yet checked against a skeleton. Empty fields mean "default".
struct RigConfig {
  bool root_motion = true;  // false: no clip is rewritten (no root-motion joint)
  std::string root_motion_joint;
  std::vector<std::string> foot_joints;
  // True: the locomotion's in-place walk and run clips are foot-locked (lock_planted_feet in
  // root_motion_extraction.h). Off by default: it rewrites those clips' root keys, so they no
  // longer evaluate as the file has them.
  bool foot_lock = false;
  float travel_threshold = kDefaultTravelThreshold;
  std::array<std::string, kLocomotionRoleCount> locomotion_clips;  // by LocomotionRole
  std::vector<ClipMarkersConfig> events;  // in document order
};

// Parses a config document. `file` names it in messages: "<file>: <field>: <reason>" (bad JSON,
// a field of the wrong type, an unknown field, a threshold out of range).
Result<RigConfig> parse_rig_config(std::string_view json, const std::string& file);

// A config bound to one rig: skeleton node indices and clip indices.
struct ResolvedRigConfig {
  int root_node = -1;  // -1: no root motion (turned off, or no clip has a translation track)
  std::vector<uint16_t> foot_nodes;  // ascending; may be empty (no ground speed from feet)
  bool foot_lock = false;
  float travel_threshold = kDefaultTravelThreshold;
  std::array<int, kLocomotionRoleCount> locomotion_clips{-1, -1, -1};  // -1: none found
};

// Binds `config` to a skeleton and its clips. Defaults:
//  - root_motion_joint: the first node, parents first, with a translation track in any clip;
//  - foot_joints: nodes whose name contains "foot", "ankle" or "toe" (case-insensitive),
//    keeping in each chain of such nodes the lowest in the rest pose (the one that meets the
//    ground); when no name matches, the leaf joints within 5 % of the rig's rest height of its
//    lowest joint;
//  - locomotion clip per role: the first clip whose name contains the role's name
//    (case-insensitive).
// Errors name `file`: "<file>: root_motion_joint: no joint named 'x'", "<file>:
// foot_joints[1]: no joint named 'x'", "<file>: locomotion.walk: no clip named 'x'".
Result<ResolvedRigConfig> resolve_rig_config(const RigConfig& config, const Skeleton& skeleton,
                                             const std::vector<Clip>& clips,
                                             const std::string& file);

// Adds the config's markers (`events`) to the clips they name, after any the file gave (glTF
// extras), and sorts each clip's markers (Clip::markers). Errors name `file` and the field:
// "<file>: events.sprint: no clip named 'sprint'", "<file>: events.walk[1].time: 2.5 s is
// outside the clip (0 to 1.2 s)", "<file>: events.walk[2].name: duplicate marker 'step_l'".
Status apply_clip_markers(const RigConfig& config, std::vector<Clip>& clips, const std::string& file);

}  // namespace posecast
