// Leg locking of foot-locked clips (root_motion_extraction.h, lock_planted_legs): each planted
// foot held on its contact point by a two-bone bend of its leg, baked into the leg's rotation
// keys at load, so the runtime samples it like any clip.

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <glm/gtc/quaternion.hpp>

#include "clip_loop_samples.h"
#include "posecast/root_motion_extraction.h"
#include "root_joint_space.h"

namespace posecast {

namespace {

// A foot's leg: the foot node, its ankle (parent), lower and upper leg, and the index in the
// clip of the LINEAR rotation track of each of the three joints that bend.
struct Leg {
  int foot = -1;
  std::array<int, 3> joints{};  // upper, lower, ankle
  std::array<int, 3> tracks{};  // their rotation tracks
};

std::optional<Leg> find_leg(const Rig& rig, const Clip& clip, int foot) {
  Leg leg;
  leg.foot = foot;
  int node = foot;
  for (int i = 2; i >= 0; --i) {
    node = rig.skeleton.parents[static_cast<std::size_t>(node)];
    if (node == kNoParent) return std::nullopt;
    leg.joints[static_cast<std::size_t>(i)] = node;
    const int track = find_track(clip, node, TrackTarget::kRotation);
    if (track < 0 || clip.tracks[static_cast<std::size_t>(track)].interpolation != Interpolation::kLinear)
      return std::nullopt;
    leg.tracks[static_cast<std::size_t>(i)] = track;
  }
  return leg;
}

// Per sample (kFootSamplesPerLoop + 1), the horizontal move of the foot that holds it where it
// touched down while the character advances +Z by `step` model units a sample. In the air the
// move at lift-off fades linearly to none at the next touch-down, so the foot leaves its
// contact point smoothly and lands on the clip's path. The loop is cyclic (a contact may span
// its end). Empty when the foot never lifts (no contact point to hold).
std::vector<glm::dvec3> foot_corrections(const std::vector<glm::vec3>& path, const std::vector<bool>& planted,
                                         double step) {
  const int n = kFootSamplesPerLoop;  // distinct samples: the last is the first again
  const auto planted_at = [&](int i) { return static_cast<bool>(planted[static_cast<std::size_t>((i + n) % n)]); };
  int start = 0;  // a lift-off: airborne after a planted sample
  while (start < n && !(planted_at(start - 1) && !planted_at(start))) ++start;
  if (start == n) return {};
  const auto at = [&](int j) { return static_cast<std::size_t>((start + j) % n); };
  std::vector<glm::dvec3> out(static_cast<std::size_t>(n) + 1, glm::dvec3(0.0));
  // Contacts: each planted run held at the point where it touched down.
  glm::dvec3 anchor(0.0);
  int since = -1;  // samples since touch-down; -1 in the air
  for (int j = 0; j < n; ++j) {
    const glm::dvec3 p(path[at(j)]);
    if (!planted[at(j)]) {
      since = -1;
      continue;
    }
    if (since < 0) anchor = p;
    ++since;
    out[at(j)] = glm::dvec3(anchor.x - p.x, 0.0, (anchor.z - static_cast<double>(since) * step) - p.z);
  }
  // Flights: each airborne run, from the move at its lift-off down to none.
  for (int j = 0; j < n;) {
    if (planted[at(j)]) {
      ++j;
      continue;
    }
    const glm::dvec3 lift = out[at(j + n - 1)];
    int gap = 0;
    while (j + gap < n && !planted[at(j + gap)]) ++gap;
    for (int g = 0; g < gap; ++g)
      out[at(j + g)] = lift * (1.0 - static_cast<double>(g + 1) / static_cast<double>(gap + 1));
    j += gap;
  }
  out[static_cast<std::size_t>(n)] = out[0];
  return out;
}

// The shortest rotation taking unit vector `from` to unit vector `to`; nullopt when they are
// (nearly) opposite.
std::optional<glm::dquat> rotation_between(const glm::dvec3& from, const glm::dvec3& to) {
  const double w = 1.0 + glm::dot(from, to);
  if (!(w > 1e-9)) return std::nullopt;
  const glm::dvec3 axis = glm::cross(from, to);
  return glm::normalize(glm::dquat(w, axis.x, axis.y, axis.z));
}

glm::dquat to_double(const glm::quat& q) {
  return glm::dquat(static_cast<double>(q.w), static_cast<double>(q.x), static_cast<double>(q.y), static_cast<double>(q.z));
}

// Node `node`'s model-space rotation in a sampled pose: its ancestors' local rotations composed
// (scales taken as uniform, as the rest of root-motion extraction does).
glm::dquat model_rotation(const Skeleton& skeleton, const std::vector<Transform>& locals, int node) {
  glm::dquat rotation(1.0, 0.0, 0.0, 0.0);
  for (int n = node; n != kNoParent; n = skeleton.parents[static_cast<std::size_t>(n)])
    rotation = to_double(locals[static_cast<std::size_t>(n)].rotation) * rotation;
  return rotation;
}

// The upper, lower and ankle local rotations that move the ankle, and with it the foot, by
// `correction` in model space: the knee turned in the leg's plane (law of cosines: square roots
// only), the ankle keeping its model-space rotation so the foot below it only translates. A
// target out of the leg's reach is met as nearly as the leg stretches. nullopt when the leg is
// degenerate (a zero-length bone, or upper leg and target in line).
std::optional<std::array<glm::dquat, 3>> bend_leg(const Skeleton& skeleton, const Leg& leg,
                                                  const std::vector<Transform>& locals,
                                                  const std::vector<glm::mat4>& models,
                                                  const glm::dvec3& correction) {
  const auto position = [&](int node) { return glm::dvec3(models[static_cast<std::size_t>(node)][3]); };
  const glm::dvec3 a = position(leg.joints[0]), b = position(leg.joints[1]), c = position(leg.joints[2]);
  const double upper = glm::length(b - a), lower = glm::length(c - b);
  const glm::dvec3 reach = c + correction - a;
  const double length = glm::length(reach);
  if (!(upper > 1e-9) || !(lower > 1e-9) || !(length > 1e-9)) return std::nullopt;
  const glm::dvec3 x = reach / length;
  const glm::dvec3 pole = (b - a) - glm::dot(b - a, x) * x;
  const double pole_length = glm::length(pole);
  if (!(pole_length > 1e-6 * upper)) return std::nullopt;
  const glm::dvec3 y = pole / pole_length;
  const double span = upper + lower, gap = std::fabs(upper - lower);
  const double d = std::fmin(std::fmax(length, gap + 1e-6 * span), span * (1.0 - 1e-6));
  const double along = (upper * upper - lower * lower + d * d) / (2.0 * d);
  const glm::dvec3 knee = a + along * x + std::sqrt(std::fmax(0.0, upper * upper - along * along)) * y;
  const std::optional<glm::dquat> q1 = rotation_between(glm::normalize(b - a), glm::normalize(knee - a));
  if (!q1) return std::nullopt;
  const glm::dvec3 shin = *q1 * (c - b);
  const std::optional<glm::dquat> q2 = rotation_between(glm::normalize(shin), glm::normalize(a + d * x - knee));
  if (!q2) return std::nullopt;
  const auto local = [&](std::size_t i) { return to_double(locals[static_cast<std::size_t>(leg.joints[i])].rotation); };
  const glm::dquat parent = model_rotation(skeleton, locals, skeleton.parents[static_cast<std::size_t>(leg.joints[0])]);
  const glm::dquat upper_model = parent * local(0), lower_model = upper_model * local(1);
  return std::array<glm::dquat, 3>{
      glm::normalize(glm::conjugate(parent) * *q1 * parent * local(0)),
      glm::normalize(glm::conjugate(upper_model) * glm::conjugate(*q1) * *q2 * *q1 * upper_model * local(1)),
      glm::normalize(glm::conjugate(lower_model) * glm::conjugate(*q1) * glm::conjugate(*q2) * lower_model * local(2))};
}

// Rewrites one rotation track as LINEAR keys at `times_offset` (kFootSamplesPerLoop + 1
// times), each kept on the previous key's side of the quaternion sphere.
void write_rotation_track(Clip& clip, int track_index, uint32_t times_offset, const std::vector<glm::dquat>& keys) {
  Track& track = clip.tracks[static_cast<std::size_t>(track_index)];
  track.times_offset = times_offset;
  track.values_offset = static_cast<uint32_t>(clip.values.size());
  track.key_count = static_cast<uint32_t>(keys.size());
  glm::dquat previous = keys.front();
  for (glm::dquat q : keys) {
    if (glm::dot(q, previous) < 0.0) q = -q;
    previous = q;
    clip.values.insert(clip.values.end(), {static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z),
                                           static_cast<float>(q.w)});
  }
}

// The loop's sample times appended to clip.times once; their offset.
uint32_t append_loop_times(Clip& clip) {
  const uint32_t offset = static_cast<uint32_t>(clip.times.size());
  for (int i = 0; i <= kFootSamplesPerLoop; ++i) {
    const double time_us = static_cast<double>(clip.duration_us * i / kFootSamplesPerLoop);
    clip.times.push_back(i == kFootSamplesPerLoop ? clip.duration_seconds : static_cast<float>(time_us / 1e6));
  }
  return offset;
}

}  // namespace

bool lock_planted_legs(Rig& rig, std::size_t clip_index, float ground_speed) {
  const std::vector<uint16_t>& feet = rig.motion_config.foot_nodes;
  if (feet.empty() || clip_index >= rig.clips.size() || !(ground_speed > 0.0f)) return false;
  Clip& clip = rig.clips[clip_index];
  if (clip.duration_us <= 0 || !rig.skeleton.validate() || !clip.validate(rig.skeleton)) return false;
  const detail::LoopPoses poses = detail::sample_loop_poses(rig, clip);
  if (poses.models.empty()) return false;
  const std::vector<std::vector<glm::vec3>> paths = detail::foot_positions(poses, feet);
  const std::vector<std::vector<bool>> planted = detail::planted_samples(paths, feet.size());
  const double step = static_cast<double>(ground_speed) * static_cast<double>(clip.duration_us) / 1e6 /
                      static_cast<double>(kFootSamplesPerLoop);
  std::optional<uint32_t> times_offset;
  std::vector<bool> rewritten(rig.skeleton.node_count(), false);  // a joint bends for one foot only
  bool changed = false;
  for (std::size_t f = 0; f < feet.size(); ++f) {
    const std::optional<Leg> leg = find_leg(rig, clip, feet[f]);
    if (!leg || std::any_of(leg->joints.begin(), leg->joints.end(),
                            [&](int j) { return rewritten[static_cast<std::size_t>(j)]; }))
      continue;
    std::vector<glm::vec3> path;
    for (const std::vector<glm::vec3>& row : paths) path.push_back(row[f]);
    const std::vector<glm::dvec3> corrections = foot_corrections(path, planted[f], step);
    if (corrections.empty()) continue;
    std::array<std::vector<glm::dquat>, 3> keys;
    for (std::size_t s = 0; s < corrections.size(); ++s) {
      const std::vector<Transform>& locals = poses.locals[s];
      std::optional<std::array<glm::dquat, 3>> bent;
      if (corrections[s] != glm::dvec3(0.0))
        bent = bend_leg(rig.skeleton, *leg, locals, poses.models[s], corrections[s]);
      for (std::size_t i = 0; i < 3; ++i)
        keys[i].push_back(bent ? (*bent)[i] : to_double(locals[static_cast<std::size_t>(leg->joints[i])].rotation));
    }
    if (!times_offset) times_offset = append_loop_times(clip);
    for (std::size_t i = 0; i < 3; ++i) {
      write_rotation_track(clip, leg->tracks[i], *times_offset, keys[i]);
      rewritten[static_cast<std::size_t>(leg->joints[i])] = true;
    }
    changed = true;
  }
  return changed;
}

}  // namespace posecast
