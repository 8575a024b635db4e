#pragma once
// Clip: the immutable, shared key data of one glTF animation, bound to one Skeleton.
// Per-entity playback state (cursors, time) lives elsewhere (sampling.h); a Clip is never copied
// per entity.

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/result.h"

namespace posecast {

struct Skeleton;

enum class Interpolation : uint8_t { kStep = 0, kLinear = 1, kCubicSpline = 2 };
enum class TrackTarget : uint8_t { kTranslation = 0, kRotation = 1, kScale = 2 };

const char* to_string(Interpolation interpolation);
const char* to_string(TrackTarget target);

// One animated property of one skeleton node.
struct Track {
  uint16_t node = 0;  // skeleton node index
  TrackTarget target = TrackTarget::kTranslation;
  Interpolation interpolation = Interpolation::kLinear;
  uint32_t key_count = 0;      // >= 1
  uint32_t times_offset = 0;   // first key time in Clip::times
  // First value in Clip::values. Components per key: 3 (T, S) or 4 (R, stored x, y, z, w).
  // CUBICSPLINE stores three elements per key in glTF order: in-tangent, value, out-tangent.
  // Tangents are stored as in the file (per second); the sampler scales them by the key interval.
  uint32_t values_offset = 0;

  int components() const { return target == TrackTarget::kRotation ? 4 : 3; }
};

struct Clip {
  std::string name;
  // Seconds of the last key over all samplers (glTF time 0 is the clip start): the loop period.
  // 0 for a clip whose keys are all at time 0.
  float duration_seconds = 0.0f;
  int64_t duration_us = 0;  // duration_seconds rounded to the nearest microsecond
  std::vector<Track> tracks;   // sorted by (node, target); at most one track per (node, target)
  // Per track, strictly increasing, finite, >= 0. Tracks may share a run (the same
  // times_offset and key_count): the importer stores a timeline equal to the previous
  // track's once, and the sampler then looks the key up once for both.
  std::vector<float> times;
  std::vector<float> values;   // per track, finite; rotations unit length (LINEAR/STEP)

  // Derived from `values`, never edited by hand: for each LINEAR rotation track, the t-free
  // part of det_slerp (det_slerp_terms: sign, theta, inv_sin, near) of key pair k (keys k and
  // k + 1), at values_offset + 4 * k, so the sampler does no acos, square root or division per
  // key pair and tick; other slots are 0. Either empty (not derived: the sampler computes the
  // terms on every sample, same bits, slower) or values.size() floats exactly as
  // derive_slerp_terms() writes them (validate() checks it). The importer derives them.
  std::vector<float> slerp_terms;

  // Fills slerp_terms from tracks and values. Call after the last edit of either; reads only
  // within the bounds validate() checks (tracks outside `values` are skipped).
  void derive_slerp_terms();

  // Checks the invariants above against the skeleton the clip is bound to.
  Status validate(const Skeleton& skeleton) const;
};

}  // namespace posecast
