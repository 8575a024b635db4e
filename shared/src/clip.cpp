#include "posecast/clip.h"

#include <cmath>
#include <cstring>

#include "posecast/det_math.h"
#include "posecast/skeleton.h"

namespace posecast {

const char* to_string(Interpolation interpolation) {
  switch (interpolation) {
    case Interpolation::kStep: return "STEP";
    case Interpolation::kLinear: return "LINEAR";
    case Interpolation::kCubicSpline: return "CUBICSPLINE";
  }
  return "unknown";
}

const char* to_string(TrackTarget target) {
  switch (target) {
    case TrackTarget::kTranslation: return "translation";
    case TrackTarget::kRotation: return "rotation";
    case TrackTarget::kScale: return "scale";
  }
  return "unknown";
}

namespace {

Error invalid(const Clip& c, const std::string& what) { return Error{"clip '" + c.name + "': " + what}; }

std::string track_name(std::size_t i) { return "tracks[" + std::to_string(i) + "]"; }

static_assert(sizeof(SlerpTerms) == 4 * sizeof(float), "slerp_terms holds SlerpTerms as 4 floats");

bool has_slerp_terms(const Track& t) {
  return t.target == TrackTarget::kRotation && t.interpolation == Interpolation::kLinear;
}

// The slerp terms of the key pair starting at `key0` (x, y, z, w, then the next key's).
SlerpTerms key_pair_terms(const float* key0) {
  return det_slerp_terms(glm::quat(key0[3], key0[0], key0[1], key0[2]),
                         glm::quat(key0[7], key0[4], key0[5], key0[6]));
}

}  // namespace

void Clip::derive_slerp_terms() {
  slerp_terms.assign(values.size(), 0.0f);
  for (const Track& t : tracks) {
    if (!has_slerp_terms(t) || t.key_count < 2) continue;
    if (uint64_t{t.values_offset} + 4u * uint64_t{t.key_count} > values.size()) continue;
    for (uint32_t k = 0; k + 1 < t.key_count; ++k) {
      const std::size_t at = t.values_offset + std::size_t{4} * k;
      const SlerpTerms terms = key_pair_terms(&values[at]);
      std::memcpy(&slerp_terms[at], &terms, sizeof terms);
    }
  }
}

Status Clip::validate(const Skeleton& skeleton) const {
  if (!std::isfinite(duration_seconds) || duration_seconds < 0.0f)
    return invalid(*this, "duration_seconds is negative or not finite");
  if (duration_us != std::llround(static_cast<double>(duration_seconds) * 1e6))
    return invalid(*this, "duration_us does not match duration_seconds");
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    const Track& t = tracks[i];
    const std::string tname = track_name(i);
    if (t.node >= skeleton.node_count())
      return invalid(*this, tname + ".node " + std::to_string(t.node) + " out of range for " +
                                std::to_string(skeleton.node_count()) + " nodes");
    if (t.target > TrackTarget::kScale) return invalid(*this, tname + ".target is not a TrackTarget");
    if (t.interpolation > Interpolation::kCubicSpline)
      return invalid(*this, tname + ".interpolation is not an Interpolation");
    if (i > 0) {
      const Track& p = tracks[i - 1];
      if (p.node > t.node || (p.node == t.node && p.target >= t.target))
        return invalid(*this, tname + " is not after " + track_name(i - 1) + " in (node, target) order");
    }
    if (t.key_count == 0) return invalid(*this, tname + " has no keys");
    const bool cubic = t.interpolation == Interpolation::kCubicSpline;
    if (cubic && t.key_count < 2) return invalid(*this, tname + " is CUBICSPLINE with fewer than 2 keys");
    if (static_cast<uint64_t>(t.times_offset) + t.key_count > times.size())
      return invalid(*this, tname + " times run past Clip::times");
    const uint64_t per_key = static_cast<uint64_t>(t.components()) * (cubic ? 3u : 1u);
    if (static_cast<uint64_t>(t.values_offset) + per_key * t.key_count > values.size())
      return invalid(*this, tname + " values run past Clip::values");
    const float* k = times.data() + t.times_offset;
    for (uint32_t j = 0; j < t.key_count; ++j) {
      if (!std::isfinite(k[j]) || k[j] < 0.0f)
        return invalid(*this, tname + " key time " + std::to_string(j) + " is negative or not finite");
      if (j > 0 && !(k[j] > k[j - 1]))
        return invalid(*this, tname + " key times are not strictly increasing at key " + std::to_string(j));
      if (k[j] > duration_seconds)
        return invalid(*this, tname + " key time " + std::to_string(j) + " is after duration_seconds");
    }
    const float* v = values.data() + t.values_offset;
    for (uint64_t j = 0; j < per_key * t.key_count; ++j)
      if (!std::isfinite(v[j])) return invalid(*this, tname + " value " + std::to_string(j) + " is not finite");
    if (t.target == TrackTarget::kRotation && !cubic) {
      for (uint32_t j = 0; j < t.key_count; ++j) {
        const float* q = v + 4 * j;
        const float len2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
        if (std::fabs(len2 - 1.0f) > 1e-3f)
          return invalid(*this, tname + " rotation key " + std::to_string(j) + " is not unit length");
      }
    }
  }
  if (!slerp_terms.empty()) {
    // The sampler trusts these instead of recomputing them: they must be exactly the derived
    // ones (bit for bit), or the pose would silently differ from det_slerp's.
    if (slerp_terms.size() != values.size())
      return invalid(*this, "slerp_terms has " + std::to_string(slerp_terms.size()) +
                                " floats, values has " + std::to_string(values.size()));
    for (std::size_t i = 0; i < tracks.size(); ++i) {
      const Track& t = tracks[i];
      if (!has_slerp_terms(t)) continue;
      for (uint32_t k = 0; k + 1 < t.key_count; ++k) {
        const std::size_t at = t.values_offset + std::size_t{4} * k;
        const SlerpTerms terms = key_pair_terms(&values[at]);
        if (std::memcmp(&slerp_terms[at], &terms, sizeof terms) != 0)
          return invalid(*this, track_name(i) + " slerp_terms of key pair " + std::to_string(k) +
                                    " do not match its keys (derive_slerp_terms after editing)");
      }
    }
  }
  return {};
}

}  // namespace posecast
