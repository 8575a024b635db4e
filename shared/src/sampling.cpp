#include "posecast/sampling.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "posecast/det_math.h"
#include "slerp_lanes.h"

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

// The canonical lookup: std::upper_bound gives the first key strictly after t. Out of line:
// the cursor makes it the rare path.
[[gnu::noinline]] KeyLookup search_key(const float* times, uint32_t n, float t) {
  const float* first_after = std::upper_bound(times, times + n, t);
  const auto after = static_cast<uint32_t>(first_after - times);
  if (after == 0) return {0u, KeyPlace::kBefore};
  if (after == n) return {n - 1u, KeyPlace::kAfter};
  return {after - 1u, KeyPlace::kBetween};
}

// Checks the cursor's key and the next one (forward playback at a tick shorter than the key
// spacing), else searches. The hint is untrusted: any value is safe.
[[gnu::always_inline]] inline KeyLookup find_key(const float* times, uint32_t n, float t,
                                                 uint32_t hint) {
  if (hint < n && n - hint > 2u) {  // hint + 2 < n, without overflow for a garbage hint
    // The usual case, one predictable branch: t in [times[hint], times[hint + 2]). Whether it
    // crossed times[hint + 1] flips from tick to tick, so it is added rather than branched on.
    if (times[hint] <= t && t < times[hint + 2u]) {
      return {hint + (t >= times[hint + 1u] ? 1u : 0u), KeyPlace::kBetween};
    }
  } else if (hint < n && times[hint] <= t) {
    // Within the last two keys.
    if (hint + 1u == n) return {hint, KeyPlace::kAfter};
    if (t < times[hint + 1u]) return {hint, KeyPlace::kBetween};
    return {hint + 1u, KeyPlace::kAfter};
  }
  return search_key(times, n, t);
}

// Cubic Hermite basis weights, in one fixed evaluation order (see hermite()).
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

// LINEAR rotations waiting to be slerped, eight lanes at a time (slerp_lanes.h,
// bit-identical to det_key_slerp). Queued rather than slerped one by one so that independent
// slerps sit next to each other for the CPU to overlap. Lives in Run()'s stack frame: no
// allocation. Everything is inlined into sample_tracks (POSECAST_INLINE), so it is compiled
// for each of that function's target clones.
class SlerpQueue {
 public:
  // key0: (x, y, z, w) of the key before t; c, theta: its key pair's det_key_slerp_terms;
  // s in [0, 1); out: the node's rotation.
  POSECAST_INLINE void add(const float* key0, detail::Float4 c, float theta, float s, float* out) {
    key0_[size_] = detail::load4(key0);
    c_[size_] = c;
    theta_[size_] = theta;
    s_[size_] = s;
    out_[size_] = out;
    if (++size_ == kCapacity) flush_full();
  }

  // Slerps and stores a full queue: kCapacity / kLanes groups of eight, no padding.
  POSECAST_INLINE void flush_full() {
    for (int first = 0; first < kCapacity; first += kLanes) slerp_group8(first, kLanes);
    size_ = 0;
  }

  // Slerps and stores everything queued: groups of eight, and a last group of one to four
  // four lanes wide (Fox: 20 = 8 + 8 + 4), half the work of eight. Lane i does the same
  // operations either way (slerp_lanes is one template), so the bits do not depend on it.
  POSECAST_INLINE void flush() {
    const int whole = size_ - size_ % kLanes;  // entries in full groups of eight
    const int left = size_ - whole;
    const int padded = left == 0 ? size_ : whole + (left <= 4 ? 4 : kLanes);
    // Lanes past the end of the last group slerp identity to identity (dropped): defined
    // values rather than stale ones.
    for (int i = size_; i < padded; ++i) {
      key0_[i] = detail::Float4{0.0f, 0.0f, 0.0f, 1.0f};
      c_[i] = detail::Float4{0.0f, 0.0f, 0.0f, 0.0f};
      theta_[i] = 0.0f;
      s_[i] = 0.0f;
    }
    for (int first = 0; first < whole; first += kLanes) slerp_group8(first, kLanes);
    if (left > 4) {
      slerp_group8(whole, left);
    } else if (left > 0) {
      slerp_group4(whole, left);
    }
    size_ = 0;
  }

 private:
  // Slerps queue entries [first, first + 8) (padded) and stores the first `count` of them.
  POSECAST_INLINE void slerp_group8(int first, int count) {
    const detail::QuatLanes<detail::Float8> q = detail::key_slerp_lanes(
        detail::rows_to_lanes8(key0_ + first), detail::rows_to_lanes8(c_ + first),
        detail::load8(theta_ + first), detail::load8(s_ + first));
    detail::Float4 rows[kLanes];
    detail::lanes8_to_rows(q, rows);
    for (int i = 0; i < count; ++i) detail::store4(out_[first + i], rows[i]);
  }

  // The same for entries [first, first + 4) (padded), four lanes wide.
  POSECAST_INLINE void slerp_group4(int first, int count) {
    const detail::QuatLanes<detail::Float4> q = detail::key_slerp_lanes(
        detail::transpose4(key0_ + first), detail::transpose4(c_ + first),
        detail::load4(theta_ + first), detail::load4(s_ + first));
    const detail::Float4 lanes[4] = {q.x, q.y, q.z, q.w};
    const detail::QuatLanes<detail::Float4> rows = detail::transpose4(lanes);
    const detail::Float4 row[4] = {rows.x, rows.y, rows.z, rows.w};
    for (int i = 0; i < count; ++i) detail::store4(out_[first + i], row[i]);
  }

  static constexpr int kLanes = 8;
  // A multiple of kLanes. 32 holds every rotation track of a typical character clip (Fox: 20)
  // so all its slerps are flushed once, at the end: a flush in mid-clip would wait on the
  // queue's freshly stored rows and cut the independent groups the CPU can overlap.
  static constexpr int kCapacity = 32;

  detail::Float4 key0_[kCapacity];
  detail::Float4 c_[kCapacity];
  float theta_[kCapacity];
  float s_[kCapacity];
  float* out_[kCapacity];
  int size_ = 0;
};

// Floats per key by [TrackTarget][Interpolation]: 3 or 4 components, three elements (in-tangent,
// value, out-tangent) per CUBICSPLINE key.
constexpr uint8_t kFloatsPerKey[3][3] = {{3, 3, 9}, {4, 4, 12}, {3, 3, 9}};
static_assert(static_cast<int>(TrackTarget::kRotation) == 1 &&
              static_cast<int>(Interpolation::kCubicSpline) == 2);

// Float offset of each TrackTarget inside a Transform (translation, rotation x y z w, scale).
constexpr std::size_t kTargetOffset[3] = {0, 3, 7};
static_assert(offsetof(Transform, rotation) == 3 * sizeof(float));
static_assert(offsetof(Transform, scale) == 7 * sizeof(float));
static_assert(offsetof(glm::quat, x) == 0 && offsetof(glm::quat, w) == 3 * sizeof(float),
              "rotations are stored and written as (x, y, z, w)");

// The CUBICSPLINE value between keys k and k+1 (each key: in-tangent, value, out-tangent).
void sample_cubic(const float* key0, int comps, float s, float dt, float* out) {
  const HermiteWeights w = hermite_weights(s);
  const float* p0 = key0 + comps;
  const float* out0 = key0 + 2 * comps;  // out-tangent of key k
  const float* in1 = key0 + 3 * comps;   // in-tangent of key k+1
  const float* p1 = key0 + 4 * comps;
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

// Queues the slerp of the key pair (key0, key1) starting at key `k` with its
// det_key_slerp_terms: loaded from the clip's table when it has one (`slerp_terms`: the
// track's), else computed (the same bits: Clip::validate checks the table).
POSECAST_INLINE void queue_key_slerp(const float* slerp_terms, uint32_t k, const float* key0,
                                     const float* key1, float s, float* out, SlerpQueue& slerps) {
  if (slerp_terms != nullptr) {
    const float* terms = slerp_terms + kSlerpTermsPerValue * 4 * std::size_t{k};
    slerps.add(key0, detail::load4(terms), terms[4], s, out);
    return;
  }
  const KeySlerpTerms terms = det_key_slerp_terms(glm::quat(key0[3], key0[0], key0[1], key0[2]),
                                                  glm::quat(key1[3], key1[0], key1[1], key1[2]));
  slerps.add(key0, detail::Float4{terms.c[0], terms.c[1], terms.c[2], terms.c[3]}, terms.theta,
             s, out);
}

// Where t falls on one timeline: the key, the key times around t and the interpolation
// parameter s = (t - t0) / (t1 - t0) (t1 == t0 and s == 0 unless at.place is kBetween).
// Looked up and divided once per timeline, shared by its tracks: every track's own lookup and
// division would give the same bits.
struct KeyInterval {
  KeyLookup at;
  float t0, t1, s;
};

POSECAST_INLINE KeyInterval key_interval(const float* times, uint32_t n, float t, uint32_t hint) {
  const KeyLookup at = find_key(times, n, t, hint);
  const float t0 = times[at.key];
  if (at.place != KeyPlace::kBetween) return {at, t0, t0, 0.0f};
  const float t1 = times[at.key + 1u];
  return {at, t0, t1, (t - t0) / (t1 - t0)};
}

// Samples one track of `Comps` floats per value (3: translation/scale, 4: rotation) at t into
// `out`, given where t falls on the track's timeline (`at`, from find_key); LINEAR rotations
// between two keys are queued on `slerps` instead.
// `slerp_terms`: the track's Clip::slerp_terms (at kSlerpTermsPerValue times the offset of
// `values`), or null when the clip has none.
template <int Comps>
POSECAST_INLINE void sample_track(const Track& track, const KeyInterval& interval,
                                  const float* values, const float* slerp_terms, float* out,
                                  SlerpQueue& slerps) {
  const KeyLookup at = interval.at;
  constexpr std::size_t kBytes = sizeof(float) * Comps;
  if (track.interpolation == Interpolation::kCubicSpline) {
    // Three elements per key; the value is the middle one.
    const float* key0 = values + std::size_t{at.key} * (3 * Comps);
    if (at.place != KeyPlace::kBetween) {
      std::memcpy(out, key0 + Comps, kBytes);
      return;
    }
    sample_cubic(key0, Comps, interval.s, interval.t1 - interval.t0, out);
    return;
  }
  const float* key0 = values + std::size_t{at.key} * Comps;
  if (at.place != KeyPlace::kBetween || track.interpolation == Interpolation::kStep) {
    std::memcpy(out, key0, kBytes);
    return;
  }
  const float s = interval.s;
  const float* key1 = key0 + Comps;
  if constexpr (Comps == 4) {
    queue_key_slerp(slerp_terms, at.key, key0, key1, s, out, slerps);
  } else {
    const glm::vec3 v =
        det_lerp(glm::vec3(key0[0], key0[1], key0[2]), glm::vec3(key1[0], key1[1], key1[2]), s);
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
  }
}

}  // namespace

bool SampleJob::Validate() const {
  if (skeleton == nullptr || clip == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  if (skeleton->rest.size() != nodes || output.size() != nodes) return false;
  if (cursor.size() != clip->tracks.size()) return false;
  // Run() reads the table at the offsets of `values` whenever it is not empty.
  if (!clip->slerp_terms.empty() &&
      clip->slerp_terms.size() != kSlerpTermsPerValue * clip->values.size()) {
    return false;
  }
  if (assets_validated) return true;  // Clip::validate checked every bound below
  // Bounds of the rotation blocks and loose tracks (Clip::validate checks that they are the
  // derived ones; here only that Run() stays inside the clip, the cursors and the output).
  const std::size_t track_count = clip->tracks.size();
  for (const uint32_t i : clip->loose_tracks) {
    if (i >= track_count) return false;
  }
  for (const RotationBlock& block : clip->rotation_blocks) {
    if (block.count == 0 || block.count > 8 || block.key_count < 2) return false;
    if (uint64_t{block.times_offset} + block.key_count > clip->times.size()) return false;
    if (uint64_t{block.lanes_offset} + uint64_t{block.key_count} * kRotationBlockStride >
        clip->rotation_lanes.size()) {
      return false;
    }
    for (std::size_t lane = 0; lane < block.count; ++lane) {
      if (block.tracks[lane] >= track_count || block.nodes[lane] >= nodes) return false;
    }
  }
  // Bounds of every track, so Run() cannot read or write outside the clip and the output
  // whatever the clip holds (Clip::validate checks the rest: ordering, finiteness, unit
  // rotations).
  const uint64_t time_count = clip->times.size();
  const uint64_t value_count = clip->values.size();
  for (const Track& track : clip->tracks) {
    // Floats per key for (target, interpolation); 0 marks values outside the enums.
    const auto target = static_cast<uint8_t>(track.target);
    const auto interpolation = static_cast<uint8_t>(track.interpolation);
    const uint64_t floats_per_key =
        target < 3 && interpolation < 3 ? kFloatsPerKey[target][interpolation] : 0u;
    if (track.node >= nodes || track.key_count == 0 || floats_per_key == 0) return false;
    if (uint64_t{track.times_offset} + track.key_count > time_count) return false;
    if (uint64_t{track.values_offset} + floats_per_key * track.key_count > value_count)
      return false;
  }
  return true;
}

namespace {

// The previous timeline looked up and where t fell on it. Tracks and blocks that share a
// timeline (the same times_offset and key_count: the importer stores identical key times
// once) get the same lookup without repeating it: find_key's result is a pure function of
// (times, t).
class TimelineCache {
 public:
  POSECAST_INLINE const KeyInterval& at(const float* times, uint32_t offset, uint32_t count,
                                        float t, uint32_t hint) {
    if (offset != offset_ || count != count_) {
      interval_ = key_interval(times + offset, count, t, hint);
      offset_ = offset;
      count_ = count;
    }
    return interval_;
  }

 private:
  uint32_t offset_ = 0;
  uint32_t count_ = 0;  // 0: none yet (every track has >= 1 key)
  KeyInterval interval_{{0u, KeyPlace::kBefore}, 0.0f, 0.0f, 0.0f};
};

// One lane group of a RotationBlock (eight floats), `V` wide (the first four for a Float4).
template <class V>
POSECAST_INLINE V load_lanes(const float* lanes) {
  if constexpr (sizeof(V) == sizeof(detail::Float8)) {
    return detail::load8(lanes);
  } else {
    return detail::load4(lanes);
  }
}

// The four rotation lanes (x, y, z, w) of one key of a RotationBlock (or of its c), `V` wide.
template <class V>
POSECAST_INLINE detail::QuatLanes<V> load_block_lanes(const float* key) {
  return {load_lanes<V>(key), load_lanes<V>(key + 8), load_lanes<V>(key + 16),
          load_lanes<V>(key + 24)};
}

// Slerps the lanes of one RotationBlock at `interval` (the block's timeline) into rows[lane]
// as (x, y, z, w): lane by lane det_key_slerp's bits (slerp_lanes.h), or the key's value as
// is when t is outside the keys.
template <class V>
POSECAST_INLINE void block_rows(const float* key0, const KeyInterval& interval,
                                detail::Float4* rows) {
  const detail::QuatLanes<V> a = load_block_lanes<V>(key0);
  detail::QuatLanes<V> q = a;
  if (interval.at.place == KeyPlace::kBetween) {
    q = detail::key_slerp_lanes(a, load_block_lanes<V>(key0 + 32), load_lanes<V>(key0 + 64),
                                detail::splat_as<V>(interval.s));
  }
  if constexpr (sizeof(V) == sizeof(detail::Float8)) {
    detail::lanes8_to_rows(q, rows);
  } else {
    const detail::Float4 lanes[4] = {q.x, q.y, q.z, q.w};
    const detail::QuatLanes<detail::Float4> r = detail::transpose4(lanes);
    rows[0] = r.x;
    rows[1] = r.y;
    rows[2] = r.z;
    rows[3] = r.w;
  }
}

// Samples the rotation tracks of one block into their nodes and moves their cursors.
POSECAST_INLINE void sample_block(const Clip& clip, const RotationBlock& block, float t,
                                  TimelineCache& timelines, uint32_t* cursor, Transform* output) {
  const KeyInterval& interval = timelines.at(clip.times.data(), block.times_offset,
                                             block.key_count, t, cursor[block.tracks[0]]);
  const float* key0 = clip.rotation_lanes.data() + block.lanes_offset +
                      std::size_t{interval.at.key} * kRotationBlockStride;
  detail::Float4 rows[8];
  // A block of four or fewer tracks (Fox: 20 rotations = 8 + 8 + 4) takes four lanes, half
  // the work; lane i does the same operations either way, so the bits do not depend on it.
  if (block.count <= 4) {
    block_rows<detail::Float4>(key0, interval, rows);
  } else {
    block_rows<detail::Float8>(key0, interval, rows);
  }
  for (int lane = 0; lane < block.count; ++lane) {
    cursor[block.tracks[static_cast<std::size_t>(lane)]] = interval.at.key;
    detail::store4(reinterpret_cast<float*>(&output[block.nodes[static_cast<std::size_t>(lane)]]) +
                       kTargetOffset[1],
                   rows[lane]);
  }
}

// Samples track `i` (any kind) through its own values.
POSECAST_INLINE void sample_loose_track(const Clip& clip, std::size_t i, float t,
                                        const float* slerp_terms, TimelineCache& timelines,
                                        uint32_t* cursor, Transform* output, SlerpQueue& slerps) {
  const Track& track = clip.tracks[i];
  const KeyInterval& interval =
      timelines.at(clip.times.data(), track.times_offset, track.key_count, t, cursor[i]);
  cursor[i] = interval.at.key;
  const float* values = clip.values.data() + track.values_offset;
  float* node = reinterpret_cast<float*>(&output[track.node]);
  if (track.target == TrackTarget::kRotation) {
    sample_track<4>(track, interval, values,
                    slerp_terms == nullptr
                        ? nullptr
                        : slerp_terms + kSlerpTermsPerValue * track.values_offset,
                    node + kTargetOffset[1], slerps);
  } else {
    sample_track<3>(track, interval, values, nullptr,
                    node + kTargetOffset[static_cast<uint8_t>(track.target)], slerps);
  }
}

// Run()'s loop over the tracks, after validation and the rest-pose copy: the clip's rotation
// blocks, then its loose tracks (every track when the blocks are not derived).
POSECAST_HOT_CLONES
void sample_tracks(const Clip& clip, float t, uint32_t* cursor, Transform* output) {
  // Validate() checked the table is empty or exactly kSlerpTermsPerValue times `values`.
  const float* slerp_terms = clip.slerp_terms.empty() ? nullptr : clip.slerp_terms.data();
  TimelineCache timelines;
  SlerpQueue slerps;
  for (const RotationBlock& block : clip.rotation_blocks) {
    sample_block(clip, block, t, timelines, cursor, output);
  }
  if (clip.rotation_blocks.empty() && clip.loose_tracks.empty()) {
    for (std::size_t i = 0; i < clip.tracks.size(); ++i) {
      sample_loose_track(clip, i, t, slerp_terms, timelines, cursor, output, slerps);
    }
  } else {
    for (const uint32_t i : clip.loose_tracks) {
      sample_loose_track(clip, i, t, slerp_terms, timelines, cursor, output, slerps);
    }
  }
  slerps.flush();
}

}  // namespace

bool same_clip_fields(const Clip& clip, const Clip& other) {
  return !clip.field_keys.empty() && clip.field_keys == other.field_keys;
}

bool SampleJob::Run() const {
  if (!Validate()) return false;
  if (!output_holds_base) std::copy(skeleton->rest.begin(), skeleton->rest.end(), output.begin());
  sample_tracks(*clip, seconds_from_us(time_us), cursor.data(), output.data());
  return true;
}

}  // namespace posecast
