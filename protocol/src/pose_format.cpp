// Channel layout, error-budget precision and magnitude priors of a skeleton.
// The derivation is written out in docs/codec.md ("Precision from the error budget").

#include "posecast/protocol/pose_format.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "posecast/hash.h"
#include "posecast/local_to_model.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sampling.h"

namespace posecast::protocol {
namespace {

float length3(const glm::vec3& v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }
float length3(const glm::vec4& v) { return std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z); }

int channel_count(uint8_t bits) {
  return ((bits & kChannelTranslation) ? 1 : 0) + ((bits & kChannelRotation) ? 1 : 0) +
         ((bits & kChannelScale) ? 1 : 0);
}

// How far a track's keys move the skeleton from the rest value, as a virtual-vertex distance
// in model units: 0 when every key equals the rest value (rotations up to sign), infinity for
// a CUBICSPLINE track with a non-zero tangent (it may move between keys).
//   translation: |key - rest| * parent world scale
//   rotation:    2 * chord(key, +-rest) (about the angle) * reach of the subtree
//   scale:       |key - rest| / smallest rest scale * reach of the subtree
float track_deviation(const Clip& clip, const Track& track, const Transform& rest,
                      float parent_scale, float reach) {
  const int comps = track.components();
  float rest_value[4];
  if (track.target == TrackTarget::kRotation) {
    rest_value[0] = rest.rotation.x;
    rest_value[1] = rest.rotation.y;
    rest_value[2] = rest.rotation.z;
    rest_value[3] = rest.rotation.w;
  } else {
    const glm::vec3& v = track.target == TrackTarget::kTranslation ? rest.translation : rest.scale;
    rest_value[0] = v.x;
    rest_value[1] = v.y;
    rest_value[2] = v.z;
  }
  const bool cubic = track.interpolation == Interpolation::kCubicSpline;
  const uint32_t elements = track.key_count * (cubic ? 3u : 1u);
  float worst = 0.0f;
  for (uint32_t e = 0; e < elements; ++e) {
    const float* v = &clip.values[track.values_offset + static_cast<std::size_t>(e) * comps];
    if (cubic && (e % 3) != 1) {
      for (int c = 0; c < comps; ++c)
        if (v[c] != 0.0f) return std::numeric_limits<float>::infinity();
      continue;
    }
    float same = 0.0f, negated = 0.0f;
    for (int c = 0; c < comps; ++c) {
      same += (v[c] - rest_value[c]) * (v[c] - rest_value[c]);
      negated += (v[c] + rest_value[c]) * (v[c] + rest_value[c]);
    }
    float d = std::sqrt(same);
    if (track.target == TrackTarget::kRotation) {
      d = 2.0f * std::sqrt(std::min(same, negated)) * reach;
    } else if (track.target == TrackTarget::kTranslation) {
      d *= parent_scale;
    } else {
      const float own = std::max(1e-6f, std::min({std::fabs(rest.scale.x), std::fabs(rest.scale.y),
                                                  std::fabs(rest.scale.z)}));
      d = d / own * reach;
    }
    if (!(d <= worst)) worst = d;  // NaN keys count as moving
  }
  return worst;
}

// Largest |component| of a scale track's values relative to the rest scale's smallest.
float scale_growth(const Clip& clip, const Track& track, const Transform& rest) {
  const float rest_min = std::max(1e-6f, std::min({std::fabs(rest.scale.x), std::fabs(rest.scale.y),
                                                   std::fabs(rest.scale.z)}));
  float largest = 0.0f;
  const uint32_t elements =
      track.key_count * (track.interpolation == Interpolation::kCubicSpline ? 3u : 1u);
  for (uint32_t e = 0; e < elements; ++e) {
    if (track.interpolation == Interpolation::kCubicSpline && (e % 3) != 1) continue;
    const float* v = &clip.values[track.values_offset + static_cast<std::size_t>(e) * 3];
    largest = std::max({largest, std::fabs(v[0]), std::fabs(v[1]), std::fabs(v[2])});
  }
  return std::max(1.0f, largest / rest_min);
}

bool uniform_positive(const glm::vec3& s) {
  const float tol = 1e-5f * std::fabs(s.x);
  return s.x > 0.0f && std::fabs(s.y - s.x) <= tol && std::fabs(s.z - s.x) <= tol;
}

std::vector<glm::mat4> rest_world(const Skeleton& skeleton) {
  std::vector<glm::mat4> models(skeleton.node_count(), glm::mat4(1.0f));
  LocalToModelJob job{&skeleton, skeleton.rest, models};
  if (!job.Run()) models.assign(skeleton.node_count(), glm::mat4(1.0f));
  return models;
}

// Magnitude priors: sample every clip at `hz`, quantise like the encoder does, and average
// |code change| per second and |code| per sample, per node component.
void compute_priors(const Skeleton& skeleton, std::span<const Clip> clips, uint32_t hz,
                    PoseFormat& format) {
  const std::size_t nodes = format.node_count();
  const std::size_t comps = nodes * kPriorComponentsPerNode;
  std::vector<uint64_t> change_sum(comps, 0), value_sum(comps, 0);
  uint64_t intervals = 0, samples = 0;
  PoseQuantizer quantizer(format);
  std::vector<Transform> pose(nodes);
  QuantizedPose previous, current;
  previous.reset(format);
  current.reset(format);
  const int64_t step_us = hz > 0 ? 1000000 / static_cast<int64_t>(hz) : 0;
  for (const Clip& clip : clips) {
    if (step_us <= 0) break;
    SamplingCursor cursor;
    cursor.reset(clip);
    bool have_previous = false;
    for (int64_t t = 0; t <= clip.duration_us; t += step_us) {
      SampleJob job{&skeleton, &clip, t, cursor.keys, pose};
      if (!job.Run()) break;
      if (!quantizer.quantize(pose, have_previous ? &previous : nullptr, current)) break;
      for (std::size_t n = 0; n < nodes; ++n) {
        const int32_t* now = &current.values[n * kValuesPerNode];
        const int32_t* before = &previous.values[n * kValuesPerNode];
        // Prior component order: T xyz (codes 0..2), R g (codes 4..6), S xyz (codes 7..9).
        const int map[kPriorComponentsPerNode] = {0, 1, 2, 4, 5, 6, 7, 8, 9};
        for (int c = 0; c < kPriorComponentsPerNode; ++c) {
          const int64_t v = now[map[c]];
          value_sum[n * kPriorComponentsPerNode + c] += static_cast<uint64_t>(v < 0 ? -v : v);
          if (have_previous && (c < 3 || c >= 6 || now[kRotationAxis] == before[kRotationAxis])) {
            const int64_t d = v - before[map[c]];
            change_sum[n * kPriorComponentsPerNode + c] += static_cast<uint64_t>(d < 0 ? -d : d);
          }
        }
      }
      ++samples;
      if (have_previous) ++intervals;
      std::swap(previous, current);
      have_previous = true;
    }
  }
  format.speed_prior.assign(comps, 0);
  format.value_prior.assign(comps, 0);
  for (std::size_t i = 0; i < comps; ++i) {
    if (intervals > 0) {
      format.speed_prior[i] =
          static_cast<uint32_t>(std::min<uint64_t>(change_sum[i] * hz / intervals, 0xFFFFFFFFu));
    }
    if (samples > 0) {
      format.value_prior[i] =
          static_cast<uint32_t>(std::min<uint64_t>(value_sum[i] / samples, 0xFFFFFFFFu));
    }
  }
}

uint64_t fingerprint(const PoseFormat& f) {
  Hasher h;
  h.add_u64(f.node_count());
  for (std::size_t n = 0; n < f.node_count(); ++n) {
    h.add_u32(static_cast<uint32_t>(static_cast<int32_t>(f.parents[n])));
    h.add_u32(f.channels[n]);
    h.add_float(f.precision[n].rotation_step);
    h.add_u32(static_cast<uint32_t>(f.precision[n].rotation_limit));
    h.add_float(f.precision[n].translation_step);
    h.add_float(f.precision[n].scale_step);
    const Transform& r = f.rest[n];
    for (float v : {r.translation.x, r.translation.y, r.translation.z, r.rotation.x, r.rotation.y,
                    r.rotation.z, r.rotation.w, r.scale.x, r.scale.y, r.scale.z}) {
      h.add_float(v);
    }
  }
  for (uint32_t v : f.speed_prior) h.add_u32(v);
  for (uint32_t v : f.value_prior) h.add_u32(v);
  h.add_u32(f.compensated ? 1u : 0u);
  for (int64_t d : f.clip_durations_us) h.add_i64(d);
  return h.value();
}

}  // namespace

ErrorScale compute_error_scale(const Skeleton& skeleton, float shell_cm, float bound_cm) {
  const std::vector<glm::mat4> world = rest_world(skeleton);
  std::vector<glm::vec3> points;
  const glm::mat4 mesh_world =
      skeleton.mesh_node >= 0 && static_cast<std::size_t>(skeleton.mesh_node) < world.size()
          ? world[static_cast<std::size_t>(skeleton.mesh_node)]
          : glm::mat4(1.0f);
  for (std::size_t j = 0; j < skeleton.joint_count() && j < skeleton.inverse_bind.size(); ++j) {
    glm::mat4 bind;
    if (affine_inverse(skeleton.inverse_bind[j], bind)) {
      points.emplace_back(affine_mul(mesh_world, bind)[3]);
    }
  }
  auto extent = [](const std::vector<glm::vec3>& p) {
    if (p.empty()) return 0.0f;
    glm::vec3 lo = p[0], hi = p[0];
    for (const glm::vec3& v : p) {
      lo = glm::min(lo, v);
      hi = glm::max(hi, v);
    }
    return std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z});
  };
  float height = extent(points);
  if (!(height > 0.0f) || !std::isfinite(height)) {
    points.clear();
    for (const glm::mat4& m : world) points.emplace_back(m[3]);
    height = extent(points);
  }
  if (!(height > 0.0f) || !std::isfinite(height)) height = 1.8f;
  ErrorScale s;
  s.bind_height = height;
  s.units_per_cm = height / 180.0f;
  s.shell_radius = shell_cm * s.units_per_cm;
  s.bound = bound_cm * s.units_per_cm;
  return s;
}

Result<PoseFormat> build_pose_format(const Skeleton& skeleton, std::span<const Clip> clips,
                                     const PoseFormatOptions& options) {
  if (Status st = skeleton.validate(); !st) {
    return Error{"pose format: skeleton: " + st.error().message};
  }
  for (std::size_t c = 0; c < clips.size(); ++c) {
    if (Status st = clips[c].validate(skeleton); !st) {
      return Error{"pose format: clips[" + std::to_string(c) + "]: " + st.error().message};
    }
  }
  const std::size_t nodes = skeleton.node_count();
  PoseFormat f;
  f.parents = skeleton.parents;
  f.rest = skeleton.rest;
  f.names = skeleton.names;
  f.joint_nodes = skeleton.joint_nodes;
  f.channels.assign(nodes, 0);
  f.precision.assign(nodes, NodePrecision{});
  f.error_scale = compute_error_scale(skeleton, options.shell_cm, options.bound_cm);

  // --- geometry of the rest pose (model space) ---
  const std::vector<glm::mat4> world = rest_world(skeleton);
  std::vector<glm::vec3> position(nodes);
  std::vector<float> world_scale(nodes);  // largest column norm
  for (std::size_t n = 0; n < nodes; ++n) {
    position[n] = glm::vec3(world[n][3]);
    world_scale[n] = std::max({length3(world[n][0]), length3(world[n][1]), length3(world[n][2])});
  }
  const float shell = f.error_scale.shell_radius;
  // Distance from each node to its farthest descendant's origin, plus the shell: how far an
  // error of the node's rotation or scale can carry.
  std::vector<float> subtree_reach(nodes, shell);
  for (std::size_t n = 0; n < nodes; ++n) {
    for (int a = f.parents[n]; a >= 0; a = f.parents[static_cast<std::size_t>(a)]) {
      const auto ai = static_cast<std::size_t>(a);
      subtree_reach[ai] = std::max(subtree_reach[ai], length3(position[n] - position[ai]) + shell);
    }
  }
  auto parent_scale_of = [&](std::size_t n) {
    const int p = f.parents[n];
    return p >= 0 ? world_scale[static_cast<std::size_t>(p)] : 1.0f;
  };

  // --- channel layout ---
  // A track whose keys stay within `tolerance` of the rest value (exported constants with
  // float noise, e.g. scales of 0.9999999) leaves its channel static; what that costs (its
  // largest deviation, summed down the worst path) is taken out of the quantisation budget.
  const float tolerance = options.static_tolerance * f.error_scale.bound;
  std::vector<uint8_t> near_static(nodes, 0);
  std::vector<float> near_deviation(nodes * 3, 0.0f);  // per node and channel: largest deviation
  float growth = 1.0f;  // how far animated scales can grow the skeleton
  for (const Clip& clip : clips) {
    for (const Track& track : clip.tracks) {
      const std::size_t n = track.node;
      const ChannelBit bit = track.target == TrackTarget::kTranslation ? kChannelTranslation
                             : track.target == TrackTarget::kRotation  ? kChannelRotation
                                                                       : kChannelScale;
      const float deviation =
          track_deviation(clip, track, f.rest[n], parent_scale_of(n), subtree_reach[n]);
      if (deviation == 0.0f) continue;
      if (deviation <= tolerance) {
        near_static[n] |= bit;
        float& worst = near_deviation[n * 3 + static_cast<std::size_t>(track.target)];
        worst = std::max(worst, deviation);
        continue;
      }
      f.channels[n] |= bit;
      if (bit == kChannelScale) growth = std::max(growth, scale_growth(clip, track, f.rest[n]));
    }
  }
  bool any_scale = false, uniform = true;
  for (std::size_t n = 0; n < nodes; ++n) {
    near_static[n] = static_cast<uint8_t>(near_static[n] & ~f.channels[n]);
    any_scale = any_scale || (f.channels[n] & kChannelScale);
    uniform = uniform && uniform_positive(f.rest[n].scale);
    if (f.channels[n] != 0) ++f.animated_node_count;
    f.animated_channel_count += static_cast<uint32_t>(channel_count(f.channels[n]));
  }
  f.compensated = options.compensate_rotations && !any_scale && uniform;

  // --- animated channels on the longest root-to-leaf path through each node ---
  std::vector<int> up(nodes, 0), down(nodes, 0);  // down: best below, excluding the node
  // What leaving the near-static channels at rest can cost, summed down each path.
  std::vector<float> near_up(nodes, 0.0f);
  float near_worst = 0.0f;
  for (std::size_t n = 0; n < nodes; ++n) {
    const int p = f.parents[n];
    const auto pi = static_cast<std::size_t>(p);
    up[n] = (p >= 0 ? up[pi] : 0) + channel_count(f.channels[n]);
    float own = 0.0f;
    for (int c = 0; c < 3; ++c) {
      if (near_static[n] & (1u << c)) own += near_deviation[n * 3 + static_cast<std::size_t>(c)];
    }
    near_up[n] = (p >= 0 ? near_up[pi] : 0.0f) + own;
    near_worst = std::max(near_worst, near_up[n]);
  }
  for (std::size_t n = nodes; n-- > 0;) {
    const int p = f.parents[n];
    if (p >= 0) {
      auto& d = down[static_cast<std::size_t>(p)];
      d = std::max(d, down[n] + channel_count(f.channels[n]));
    }
  }

  // --- reach of each node's rotation error with compensation ---
  // The next rotating descendant resets the orientation error, so only the segments up to it
  // (and the shells of joints that do not rotate) swing.
  std::vector<float> compensated_reach(nodes, shell);
  for (std::size_t n = nodes; n-- > 0;) {
    const int p = f.parents[n];
    if (p < 0) continue;
    const auto pi = static_cast<std::size_t>(p);
    const float segment = length3(position[n] - position[pi]);
    const float reach =
        segment + ((f.channels[n] & kChannelRotation) ? 0.0f : compensated_reach[n]);
    compensated_reach[pi] = std::max(compensated_reach[pi], reach);
  }

  // --- steps: each animated channel on a path gets an equal share of what is left of the
  // bound once the near-static channels on the worst path took their deviation ---
  const float budget =
      std::max(0.0f, f.error_scale.bound * options.budget_fraction - near_worst);
  const float sqrt3 = std::sqrt(3.0f);
  for (std::size_t n = 0; n < nodes; ++n) {
    const int path_channels = std::max(1, up[n] + down[n]);
    const float share = budget / static_cast<float>(path_channels);
    const float parent_scale = parent_scale_of(n) * growth;
    const float reach = f.compensated ? compensated_reach[n] : subtree_reach[n] * growth;
    NodePrecision& prec = f.precision[n];
    // Rotation: a Gibbs step s moves the rotation by at most sqrt(3) s radians, and a point
    // at distance `reach` by at most reach * angle.
    prec.rotation_step = std::clamp(share / (reach * sqrt3), 1e-7f, 0.25f);
    prec.rotation_limit = static_cast<int32_t>(std::ceil(2.0f / prec.rotation_step)) + 1;
    // Translation: per-component error step/2, |error| <= sqrt(3)/2 step, scaled by the parent.
    prec.translation_step = std::max(2.0f * share / (sqrt3 * parent_scale), 1e-12f);
    // Scale: a relative error moves the subtree (reach measured in model space, divided by the
    // node's own scale to get the pre-scale offsets).
    const glm::vec3& s = f.rest[n].scale;
    const float own = std::max(1e-6f, std::min({std::fabs(s.x), std::fabs(s.y), std::fabs(s.z)}));
    prec.scale_step =
        std::max(2.0f * share * own / (sqrt3 * subtree_reach[n] * growth), 1e-12f);
  }

  for (const Clip& clip : clips) f.clip_durations_us.push_back(clip.duration_us);
  compute_priors(skeleton, clips, options.prior_sample_hz, f);
  f.fingerprint = fingerprint(f);
  return f;
}

Result<std::vector<std::shared_ptr<const PoseFormat>>> build_model_pose_formats(const Model& model) {
  std::vector<std::shared_ptr<const PoseFormat>> formats;
  formats.reserve(model.rigs.size());
  for (std::size_t r = 0; r < model.rigs.size(); ++r) {
    const Rig& rig = model.rigs[r];
    Result<PoseFormat> format = build_pose_format(rig.skeleton, rig.clips);
    if (!format) {
      return Error{"model '" + model.source + "' rigs[" + std::to_string(r) +
                   "]: pose format: " + format.error().message};
    }
    formats.push_back(std::make_shared<const PoseFormat>(std::move(format).value()));
  }
  return formats;
}

}  // namespace posecast::protocol
