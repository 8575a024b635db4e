#include "root_motion_step.h"

#include <algorithm>
#include <bit>

#include "posecast/det_math.h"
#include "posecast/sim/root_transform.h"

namespace posecast::sim {
namespace {

// The clip's yaw at `time_us` relative to clip time 0 (0 for a clip that does not turn).
float track_yaw_at(const RootMotionTrack& track, int64_t time_us) {
  if (!track.turns || time_us <= 0) return 0.0f;
  return root_motion_between(track, 0, time_us, false).dyaw;
}

// Adds `w` times the root motion of one clip whose sample time went from `from_us` to `to_us`
// while playing at a speed of sign `speed`. Through a loop's end (looping, and time moved
// against the speed's sign) the motion continues over the wrap, never back.
void add_slot_root_motion(const RootMotionTrack& track, bool stands, int64_t from_us,
                          int64_t to_us, SpeedQ16 speed, bool looping, float w,
                          RootMotionSum& sum) {
  if (track.travels) {
    const float sway = track_yaw_at(track, from_us);
    const float sway_after = track_yaw_at(track, to_us);
    float dx = 0.0f, dz = 0.0f, dyaw = 0.0f, frame_yaw = sway;
    if (speed >= 0) {
      const RootMotionDelta d = root_motion_between(track, from_us, to_us, looping);
      dx = d.dx, dz = d.dz, dyaw = d.dyaw;
    } else {
      // Backwards: the forward motion from `to` to `from`, undone.
      const RootMotionDelta back = root_motion_between(track, to_us, from_us, looping);
      dx = -back.dx, dz = -back.dz, dyaw = -back.dyaw;
      frame_yaw = track_yaw_at(track, to_us);
    }
    float cx = dx, cz = dz;
    if (frame_yaw != 0.0f) rotate_by_yaw(frame_yaw, dx, dz, cx, cz);  // into the loop frame
    sum.x += w * cx;
    sum.z += w * cz;
    // The heading turns by what the clip turned beyond its sway: 0 within a loop, the loop's
    // net turn across a wrap.
    sum.turn += w * ((sway + dyaw) - sway_after);
    sum.sway += w * sway_after;
    return;
  }
  if (stands || !(track.ground_speed > 0.0f)) return;
  int64_t advance_us = to_us - from_us;
  if (looping && speed > 0 && advance_us < 0) advance_us += track.duration_us;
  if (looping && speed < 0 && advance_us > 0) advance_us -= track.duration_us;
  sum.z += w * (track.ground_speed * (static_cast<float>(advance_us) / 1000000.0f));
}

}  // namespace

void advance_motion(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionSum* sum,
                    float weight) {
  const uint8_t count = motion.count;
  if (count == 0) return;
  int64_t before[kMaxBlendClips];
  int64_t durations[kMaxBlendClips];
  const ClipSlot& lead = motion.slots[0];
  for (uint8_t i = 0; i < count; ++i) {
    ClipSlot& slot = motion.slots[i];
    durations[i] = rig.clips[slot.clip].duration_us;
    before[i] = slot.phase;
    if (motion.sync != 0 && i > 0) {
      // slots[0] already advanced: follow its normalised phase.
      slot.phase = wrap_phase(rescale_phase(lead.phase, cycle_length(durations[0], motion.wrap),
                                            cycle_length(durations[i], motion.wrap)),
                              durations[i], motion.wrap);
    } else {
      slot.phase = advance_phase(slot.phase, dt_us, motion.speed, durations[i], motion.wrap);
    }
  }
  if (sum == nullptr || motion.root_motion == 0 || !(weight > 0.0f) ||
      rig.root_motion.size() != rig.clips.size())
    return;
  float total = motion.slots[0].weight;
  for (uint8_t i = 1; i < count; ++i) total += motion.slots[i].weight;
  if (!(total > 0.0f)) return;
  const bool looping = motion.wrap == WrapMode::kLoop;
  const int idle = rig.motion_config.locomotion_clips[static_cast<std::size_t>(LocomotionRole::kIdle)];
  for (uint8_t i = 0; i < count; ++i) {
    const ClipSlot& slot = motion.slots[i];
    if (!(slot.weight > 0.0f)) continue;
    add_slot_root_motion(rig.root_motion[slot.clip], slot.clip == idle,
                         sample_time_us(before[i], durations[i], motion.wrap),
                         sample_time_us(slot.phase, durations[i], motion.wrap), motion.speed, looping,
                         weight * (slot.weight / total), *sum);
  }
}

void apply_root_motion(EntityState& state, const RootMotionSum& sum) {
  RootTransform& root = state.root;
  float& sway = state.sway;
  const float heading = root.yaw - sway;
  if (sum.x != 0.0f || sum.z != 0.0f) {
    // rotate_by_yaw(heading, sum.x, sum.z), its det_sin_cos cached while the heading holds.
    const uint32_t bits = std::bit_cast<uint32_t>(heading);
    if (bits != state.heading_bits) {
      det_sin_cos(heading, state.heading_sin, state.heading_cos);
      state.heading_bits = bits;
    }
    float wx = 0.0f, wz = 0.0f;
    rotate_by_sin_cos(state.heading_sin, state.heading_cos, sum.x, sum.z, wx, wz);
    root.x = std::clamp(root.x + wx, -kWorldHalfExtent, kWorldHalfExtent);
    root.z = std::clamp(root.z + wz, -kWorldHalfExtent, kWorldHalfExtent);
  }
  if (sway == 0.0f && sum.turn == 0.0f && sum.sway == 0.0f) return;  // no turning clip
  root.yaw = det_wrap_angle((heading + sum.turn) + sum.sway);
  sway = sum.sway;
}

}  // namespace posecast::sim
