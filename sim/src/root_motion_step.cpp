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

// Adds `w` times the root motion of one travelling clip whose sample time went from `from_us`
// to `to_us` while playing at a speed of sign `speed`. Through a loop's end (looping, and time
// moved against the speed's sign) the motion continues over the wrap, never back. Out of line:
// inlined, its registers crowded the phase loop that every motion runs.
[[gnu::noinline]] void add_travelling_root_motion(const RootMotionTrack& track, int64_t from_us, int64_t to_us,
                                                  SpeedQ16 speed, bool looping, float w, RootMotionSum& sum) {
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
}

// add_travelling_root_motion for an in-place clip: straight forward at its ground speed times
// the clip time it advanced (across a loop's end, the tail plus the head).
void add_in_place_root_motion(const RootMotionTrack& track, int64_t from_us, int64_t to_us, SpeedQ16 speed,
                              bool looping, float w, RootMotionSum& sum) {
  int64_t advance_us = to_us - from_us;
  if (looping && speed > 0 && advance_us < 0) advance_us += track.duration_us;
  if (looping && speed < 0 && advance_us > 0) advance_us -= track.duration_us;
  sum.z += w * (track.ground_speed * (static_cast<float>(advance_us) / 1000000.0f));
}

// How one advance gathers root motion: each moving slot's, times `weight` x the slot's share of
// the slot weights' `total`. Slot weights do not change in an advance, so the shares are known
// before the phases move and one pass over the slots does both.
struct Gathering {
  RootMotionSum* sum = nullptr;  // null: the advance moves nothing
  float weight = 0.0f;
  float total = 0.0f;
  int idle = -1;  // the rig's idle clip: in place, it stands (its foot-derived speed is noise)
};

[[gnu::always_inline]] inline Gathering gathering_for(const Rig& rig, const Motion& motion, RootMotionSum* sum, float weight) {
  Gathering g;
  if (sum == nullptr || motion.root_motion == 0 || !(weight > 0.0f) || rig.root_motion.empty()) return g;
  float total = motion.slots[0].weight;
  for (uint8_t i = 1; i < motion.count; ++i) total += motion.slots[i].weight;
  if (!(total > 0.0f)) return g;
  g.sum = sum, g.weight = weight, g.total = total;
  g.idle = rig.motion_config.locomotion_clips[static_cast<std::size_t>(LocomotionRole::kIdle)];
  return g;
}

// Adds slot `slot`'s root motion over an advance from sample time `from_us` to `to_us`.
[[gnu::always_inline]] inline void gather_slot(const Rig& rig, const Gathering& g, const ClipSlot& slot,
                                               int64_t from_us, int64_t to_us, SpeedQ16 speed, bool looping) {
  if (g.sum == nullptr || !(slot.weight > 0.0f)) return;
  const RootMotionTrack& track = rig.root_motion[slot.clip];
  if (!track.travels && (slot.clip == g.idle || !(track.ground_speed > 0.0f))) return;
  const float w = g.weight * (slot.weight / g.total);
  if (track.travels) {
    add_travelling_root_motion(track, from_us, to_us, speed, looping, w, *g.sum);
  } else {
    add_in_place_root_motion(track, from_us, to_us, speed, looping, w, *g.sum);
  }
}

// advance_slots for a looping motion playing forwards without phase sync, nearly every motion
// there is: a phase moves by dt x speed > 0 and wraps by one subtraction (wrap_phase past a
// whole cycle), its sample time is its whole microseconds. The same bits as the general path,
// in a loop of its own so that its values stay in registers.
[[gnu::always_inline]] inline void advance_forward_loop(const Rig& rig, Motion& motion, int64_t dt_us, const Gathering& g) {
  const Clip* const clips = rig.clips.data();
  const int64_t step = dt_us * motion.speed;
  const SpeedQ16 speed = motion.speed;
  const uint8_t count = motion.count;
  for (uint8_t i = 0; i < count; ++i) {
    ClipSlot& slot = motion.slots[i];
    const int64_t duration = clips[slot.clip].duration_us;
    const int64_t before = slot.phase;
    int64_t after = before + step;
    if (after >= (duration << kPhaseFractionBits)) after = wrap_phase(after, duration, WrapMode::kLoop);
    slot.phase = after;
    gather_slot(rig, g, slot, before >> kPhaseFractionBits, after >> kPhaseFractionBits, speed, true);
  }
}

void advance_any(const Rig& rig, Motion& motion, int64_t dt_us, const Gathering& g) {
  const WrapMode wrap = motion.wrap;
  const int64_t lead_duration = rig.clips[motion.slots[0].clip].duration_us;
  for (uint8_t i = 0; i < motion.count; ++i) {
    ClipSlot& slot = motion.slots[i];
    const int64_t duration = rig.clips[slot.clip].duration_us;
    const int64_t before = slot.phase;
    if (motion.sync != 0 && i > 0) {
      // slots[0] already advanced: follow its normalised phase.
      slot.phase = wrap_phase(rescale_phase(motion.slots[0].phase, cycle_length(lead_duration, wrap),
                                            cycle_length(duration, wrap)),
                              duration, wrap);
    } else {
      slot.phase = advance_phase(before, dt_us, motion.speed, duration, wrap);
    }
    gather_slot(rig, g, slot, sample_time_us(before, duration, wrap), sample_time_us(slot.phase, duration, wrap),
                motion.speed, wrap == WrapMode::kLoop);
  }
}

// advance_motion's body, inlined into it and into advance_plain_motion.
[[gnu::always_inline]] inline void advance_slots(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionSum* sum,
                                                 float weight) {
  if (motion.count == 0) return;
  const Gathering g = gathering_for(rig, motion, sum, weight);
  if (motion.wrap == WrapMode::kLoop && motion.sync == 0 && motion.speed > 0) {
    advance_forward_loop(rig, motion, dt_us, g);
  } else {
    advance_any(rig, motion, dt_us, g);
  }
}

}  // namespace

void advance_motion(const Rig& rig, Motion& motion, int64_t dt_us, RootMotionSum* sum, float weight) {
  advance_slots(rig, motion, dt_us, sum, weight);
}

void advance_plain_motion(EntityState& state, const Rig& rig, int64_t dt_us) {
  RootMotionSum delta;
  advance_slots(rig, state.layers[0].target, dt_us, &delta, 1.0f);
  apply_root_motion(state, delta);
}

void cache_heading(EntityState& state, float heading) {
  det_sin_cos(heading, state.heading_sin, state.heading_cos);
  state.heading_bits = std::bit_cast<uint32_t>(heading);
}

void turn_heading(EntityState& state, float heading, const RootMotionSum& sum) {
  state.root.yaw = det_wrap_angle((heading + sum.turn) + sum.sway);
  state.sway = sum.sway;
}

}  // namespace posecast::sim
