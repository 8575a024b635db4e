#include "locomotion.h"

#include <algorithm>
#include <string>

#include "posecast/det_math.h"
#include "posecast/sim/root_transform.h"

namespace posecast::sim {
namespace {

constexpr float kMaxRate = 32767.0f;  // SpeedQ16's range

// Below the walk's ground speed the walk plays alone, slowed, down to this fraction of its
// rate; only slower than that does the idle blend in (walk at this rate). A walk slowed by 30 %
// still plants its feet, while every share of the idle in the blend moves them (the idle stands
// while the blend travels), so the idle's share is kept to the slowest speeds.
constexpr float kSlowestWalkRate = 0.7f;

// A locomotion clip of `role`, or -1 (none, or no root-motion track for it).
int role_clip(const Rig& rig, LocomotionRole role) {
  const int clip = rig.motion_config.locomotion_clips[static_cast<std::size_t>(role)];
  if (clip < 0 || static_cast<std::size_t>(clip) >= rig.clips.size() ||
      static_cast<std::size_t>(clip) >= rig.root_motion.size()) {
    return -1;
  }
  return clip;
}

// The idle stands: its in-place ground speed (foot noise) moves nothing (root_motion_step.h).
float ground_speed(const Rig& rig, int clip) {
  const RootMotionTrack& track = rig.root_motion[static_cast<std::size_t>(clip)];
  if (!track.travels && clip == role_clip(rig, LocomotionRole::kIdle)) return 0.0f;
  return track.ground_speed;
}
float duration_s(const Rig& rig, int clip) {
  return static_cast<float>(rig.clips[static_cast<std::size_t>(clip)].duration_us) / 1000000.0f;
}

struct Blend {
  int clips[3] = {-1, -1, -1};  // walk, idle, run (-1: not in the blend)
  float weights[3] = {0.0f, 0.0f, 0.0f};
  uint8_t count = 1;
  SpeedQ16 rate = 0;
};

SpeedQ16 to_rate(float rate) {
  if (!(rate >= 0.0f)) return 0;  // NaN too
  rate = std::min(rate, kMaxRate);
  return static_cast<SpeedQ16>(rate * 65536.0f + 0.5f);
}

Blend blend_for(const Rig& rig, float v) {
  Blend b;
  const int walk = role_clip(rig, LocomotionRole::kWalk);
  int idle = role_clip(rig, LocomotionRole::kIdle);
  int run = role_clip(rig, LocomotionRole::kRun);
  if (idle == walk) idle = -1;
  const float gw = ground_speed(rig, walk);
  if (run == walk || run == idle || !(run >= 0 && ground_speed(rig, run) > gw)) run = -1;
  b.clips[0] = walk;
  if (idle >= 0) b.clips[b.count++] = idle;
  const int idle_slot = idle >= 0 ? 1 : -1;
  if (run >= 0) b.clips[b.count++] = run;
  const int run_slot = run >= 0 ? b.count - 1 : -1;
  float* w = b.weights;
  if (v <= 0.0f) {
    // Standing: the idle at rate 1 (slot 0 at the rate that keeps it so), or walk held.
    if (idle_slot < 0) {
      w[0] = 1.0f;
      b.rate = 0;
    } else {
      w[idle_slot] = 1.0f;
      b.rate = to_rate(duration_s(rig, walk) / duration_s(rig, idle));
    }
    return b;
  }
  if (v < gw) {
    const float slowest_walk = kSlowestWalkRate * gw;
    if (idle_slot >= 0 && v < slowest_walk) {
      w[0] = v / slowest_walk;
      w[idle_slot] = 1.0f - w[0];
    } else {
      w[0] = 1.0f;
    }
  } else if (run_slot >= 0 && v < ground_speed(rig, run)) {
    const float t = (v - gw) / (ground_speed(rig, run) - gw);
    w[run_slot] = t;
    w[0] = 1.0f - t;
  } else {
    w[run_slot >= 0 ? run_slot : 0] = 1.0f;
  }
  // Phase-synced, one loop of the blend takes sum(w * duration) and covers
  // sum(w * ground_speed * duration): v units a second needs v / that loops a second, and
  // slot 0 then plays at loops * its duration.
  float stride = 0.0f;
  for (uint8_t i = 0; i < b.count; ++i) {
    stride += w[i] * (ground_speed(rig, b.clips[i]) * duration_s(rig, b.clips[i]));
  }
  b.rate = stride > 0.0f ? to_rate((v / stride) * duration_s(rig, walk)) : 0;
  return b;
}

}  // namespace

Status check_locomotion_rig(const Rig& rig) {
  const int walk = role_clip(rig, LocomotionRole::kWalk);
  if (walk < 0) return Error{"the rig has no walk clip for locomotion (rig config 'locomotion.walk')"};
  if (!(ground_speed(rig, walk) > 0.0f)) {
    return Error{"the rig's walk clip '" + rig.clips[static_cast<std::size_t>(walk)].name +
                 "' has no ground speed (it neither travels nor plants its feet)"};
  }
  if (rig.clips[static_cast<std::size_t>(walk)].duration_us <= 0) {
    return Error{"the rig's walk clip has no duration"};
  }
  return {};
}

MotionSpec locomotion_spec(const Rig& rig, float speed) {
  const Blend b = blend_for(rig, speed);
  MotionSpec spec;
  spec.count = b.count;
  for (uint8_t i = 0; i < b.count; ++i) {
    spec.clips[i] = ClipWeight{static_cast<uint16_t>(b.clips[i]), b.weights[i]};
  }
  spec.speed = b.rate;
  spec.wrap = WrapMode::kLoop;
  return spec;
}

void set_locomotion_speed(Motion& motion, const Rig& rig, float speed) {
  const Blend b = blend_for(rig, speed);
  if (motion.count != b.count) return;  // not this rig's locomotion motion: leave it
  for (uint8_t i = 0; i < b.count; ++i) motion.slots[i].weight = b.weights[i];
  motion.speed = b.rate;
}

namespace {

// The speed layer 0's locomotion motion covers now: loops a second (slot 0's rate over its
// length) times the blend's stride.
float covered_speed(const Motion& motion, const Rig& rig) {
  float total = 0.0f, stride = 0.0f;
  for (uint8_t i = 0; i < motion.count; ++i) total += motion.slots[i].weight;
  if (!(total > 0.0f)) return 0.0f;
  for (uint8_t i = 0; i < motion.count; ++i) {
    const int clip = motion.slots[i].clip;
    stride += (motion.slots[i].weight / total) * (ground_speed(rig, clip) * duration_s(rig, clip));
  }
  const float rate = static_cast<float>(motion.speed) / 65536.0f;
  const float length = duration_s(rig, motion.slots[0].clip);
  return length > 0.0f ? (rate / length) * stride : 0.0f;
}

// Speed changes ramp: the blend covers at most this many of the rig's fastest ground speed per
// second more or less each second (0.25 s from standing to its run), so a walk turns into a
// run through the blend instead of cutting to it (a cut moves the planted feet).
constexpr float kRampPerSecond = 4.0f;

// Moves layer 0's blend one tick towards the commanded speed.
void ramp_speed(EntityState& state, const Rig& rig, float dt) {
  if (state.layers.empty() || !check_locomotion_rig(rig).ok()) return;
  Motion& motion = state.layers[0].target;
  const float target = state.locomotion.speed;
  const Blend goal = blend_for(rig, target);
  bool there = motion.count == goal.count && motion.speed == goal.rate;
  for (uint8_t i = 0; there && i < goal.count; ++i) there = motion.slots[i].weight == goal.weights[i];
  if (there) return;
  const int run = role_clip(rig, LocomotionRole::kRun);
  const int walk = role_clip(rig, LocomotionRole::kWalk);
  const float top = std::max(ground_speed(rig, walk), run >= 0 ? ground_speed(rig, run) : 0.0f);
  const float step = kRampPerSecond * top * dt;
  const float now = covered_speed(motion, rig);
  const float next = target > now ? std::min(target, now + step) : std::max(target, now - step);
  set_locomotion_speed(motion, rig, next);
  if (next == target) set_locomotion_speed(motion, rig, target);  // exactly the goal's bits
}

void change_speed(EntityState& state, float speed) { state.locomotion.speed = speed; }

// Arrived: the next queued waypoint, or stand.
void next_target(EntityState& state) {
  Locomotion& loco = state.locomotion;
  if (state.waypoints.empty()) {
    loco.mode = LocomotionMode::kMove;
    loco.turn_rate = 0.0f;
    loco.target_x = 0.0f;
    loco.target_z = 0.0f;
    change_speed(state, 0.0f);
    return;
  }
  const Waypoint next = state.waypoints.front();
  state.waypoints.pop_front();  // no allocation
  loco.target_x = next.x;
  loco.target_z = next.z;
  change_speed(state, next.speed);
}

}  // namespace

void step_locomotion(EntityState& state, const Rig& rig, int64_t dt_us) {
  Locomotion& loco = state.locomotion;
  RootTransform& root = state.root;
  const float dt = static_cast<float>(dt_us) / 1000000.0f;
  ramp_speed(state, rig, dt);
  if (loco.mode == LocomotionMode::kMove) {
    if (loco.turn_rate != 0.0f) root.yaw = det_wrap_angle(root.yaw + loco.turn_rate * dt);
    return;
  }
  if (loco.mode != LocomotionMode::kMoveTo) return;
  const float dx = loco.target_x - root.x;
  const float dz = loco.target_z - root.z;
  const float radius = std::max(2.0f * loco.speed / kMaxTurnRate, loco.speed * dt);
  if (dx * dx + dz * dz <= radius * radius) {
    next_target(state);
    return;
  }
  // Steers the heading (the facing without the stride's sway).
  const float turn = det_wrap_angle(det_atan2(dx, dz) - (root.yaw - state.sway));
  const float max_turn = kMaxTurnRate * dt;
  root.yaw = det_wrap_angle(root.yaw + std::clamp(turn, -max_turn, max_turn));
}

}  // namespace posecast::sim
