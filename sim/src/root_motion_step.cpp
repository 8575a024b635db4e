#include "root_motion_step.h"

#include <algorithm>

#include "posecast/det_math.h"
#include "posecast/sim/root_transform.h"

namespace posecast::sim {
namespace {

// The root motion of one clip whose sample time went from `from_us` to `to_us` while playing at
// a speed of sign `speed`. Through a loop's end (looping, and time moved against the speed's
// sign) the motion continues over the wrap, never back.
RootMotionDelta slot_root_motion(const RootMotionTrack& track, int64_t from_us, int64_t to_us,
                                 SpeedQ16 speed, bool looping) {
  RootMotionDelta d;
  if (track.travels) {
    if (speed >= 0) return root_motion_between(track, from_us, to_us, looping);
    // Backwards: the forward motion from `to` to `from`, undone (in the frame at `to`, which
    // differs from the frame at `from` by the clip's turn over one tick: negligible, and the
    // same bits everywhere).
    const RootMotionDelta back = root_motion_between(track, to_us, from_us, looping);
    d.dx = -back.dx;
    d.dz = -back.dz;
    d.dyaw = -back.dyaw;
    return d;
  }
  if (!(track.ground_speed > 0.0f)) return d;
  int64_t advance_us = to_us - from_us;
  if (looping && speed > 0 && advance_us < 0) advance_us += track.duration_us;
  if (looping && speed < 0 && advance_us > 0) advance_us -= track.duration_us;
  d.dz = track.ground_speed * (static_cast<float>(advance_us) / 1000000.0f);
  return d;
}

}  // namespace

void advance_motion(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionDelta* delta,
                    float weight) {
  if (motion.count == 0) return;
  const bool moves = delta != nullptr && motion.root_motion != 0 && weight > 0.0f &&
                     rig.root_motion.size() == rig.clips.size();
  float total = 0.0f;
  if (moves) {
    for (uint8_t i = 0; i < motion.count; ++i) total += motion.slots[i].weight;
  }
  const bool looping = motion.wrap == WrapMode::kLoop;
  const ClipSlot& lead = motion.slots[0];
  const int64_t lead_duration = rig.clips[lead.clip].duration_us;
  for (uint8_t i = 0; i < motion.count; ++i) {
    ClipSlot& slot = motion.slots[i];
    const int64_t duration = rig.clips[slot.clip].duration_us;
    const int64_t before = slot.phase;
    if (motion.sync != 0 && i > 0) {
      // slots[0] already advanced: follow its normalised phase.
      slot.phase = wrap_phase(rescale_phase(lead.phase, cycle_length(lead_duration, motion.wrap),
                                            cycle_length(duration, motion.wrap)),
                              duration, motion.wrap);
    } else {
      slot.phase = advance_phase(slot.phase, dt_us, motion.speed, duration, motion.wrap);
    }
    if (!moves || !(total > 0.0f) || !(slot.weight > 0.0f)) continue;
    const RootMotionDelta d = slot_root_motion(
        rig.root_motion[slot.clip], sample_time_us(before, duration, motion.wrap),
        sample_time_us(slot.phase, duration, motion.wrap), motion.speed, looping);
    const float w = weight * (slot.weight / total);
    delta->dx += w * d.dx;
    delta->dz += w * d.dz;
    delta->dyaw += w * d.dyaw;
  }
}

void apply_root_delta(RootTransform& root, const RootMotionDelta& delta) {
  if (delta.dx == 0.0f && delta.dz == 0.0f && delta.dyaw == 0.0f) return;
  float wx = 0.0f, wz = 0.0f;
  rotate_by_yaw(root.yaw, delta.dx, delta.dz, wx, wz);
  root.x = std::clamp(root.x + wx, -kWorldHalfExtent, kWorldHalfExtent);
  root.z = std::clamp(root.z + wz, -kWorldHalfExtent, kWorldHalfExtent);
  if (delta.dyaw != 0.0f) root.yaw = det_wrap_angle(root.yaw + delta.dyaw);
}

}  // namespace posecast::sim
