#pragma once
// Root-motion extraction at load: turns each clip's horizontal root translation and yaw into a
// RootMotionTrack (root_motion.h) and, for clips that travel, rewrites the root's keys so the
// pose keeps the root in place (docs/movement.md). The importer runs it for every rig; tests
// and tools may run it on rigs they build. Load-time only: allocates, samples the clips.

#include <cstddef>
#include <string>
#include <vector>

#include "posecast/model.h"

namespace posecast {

// A foot is in contact (planted) while its height is within this fraction of its height range
// over the clip above its lowest point.
inline constexpr float kFootContactBand = 0.1f;
// Samples per loop when a clip's feet are measured (foot_ground_speed).
inline constexpr int kFootSamplesPerLoop = 240;

// Fills rig.root_motion (one track per clip) from rig.motion_config, rewriting the root
// translation and rotation keys of travelling clips: horizontal position and yaw held at their
// clip-time-0 values, vertical motion and the other rotation axes kept. Call after the clips
// are bound and before their derived data (Clip::derive_*) is built. A clip stays in place
// (travels = false, pose untouched, ground speed from the feet) when it does not move its root
// past the travel threshold, or with a warning ("<file>: animations[c] '<name>': ...") when its
// root keys are CUBICSPLINE or an ancestor of the root joint is animated.
void extract_root_motion(Rig& rig, const std::string& file, std::vector<std::string>& warnings);

// The ground speed of clip `clip_index` from its feet (rig.motion_config.foot_nodes), at
// playback speed 1: over kFootSamplesPerLoop evenly spaced times of one loop, the mean
// horizontal model-space velocity of the feet while planted (kFootContactBand), its length.
// 0 when the rig has no feet, the clip has no length, or no foot plants. Deterministic.
float foot_ground_speed(const Rig& rig, std::size_t clip_index);

}  // namespace posecast
