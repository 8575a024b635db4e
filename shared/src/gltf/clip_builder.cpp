#include "gltf/clip_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "gltf/accessor_reader.h"
#include "posecast/det_math.h"

namespace posecast::gltf {
namespace {

struct DecodedSampler {
  Interpolation interpolation = Interpolation::kLinear;
  std::vector<float> times;
};

Result<DecodedSampler> decode_sampler(const ImportContext& ctx, const tinygltf::AnimationSampler& smp,
                                      const std::string& spath) {
  DecodedSampler out;
  if (smp.interpolation == "LINEAR") {
    out.interpolation = Interpolation::kLinear;
  } else if (smp.interpolation == "STEP") {
    out.interpolation = Interpolation::kStep;
  } else if (smp.interpolation == "CUBICSPLINE") {
    out.interpolation = Interpolation::kCubicSpline;
  } else {
    return ctx.error(spath + ".interpolation", "unsupported interpolation '" + smp.interpolation +
                                                   "' (LINEAR, STEP or CUBICSPLINE)");
  }
  const AccessorUse use{spath + ".input", smp.input, TINYGLTF_TYPE_SCALAR, kFloat};
  Result<std::size_t> count = accessor_count(ctx, use);
  if (!count) return count.error();  // names the accessor's type or storage (scalar float needed)
  if (count.value() > ctx.options.max_keys_per_track)
    return ctx.error(use.path, std::to_string(count.value()) + " keys, more than max_keys_per_track " +
                                   std::to_string(ctx.options.max_keys_per_track));
  Result<std::vector<float>> times = read_floats(ctx, use);
  if (!times) return times.error();
  out.times = std::move(times).value();
  for (std::size_t k = 0; k < out.times.size(); ++k) {
    const float t = out.times[k];
    if (!std::isfinite(t)) return ctx.error(use.path, "key time " + std::to_string(k) + " is not finite");
    if (t < 0.0f) return ctx.error(use.path, "key time " + std::to_string(k) + " is negative");
    if (k > 0 && !(t > out.times[k - 1]))
      return ctx.error(use.path, "key times are not strictly increasing at key " + std::to_string(k));
  }
  if (out.interpolation == Interpolation::kCubicSpline && out.times.size() < 2)
    return ctx.error(use.path, "CUBICSPLINE needs at least two keyframes");
  return out;
}

// Output values of one channel: type and storage per path, count per interpolation, finite;
// LINEAR/STEP rotations normalised.
Result<std::vector<float>> decode_output(const ImportContext& ctx,
                                         const tinygltf::AnimationSampler& smp,
                                         const DecodedSampler& sampler, TrackTarget target,
                                         const std::string& spath) {
  const bool rotation = target == TrackTarget::kRotation;
  // The spec's table: translation and scale are float; rotation also normalised integers.
  const AccessorUse use{spath + ".output", smp.output, rotation ? TINYGLTF_TYPE_VEC4 : TINYGLTF_TYPE_VEC3,
                        rotation ? (kFloat | kByteNorm | kUByteNorm | kShortNorm | kUShortNorm) : kFloat};
  Result<std::size_t> count = accessor_count(ctx, use);
  if (!count) return count.error();
  const bool cubic = sampler.interpolation == Interpolation::kCubicSpline;
  const std::size_t keys = sampler.times.size();
  const std::size_t expected = cubic ? keys * 3 : keys;
  if (count.value() != expected)
    return ctx.error(use.path, std::to_string(count.value()) + " elements for " + std::to_string(keys) +
                                   " keys; " + (cubic ? "CUBICSPLINE needs 3 per key" : "needs 1 per key"));
  Result<std::vector<float>> values = read_floats(ctx, use);
  if (!values) return values.error();
  std::vector<float> v = std::move(values).value();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      return ctx.error(use.path, "element " + std::to_string(i / (rotation ? 4 : 3)) + " is not finite");
  if (rotation && !cubic) {
    for (std::size_t k = 0; k < keys; ++k) {
      float* q = &v[k * 4];
      const glm::quat quat(q[3], q[0], q[1], q[2]);
      if (!(det_dot(quat, quat) > 0.0f))
        return ctx.error(use.path, "rotation key " + std::to_string(k) + " is a zero quaternion");
      const glm::quat n = det_normalize(quat);
      q[0] = n.x;
      q[1] = n.y;
      q[2] = n.z;
      q[3] = n.w;
    }
  }
  return v;
}

}  // namespace

Result<std::vector<DecodedAnimation>> decode_animations(
    const ImportContext& ctx, const NodeGraph& graph,
    const std::vector<std::vector<int>>& kept_channels) {
  const tinygltf::Model& m = ctx.gltf();
  std::vector<DecodedAnimation> result;
  result.reserve(m.animations.size());
  for (std::size_t a = 0; a < m.animations.size(); ++a) {
    const tinygltf::Animation& anim = m.animations[a];
    const std::string apath = at("animations", a);
    DecodedAnimation out;
    out.name = anim.name.empty() ? "animation_" + std::to_string(a) : anim.name;

    std::vector<DecodedSampler> samplers;
    samplers.reserve(anim.samplers.size());
    for (std::size_t s = 0; s < anim.samplers.size(); ++s) {
      Result<DecodedSampler> smp = decode_sampler(ctx, anim.samplers[s], apath + "." + at("samplers", s));
      if (!smp) return smp.error();
      out.duration_seconds = std::max(out.duration_seconds, smp.value().times.back());
      samplers.push_back(std::move(smp).value());
    }

    // File channel index claiming each (node, path), to refuse a second channel on it.
    std::vector<int> claimed(m.nodes.size() * 3, -1);
    for (std::size_t k = 0; k < anim.channels.size(); ++k) {
      const tinygltf::AnimationChannel& ch = anim.channels[k];
      const std::size_t file_index =
          a < kept_channels.size() && k < kept_channels[a].size()
              ? static_cast<std::size_t>(kept_channels[a][k]) : k;
      const std::string cpath = apath + "." + at("channels", file_index);
      if (ch.target_node == -1) continue;  // no target node: ignored, as the spec says
      if (ch.target_node < 0 || static_cast<std::size_t>(ch.target_node) >= m.nodes.size())
        return ctx.error(cpath + ".target.node", "node index " + std::to_string(ch.target_node) + " out of range");
      TrackTarget target;
      if (ch.target_path == "translation") {
        target = TrackTarget::kTranslation;
      } else if (ch.target_path == "rotation") {
        target = TrackTarget::kRotation;
      } else if (ch.target_path == "scale") {
        target = TrackTarget::kScale;
      } else if (ch.target_path == "weights") {
        continue;  // morph target weights: posecast has no morph targets
      } else {
        return ctx.error(cpath + ".target.path", "unsupported path '" + ch.target_path + "'");
      }
      if (ch.sampler < 0 || static_cast<std::size_t>(ch.sampler) >= anim.samplers.size())
        return ctx.error(cpath + ".sampler", "sampler index " + std::to_string(ch.sampler) + " out of range");
      const auto node = static_cast<std::size_t>(ch.target_node);
      if (graph.has_matrix[node])
        return ctx.error(cpath + ".target.node",
                         at("nodes", node) + " is given as a matrix, which an animated node must not be");
      int& owner = claimed[node * 3 + static_cast<std::size_t>(target)];
      if (owner != -1)
        return ctx.error(cpath + ".target", at("nodes", node) + "." + ch.target_path +
                                                " is already animated by " +
                                                at("channels", static_cast<std::size_t>(owner)));
      owner = static_cast<int>(file_index);

      const auto s = static_cast<std::size_t>(ch.sampler);
      Result<std::vector<float>> values =
          decode_output(ctx, anim.samplers[s], samplers[s], target, apath + "." + at("samplers", s));
      if (!values) return values.error();
      DecodedChannel dc;
      dc.node = ch.target_node;
      dc.target = target;
      dc.interpolation = samplers[s].interpolation;
      dc.times = samplers[s].times;
      dc.values = std::move(values).value();
      out.channels.push_back(std::move(dc));
    }
    result.push_back(std::move(out));
  }
  return result;
}

Result<Clip> bind_clip(const ImportContext& ctx, std::size_t animation_index,
                       const DecodedAnimation& animation, const BuiltSkeleton& skeleton) {
  Clip clip;
  clip.name = animation.name;
  clip.duration_seconds = animation.duration_seconds;
  clip.duration_us = std::llround(static_cast<double>(animation.duration_seconds) * 1e6);

  // (skeleton node, target, channel) for the channels on this skeleton, in track order.
  std::vector<std::tuple<int, int, std::size_t>> order;
  for (std::size_t c = 0; c < animation.channels.size(); ++c) {
    const DecodedChannel& ch = animation.channels[c];
    const int index = skeleton.node_to_index[static_cast<std::size_t>(ch.node)];
    if (index >= 0) order.emplace_back(index, static_cast<int>(ch.target), c);
  }
  std::sort(order.begin(), order.end());
  constexpr std::size_t kMaxOffset = std::numeric_limits<uint32_t>::max();
  for (const auto& [node, target, c] : order) {
    const DecodedChannel& ch = animation.channels[c];
    if (clip.times.size() + ch.times.size() > kMaxOffset ||
        clip.values.size() + ch.values.size() > kMaxOffset)
      return ctx.error(at("animations", animation_index), "more key data than a clip can index");
    Track t;
    t.node = static_cast<uint16_t>(node);
    t.target = ch.target;
    t.interpolation = ch.interpolation;
    t.key_count = static_cast<uint32_t>(ch.times.size());
    t.values_offset = static_cast<uint32_t>(clip.values.size());
    // Key times bit for bit equal to the previous track's (the usual case: exporters key every
    // channel of an animation at the same times) are stored once and shared: the sampler then
    // finds the key once for all the tracks of that timeline (sampling.cpp).
    const Track* previous = clip.tracks.empty() ? nullptr : &clip.tracks.back();
    if (previous != nullptr && previous->key_count == t.key_count &&
        std::memcmp(clip.times.data() + previous->times_offset, ch.times.data(),
                    ch.times.size() * sizeof(float)) == 0) {
      t.times_offset = previous->times_offset;
    } else {
      t.times_offset = static_cast<uint32_t>(clip.times.size());
      clip.times.insert(clip.times.end(), ch.times.begin(), ch.times.end());
    }
    clip.values.insert(clip.values.end(), ch.values.begin(), ch.values.end());
    clip.tracks.push_back(t);
  }
  return clip;
}

}  // namespace posecast::gltf
