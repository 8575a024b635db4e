#include "posecast/clip.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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

static_assert(sizeof(KeySlerpTerms) == 5 * sizeof(float), "slerp_terms holds c and theta");

bool has_slerp_terms(const Track& t) {
  return t.target == TrackTarget::kRotation && t.interpolation == Interpolation::kLinear;
}

// The slerp terms of the key pair starting at `key0` (x, y, z, w, then the next key's).
KeySlerpTerms key_pair_terms(const float* key0) {
  return det_key_slerp_terms(glm::quat(key0[3], key0[0], key0[1], key0[2]),
                             glm::quat(key0[7], key0[4], key0[5], key0[6]));
}

// Key pair `k`'s slots in Clip::slerp_terms: c (x, y, z, w), theta, three zeros.
void store_terms(const KeySlerpTerms& terms, float* slots) {
  std::memcpy(slots, terms.c, sizeof terms.c);
  slots[4] = terms.theta;
  slots[5] = slots[6] = slots[7] = 0.0f;
}

}  // namespace

void Clip::derive_slerp_terms() {
  slerp_terms.assign(kSlerpTermsPerValue * values.size(), 0.0f);
  for (const Track& t : tracks) {
    if (!has_slerp_terms(t) || t.key_count < 2) continue;
    if (uint64_t{t.values_offset} + 4u * uint64_t{t.key_count} > values.size()) continue;
    for (uint32_t k = 0; k + 1 < t.key_count; ++k) {
      const std::size_t at = t.values_offset + std::size_t{4} * k;
      store_terms(key_pair_terms(&values[at]), &slerp_terms[kSlerpTermsPerValue * at]);
    }
  }
}

namespace {

// The derived tables of derive_rotation_blocks(), built without touching the clip.
struct RotationTables {
  std::vector<RotationBlock> blocks;
  std::vector<float> lanes;
  std::vector<uint32_t> loose;
};

bool in_bounds(const Clip& clip, const Track& t) {
  return uint64_t{t.times_offset} + t.key_count <= clip.times.size() &&
         uint64_t{t.values_offset} + 4u * uint64_t{t.key_count} <= clip.values.size();
}

// Writes one block's lanes (key_count * kRotationBlockStride floats at `out`).
void fill_block_lanes(const Clip& clip, const RotationBlock& block, float* out) {
  for (uint32_t k = 0; k < block.key_count; ++k) {
    float* key = out + std::size_t{k} * kRotationBlockStride;
    for (int lane = 0; lane < 8; ++lane) {
      float q[4] = {0.0f, 0.0f, 0.0f, 1.0f};  // padding: identity, equal-keys terms
      KeySlerpTerms terms{{0.0f, 0.0f, 0.0f, 0.0f}, 0.0f};
      if (lane < block.count) {
        const Track& t = clip.tracks[block.tracks[static_cast<std::size_t>(lane)]];
        const float* key0 = &clip.values[t.values_offset + std::size_t{4} * k];
        std::memcpy(q, key0, sizeof q);
        if (k + 1 < block.key_count) terms = key_pair_terms(key0);
      }
      for (int c = 0; c < 4; ++c) {
        key[c * 8 + lane] = q[c];
        key[32 + c * 8 + lane] = terms.c[c];
      }
      key[64 + lane] = terms.theta;
    }
  }
}

// Blocks per timeline (in the order the timelines first appear), each timeline's tracks in
// track order cut into blocks of eight. Every lane does the same work (det_key_slerp has no
// branch), so which lane a track takes changes neither a bit of the result nor the time.
RotationTables build_rotation_tables(const Clip& clip) {
  RotationTables out;
  struct Timeline {
    uint32_t times_offset, key_count;
    std::vector<uint16_t> tracks;
  };
  std::vector<Timeline> timelines;
  for (std::size_t i = 0; i < clip.tracks.size(); ++i) {
    const Track& t = clip.tracks[i];
    const bool blockable = has_slerp_terms(t) && t.key_count >= 2 && i <= UINT16_MAX &&
                           in_bounds(clip, t);
    if (!blockable) {
      out.loose.push_back(static_cast<uint32_t>(i));
      continue;
    }
    auto timeline = std::find_if(timelines.begin(), timelines.end(), [&](const Timeline& tl) {
      return tl.times_offset == t.times_offset && tl.key_count == t.key_count;
    });
    if (timeline == timelines.end()) {
      timeline = timelines.insert(timelines.end(), Timeline{t.times_offset, t.key_count, {}});
    }
    timeline->tracks.push_back(static_cast<uint16_t>(i));
  }
  for (const Timeline& timeline : timelines) {
    for (std::size_t first = 0; first < timeline.tracks.size(); first += 8) {
      RotationBlock& block = out.blocks.emplace_back();
      block.times_offset = timeline.times_offset;
      block.key_count = timeline.key_count;
      for (std::size_t k = first; k < timeline.tracks.size() && k < first + 8; ++k) {
        block.tracks[block.count] = timeline.tracks[k];
        block.nodes[block.count] = clip.tracks[timeline.tracks[k]].node;
        ++block.count;
      }
    }
  }
  std::size_t floats = 0;
  for (RotationBlock& block : out.blocks) {
    block.lanes_offset = static_cast<uint32_t>(floats);
    floats += std::size_t{block.key_count} * kRotationBlockStride;
  }
  out.lanes.assign(floats, 0.0f);
  for (const RotationBlock& block : out.blocks) {
    fill_block_lanes(clip, block, out.lanes.data() + block.lanes_offset);
  }
  return out;
}

bool same_block(const RotationBlock& a, const RotationBlock& b) {
  return a.times_offset == b.times_offset && a.key_count == b.key_count &&
         a.lanes_offset == b.lanes_offset && a.count == b.count && a.tracks == b.tracks &&
         a.nodes == b.nodes;
}

}  // namespace

namespace {

uint32_t field_key(const Track& t) {
  return (uint32_t{t.node} << 2) | static_cast<uint32_t>(t.target);
}

}  // namespace

void Clip::derive_field_keys() {
  field_keys.clear();
  field_keys.reserve(tracks.size());
  for (const Track& t : tracks) field_keys.push_back(field_key(t));
}

void Clip::derive_rotation_blocks() {
  RotationTables tables = build_rotation_tables(*this);
  rotation_blocks = std::move(tables.blocks);
  rotation_lanes = std::move(tables.lanes);
  loose_tracks = std::move(tables.loose);
}

Status Clip::validate(const Skeleton& skeleton) const {
  if (!std::isfinite(duration_seconds) || duration_seconds < 0.0f)
    return invalid(*this, "duration_seconds is negative or not finite");
  if (duration_us != std::llround(static_cast<double>(duration_seconds) * 1e6))
    return invalid(*this, "duration_us does not match duration_seconds");
  if (markers.size() > kMaxClipMarkers)
    return invalid(*this, "more than " + std::to_string(kMaxClipMarkers) + " markers");
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const ClipMarker& m = markers[i];
    const std::string mname = "markers[" + std::to_string(i) + "]";
    if (m.name.empty() || m.name.size() > kMaxMarkerNameBytes)
      return invalid(*this, mname + ".name is empty or longer than " + std::to_string(kMaxMarkerNameBytes) + " bytes");
    if (m.time_us < 0 || m.time_us > duration_us) return invalid(*this, mname + ".time_us is outside the clip");
    if (m.duration_us < 0) return invalid(*this, mname + ".duration_us is negative");
    if (i > 0 && !(markers[i - 1].time_us < m.time_us ||
                   (markers[i - 1].time_us == m.time_us && markers[i - 1].name < m.name)))
      return invalid(*this, mname + " is not after markers[" + std::to_string(i - 1) + "] in (time, name) order");
    for (std::size_t j = 0; j < i; ++j)
      if (markers[j].name == m.name) return invalid(*this, mname + ".name '" + m.name + "' is a duplicate");
  }
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
    // ones (bit for bit), or the pose would silently differ from det_key_slerp's.
    if (slerp_terms.size() != kSlerpTermsPerValue * values.size())
      return invalid(*this, "slerp_terms has " + std::to_string(slerp_terms.size()) +
                                " floats, values has " + std::to_string(values.size()) +
                                " (expected " + std::to_string(kSlerpTermsPerValue) + " per value)");
    for (std::size_t i = 0; i < tracks.size(); ++i) {
      const Track& t = tracks[i];
      if (!has_slerp_terms(t)) continue;
      for (uint32_t k = 0; k + 1 < t.key_count; ++k) {
        const std::size_t at = t.values_offset + std::size_t{4} * k;
        float expected[8];
        store_terms(key_pair_terms(&values[at]), expected);
        if (std::memcmp(&slerp_terms[kSlerpTermsPerValue * at], expected, sizeof expected) != 0)
          return invalid(*this, track_name(i) + " slerp_terms of key pair " + std::to_string(k) +
                                    " do not match its keys (derive_slerp_terms after editing)");
      }
    }
  }
  if (!field_keys.empty()) {
    // The evaluator skips rest-pose copies on the strength of these (same_clip_fields).
    bool same = field_keys.size() == tracks.size();
    for (std::size_t i = 0; same && i < tracks.size(); ++i) same = field_keys[i] == field_key(tracks[i]);
    if (!same) return invalid(*this, "field_keys do not match the tracks (derive_field_keys after editing)");
  }
  if (!rotation_blocks.empty() || !rotation_lanes.empty() || !loose_tracks.empty()) {
    // The sampler trusts the blocks instead of the tracks' values: they must be exactly the
    // derived ones, bit for bit (the bounds above hold, so the derivation reads in bounds).
    const RotationTables expected = build_rotation_tables(*this);
    bool same = expected.blocks.size() == rotation_blocks.size() &&
                expected.loose == loose_tracks && expected.lanes.size() == rotation_lanes.size();
    for (std::size_t b = 0; same && b < rotation_blocks.size(); ++b) {
      same = same_block(expected.blocks[b], rotation_blocks[b]);
    }
    if (same && !rotation_lanes.empty()) {
      same = std::memcmp(expected.lanes.data(), rotation_lanes.data(),
                         rotation_lanes.size() * sizeof(float)) == 0;
    }
    if (!same) {
      return invalid(*this, "rotation_blocks do not match the tracks and values "
                            "(derive_rotation_blocks after editing)");
    }
  }
  return {};
}

}  // namespace posecast
