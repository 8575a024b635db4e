#include "posecast/rig_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "clip_markers.h"
#include "posecast/clip.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast {

const char* to_string(LocomotionRole role) {
  switch (role) {
    case LocomotionRole::kIdle: return "idle";
    case LocomotionRole::kWalk: return "walk";
    case LocomotionRole::kRun: return "run";
  }
  return "?";
}

namespace {

Error field_error(const std::string& file, const std::string& field, const std::string& reason) {
  return Error{file + ": " + field + ": " + reason};
}

Status parse_string(const nlohmann::json& value, const std::string& file, const std::string& field,
                    std::string& out) {
  if (!value.is_string()) return field_error(file, field, "expected a string");
  out = value.get<std::string>();
  if (out.empty()) return field_error(file, field, "must not be empty");
  return {};
}

Status parse_locomotion(const nlohmann::json& value, const std::string& file, RigConfig& config) {
  if (!value.is_object()) return field_error(file, "locomotion", "expected an object");
  for (const auto& [key, clip] : value.items()) {
    bool known = false;
    for (std::size_t r = 0; r < kLocomotionRoleCount; ++r) {
      if (key != to_string(static_cast<LocomotionRole>(r))) continue;
      known = true;
      if (Status s = parse_string(clip, file, "locomotion." + key, config.locomotion_clips[r]); !s) return s;
    }
    if (!known) return field_error(file, "locomotion." + key, "unknown role (expected idle, walk or run)");
  }
  return {};
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool contains(const std::string& text, const char* part) { return lower(text).find(part) != std::string::npos; }

int find_node(const Skeleton& skeleton, const std::string& name) {
  for (std::size_t i = 0; i < skeleton.names.size(); ++i)
    if (skeleton.names[i] == name) return static_cast<int>(i);
  return -1;
}

// Rest-pose model-space position of every node.
std::vector<glm::vec3> rest_positions(const Skeleton& skeleton) {
  const std::vector<glm::mat4> models = rest_model_matrices(skeleton);
  std::vector<glm::vec3> out(models.size());
  for (std::size_t i = 0; i < models.size(); ++i) out[i] = glm::vec3(models[i][3]);
  return out;
}

bool is_joint(const Skeleton& skeleton, std::size_t node) {
  return std::find(skeleton.joint_nodes.begin(), skeleton.joint_nodes.end(), node) != skeleton.joint_nodes.end();
}

// Feet by name: joints named like a foot, the lowest (rest y) of each chain of such joints.
std::vector<uint16_t> feet_by_name(const Skeleton& skeleton, const std::vector<glm::vec3>& rest) {
  const auto foot_like = [&](std::size_t n) {
    const std::string& name = skeleton.names[n];
    return is_joint(skeleton, n) && (contains(name, "foot") || contains(name, "ankle") || contains(name, "toe"));
  };
  // chain_top[n]: the topmost foot-like ancestor-or-self of a foot-like node n.
  std::vector<int> chain_top(skeleton.node_count(), -1);
  std::vector<int> lowest_of_chain(skeleton.node_count(), -1);
  for (std::size_t n = 0; n < skeleton.node_count(); ++n) {
    if (!foot_like(n)) continue;
    const int parent = skeleton.parents[n];
    const int top = parent != kNoParent && chain_top[static_cast<std::size_t>(parent)] >= 0
                        ? chain_top[static_cast<std::size_t>(parent)]
                        : static_cast<int>(n);
    chain_top[n] = top;
    int& lowest = lowest_of_chain[static_cast<std::size_t>(top)];
    if (lowest < 0 || rest[n].y < rest[static_cast<std::size_t>(lowest)].y) lowest = static_cast<int>(n);
  }
  std::vector<uint16_t> feet;
  for (int n : lowest_of_chain)
    if (n >= 0) feet.push_back(static_cast<uint16_t>(n));
  std::sort(feet.begin(), feet.end());
  return feet;
}

// Feet by shape: leaf joints within 5 % of the rig's rest height above its lowest joint.
std::vector<uint16_t> feet_by_height(const Skeleton& skeleton, const std::vector<glm::vec3>& rest) {
  std::vector<bool> has_child(skeleton.node_count(), false);
  for (int16_t parent : skeleton.parents)
    if (parent != kNoParent) has_child[static_cast<std::size_t>(parent)] = true;
  float low = 0.0f, high = 0.0f;
  bool any = false;
  for (uint16_t j : skeleton.joint_nodes) {
    low = any ? std::min(low, rest[j].y) : rest[j].y;
    high = any ? std::max(high, rest[j].y) : rest[j].y;
    any = true;
  }
  std::vector<uint16_t> feet;
  for (uint16_t j : skeleton.joint_nodes)
    if (!has_child[j] && rest[j].y <= low + 0.05f * (high - low)) feet.push_back(j);
  std::sort(feet.begin(), feet.end());
  return feet;
}

int default_root_node(const std::vector<Clip>& clips) {
  int best = -1;
  for (const Clip& clip : clips)
    for (const Track& track : clip.tracks)
      if (track.target == TrackTarget::kTranslation && (best < 0 || track.node < best)) best = track.node;
  return best;
}

int find_clip_containing(const std::vector<Clip>& clips, const char* part) {
  for (std::size_t c = 0; c < clips.size(); ++c)
    if (contains(clips[c].name, part)) return static_cast<int>(c);
  return -1;
}

}  // namespace

Result<std::vector<MarkerSpec>> parse_marker_list(const nlohmann::json& list, const std::string& where) {
  if (!list.is_array()) return Error{where + ": expected an array of markers"};
  if (list.size() > kMaxClipMarkers)
    return Error{where + ": more than " + std::to_string(kMaxClipMarkers) + " markers"};
  std::vector<MarkerSpec> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const nlohmann::json& item = list[i];
    if (!item.is_object()) return Error{at + ": expected an object { name, time, duration }"};
    MarkerSpec spec;
    bool has_name = false, has_time = false;
    for (const auto& [key, value] : item.items()) {
      if (key == "name") {
        if (!value.is_string() || value.get<std::string>().empty())
          return Error{at + ".name: expected a non-empty string"};
        spec.name = value.get<std::string>();
        if (spec.name.size() > kMaxMarkerNameBytes)
          return Error{at + ".name: longer than " + std::to_string(kMaxMarkerNameBytes) + " bytes"};
        has_name = true;
      } else if (key == "time" || key == "duration") {
        if (!value.is_number()) return Error{at + "." + key + ": expected a number (seconds)"};
        const double v = value.get<double>();
        if (!std::isfinite(v) || v < 0.0) return Error{at + "." + key + ": must be a finite number >= 0"};
        (key == "time" ? spec.time_seconds : spec.duration_seconds) = v;
        if (key == "time") has_time = true;
      } else if (key != "comment") {
        return Error{at + "." + key + ": unknown field"};
      }
    }
    if (!has_name) return Error{at + ".name: missing"};
    if (!has_time) return Error{at + ".time: missing"};
    out.push_back(std::move(spec));
  }
  return out;
}

Status add_clip_markers(Clip& clip, const std::vector<MarkerSpec>& specs, const std::string& where) {
  if (clip.markers.size() + specs.size() > kMaxClipMarkers)
    return Error{where + ": clip '" + clip.name + "' would have more than " + std::to_string(kMaxClipMarkers) + " markers"};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const MarkerSpec& spec = specs[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    // Seconds to microseconds as the clip's duration is (Clip::duration_us), so a marker at the
    // last key's time is at duration_us exactly.
    const int64_t time_us = std::llround(static_cast<double>(static_cast<float>(spec.time_seconds)) * 1e6);
    if (spec.time_seconds > 1e7 || time_us > clip.duration_us) {
      char text[128];
      std::snprintf(text, sizeof text, "%g s is outside the clip (0 to %g s)", spec.time_seconds,
                    static_cast<double>(clip.duration_seconds));
      return Error{at + ".time: " + text};
    }
    for (const ClipMarker& m : clip.markers)
      if (m.name == spec.name) return Error{at + ".name: duplicate marker '" + spec.name + "' in clip '" + clip.name + "'"};
    ClipMarker marker;
    marker.name = spec.name;
    marker.time_us = time_us;
    marker.duration_us = spec.duration_seconds > 1e7 ? int64_t{10'000'000'000'000}
                                                     : std::llround(spec.duration_seconds * 1e6);
    clip.markers.push_back(std::move(marker));
  }
  std::sort(clip.markers.begin(), clip.markers.end(), [](const ClipMarker& a, const ClipMarker& b) {
    return a.time_us != b.time_us ? a.time_us < b.time_us : a.name < b.name;
  });
  return {};
}

Status apply_clip_markers(const RigConfig& config, std::vector<Clip>& clips, const std::string& file) {
  for (const ClipMarkersConfig& entry : config.events) {
    Clip* clip = nullptr;
    for (Clip& c : clips)
      if (c.name == entry.clip) clip = &c;
    if (clip == nullptr) {
      std::string names;
      for (const Clip& c : clips) names += (names.empty() ? "" : ", ") + c.name;
      return field_error(file, "events." + entry.clip, "no clip named '" + entry.clip + "' (the clips: " + names + ")");
    }
    if (Status s = add_clip_markers(*clip, entry.markers, file + ": events." + entry.clip); !s) return s;
  }
  return {};
}

Result<RigConfig> parse_rig_config(std::string_view json, const std::string& file) {
  const nlohmann::json root = nlohmann::json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Error{file + ": $: not valid JSON"};
  if (!root.is_object()) return Error{file + ": $: expected a JSON object"};
  RigConfig config;
  for (const auto& [key, value] : root.items()) {
    if (key == "root_motion") {
      if (!value.is_boolean()) return field_error(file, key, "expected true or false");
      config.root_motion = value.get<bool>();
    } else if (key == "foot_lock") {
      if (!value.is_boolean()) return field_error(file, key, "expected true or false");
      config.foot_lock = value.get<bool>();
    } else if (key == "root_motion_joint") {
      if (Status s = parse_string(value, file, key, config.root_motion_joint); !s) return s.error();
    } else if (key == "foot_joints") {
      if (!value.is_array()) return field_error(file, key, "expected an array of joint names");
      for (std::size_t i = 0; i < value.size(); ++i) {
        std::string name;
        if (Status s = parse_string(value[i], file, key + "[" + std::to_string(i) + "]", name); !s) return s.error();
        config.foot_joints.push_back(std::move(name));
      }
    } else if (key == "travel_threshold") {
      if (!value.is_number()) return field_error(file, key, "expected a number");
      const double t = value.get<double>();
      if (!(t > 0.0 && t <= 1.0)) return field_error(file, key, "must be in (0, 1]");
      config.travel_threshold = static_cast<float>(t);
    } else if (key == "locomotion") {
      if (Status s = parse_locomotion(value, file, config); !s) return s.error();
    } else if (key == "events") {
      if (!value.is_object()) return field_error(file, key, "expected an object of clip name: [markers]");
      for (const auto& [clip, list] : value.items()) {
        Result<std::vector<MarkerSpec>> markers = parse_marker_list(list, file + ": events." + clip);
        if (!markers) return markers.error();
        config.events.push_back(ClipMarkersConfig{clip, std::move(markers).value()});
      }
    } else {
      return field_error(file, key, "unknown field");
    }
  }
  return config;
}

Result<ResolvedRigConfig> resolve_rig_config(const RigConfig& config, const Skeleton& skeleton,
                                             const std::vector<Clip>& clips, const std::string& file) {
  ResolvedRigConfig out;
  out.travel_threshold = config.travel_threshold;
  out.foot_lock = config.foot_lock;
  if (config.root_motion_joint.empty()) {
    out.root_node = config.root_motion ? default_root_node(clips) : -1;
  } else {
    out.root_node = find_node(skeleton, config.root_motion_joint);
    if (out.root_node < 0)
      return field_error(file, "root_motion_joint", "no joint named '" + config.root_motion_joint + "'");
    if (!config.root_motion) out.root_node = -1;
  }
  const std::vector<glm::vec3> rest = rest_positions(skeleton);
  if (config.foot_joints.empty()) {
    out.foot_nodes = feet_by_name(skeleton, rest);
    if (out.foot_nodes.empty()) out.foot_nodes = feet_by_height(skeleton, rest);
  } else {
    for (std::size_t i = 0; i < config.foot_joints.size(); ++i) {
      const int node = find_node(skeleton, config.foot_joints[i]);
      if (node < 0)
        return field_error(file, "foot_joints[" + std::to_string(i) + "]",
                           "no joint named '" + config.foot_joints[i] + "'");
      out.foot_nodes.push_back(static_cast<uint16_t>(node));
    }
    std::sort(out.foot_nodes.begin(), out.foot_nodes.end());
    out.foot_nodes.erase(std::unique(out.foot_nodes.begin(), out.foot_nodes.end()), out.foot_nodes.end());
  }
  for (std::size_t r = 0; r < kLocomotionRoleCount; ++r) {
    const std::string& name = config.locomotion_clips[r];
    const char* role = to_string(static_cast<LocomotionRole>(r));
    if (name.empty()) {
      out.locomotion_clips[r] = find_clip_containing(clips, role);
      continue;
    }
    for (std::size_t c = 0; c < clips.size() && out.locomotion_clips[r] < 0; ++c)
      if (clips[c].name == name) out.locomotion_clips[r] = static_cast<int>(c);
    if (out.locomotion_clips[r] < 0)
      return field_error(file, std::string("locomotion.") + role, "no clip named '" + name + "'");
  }
  return out;
}

}  // namespace posecast
