#include "posecast/sampling.h"

#include <algorithm>
#include <cstring>

#include "posecast/det_math.h"

namespace posecast {
namespace {

// Where a time falls on one track's key timeline.
//   kBefore:  t < times[0]                 -> value of key 0
//   kBetween: times[k] <= t < times[k+1]   -> interpolate keys k and k+1
//   kAfter:   t >= times[n-1]              -> value of key n-1 (k == n-1)
// The key index is a pure function of (times, t), so any cursor history gives the same bits.
enum class KeyPlace : uint8_t { kBefore, kBetween, kAfter };

struct KeyLookup {
  uint32_t key;
  KeyPlace place;
};

// The canonical lookup: std::upper_bound gives the first key strictly after t.
KeyLookup search_key(const float* times, uint32_t n, float t) {
  const float* first_after = std::upper_bound(times, times + n, t);
  const auto after = static_cast<uint32_t>(first_after - times);
  if (after == 0) return {0u, KeyPlace::kBefore};
  if (after == n) return {n - 1u, KeyPlace::kAfter};
  return {after - 1u, KeyPlace::kBetween};
}

// Checks the cursor's key and the next one (forward playback at a tick shorter than the key
// spacing), else searches. The hint is untrusted: any value is safe.
KeyLookup find_key(const float* times, uint32_t n, float t, uint32_t hint) {
  if (hint < n && times[hint] <= t) {
    if (hint + 1u == n) return {hint, KeyPlace::kAfter};
    if (t < times[hint + 1u]) return {hint, KeyPlace::kBetween};
    if (hint + 2u == n) return {hint + 1u, KeyPlace::kAfter};
    if (t < times[hint + 2u]) return {hint + 1u, KeyPlace::kBetween};
  }
  return search_key(times, n, t);
}

glm::vec3 load_vec3(const float* v) { return glm::vec3(v[0], v[1], v[2]); }
// Values store rotations as (x, y, z, w); glm::quat's constructor takes (w, x, y, z).
glm::quat load_quat(const float* v) { return glm::quat(v[3], v[0], v[1], v[2]); }

// Cubic Hermite basis weights, in one fixed evaluation order (see evaluate_cubic).
struct HermiteWeights {
  float h00, h10, h01, h11;
};

HermiteWeights hermite_weights(float s) {
  const float s2 = s * s;
  const float s3 = s2 * s;
  return {(2.0f * s3 - 3.0f * s2) + 1.0f, (s3 - 2.0f * s2) + s, 3.0f * s2 - 2.0f * s3, s3 - s2};
}

// One component of the glTF cubic spline:
//   p(s) = h00 p0 + h10 m0 + h01 p1 + h11 m1, m0 = dt * out_k, m1 = dt * in_{k+1},
// summed left to right.
float hermite(const HermiteWeights& w, float p0, float out0, float p1, float in1, float dt) {
  return ((w.h00 * p0 + w.h10 * (dt * out0)) + w.h01 * p1) + w.h11 * (dt * in1);
}

// Writes the sampled value of one track (`comps` floats) to `out`.
void sample_track(const Track& track, const Clip& clip, float t, uint32_t& cursor, float* out) {
  const uint32_t n = track.key_count;
  const float* times = clip.times.data() + track.times_offset;
  const float* values = clip.values.data() + track.values_offset;
  const int comps = track.components();
  const bool cubic = track.interpolation == Interpolation::kCubicSpline;
  // Floats per key: CUBICSPLINE keys are (in-tangent, value, out-tangent).
  const uint32_t stride = static_cast<uint32_t>(comps) * (cubic ? 3u : 1u);
  const uint32_t value_at = cubic ? static_cast<uint32_t>(comps) : 0u;  // value inside a key

  const KeyLookup at = find_key(times, n, t, cursor);
  cursor = at.key;
  const float* key0 = values + static_cast<std::size_t>(at.key) * stride;
  if (at.place != KeyPlace::kBetween || track.interpolation == Interpolation::kStep) {
    std::memcpy(out, key0 + value_at, sizeof(float) * static_cast<std::size_t>(comps));
    return;
  }
  const float* key1 = key0 + stride;
  const float t0 = times[at.key];
  const float dt = times[at.key + 1u] - t0;
  const float s = (t - t0) / dt;

  if (!cubic) {
    if (comps == 4) {
      const glm::quat q = det_slerp(load_quat(key0), load_quat(key1), s);
      out[0] = q.x;
      out[1] = q.y;
      out[2] = q.z;
      out[3] = q.w;
    } else {
      const glm::vec3 v = det_lerp(load_vec3(key0), load_vec3(key1), s);
      out[0] = v.x;
      out[1] = v.y;
      out[2] = v.z;
    }
    return;
  }

  const HermiteWeights w = hermite_weights(s);
  const float* out0 = key0 + 2 * comps;  // out-tangent of key k
  const float* p0 = key0 + comps;
  const float* in1 = key1;               // in-tangent of key k+1
  const float* p1 = key1 + comps;
  float r[4];
  for (int c = 0; c < comps; ++c) r[c] = hermite(w, p0[c], out0[c], p1[c], in1[c], dt);
  if (comps == 4) {
    const glm::quat q = det_normalize(glm::quat(r[3], r[0], r[1], r[2]));
    r[0] = q.x;
    r[1] = q.y;
    r[2] = q.z;
    r[3] = q.w;
  }
  std::memcpy(out, r, sizeof(float) * static_cast<std::size_t>(comps));
}

float* target_of(Transform& node, TrackTarget target) {
  switch (target) {
    case TrackTarget::kTranslation:
      return &node.translation.x;
    case TrackTarget::kRotation:
      return &node.rotation.x;  // glm stores x, y, z, w
    case TrackTarget::kScale:
      return &node.scale.x;
  }
  return &node.translation.x;
}

}  // namespace

bool SampleJob::Validate() const {
  if (skeleton == nullptr || clip == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  if (skeleton->rest.size() != nodes || output.size() != nodes) return false;
  if (cursor.size() != clip->tracks.size()) return false;
  if (cursor.data() == nullptr && !cursor.empty()) return false;
  // Bounds of every track, so Run() cannot read outside the clip whatever the clip holds
  // (Clip::validate checks the rest: ordering, finiteness, unit rotations).
  const uint64_t time_count = clip->times.size();
  const uint64_t value_count = clip->values.size();
  for (const Track& track : clip->tracks) {
    if (track.node >= nodes || track.key_count == 0) return false;
    if (static_cast<uint8_t>(track.target) > static_cast<uint8_t>(TrackTarget::kScale)) return false;
    if (static_cast<uint8_t>(track.interpolation) >
        static_cast<uint8_t>(Interpolation::kCubicSpline))
      return false;
    const uint64_t per_key = static_cast<uint64_t>(track.components()) *
                             (track.interpolation == Interpolation::kCubicSpline ? 3u : 1u);
    if (uint64_t{track.times_offset} + track.key_count > time_count) return false;
    if (uint64_t{track.values_offset} + per_key * track.key_count > value_count) return false;
  }
  return true;
}

bool SampleJob::Run() const {
  if (!Validate()) return false;
  const float t = seconds_from_us(time_us);
  std::copy(skeleton->rest.begin(), skeleton->rest.end(), output.begin());
  const std::size_t track_count = clip->tracks.size();
  for (std::size_t i = 0; i < track_count; ++i) {
    const Track& track = clip->tracks[i];
    sample_track(track, *clip, t, cursor[i], target_of(output[track.node], track.target));
  }
  return true;
}

}  // namespace posecast
