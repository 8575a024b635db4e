#pragma once
// Clip: the immutable, shared key data of one glTF animation, bound to one Skeleton.
// Per-entity playback state (cursors, time) lives elsewhere (sampling.h); a Clip is never copied
// per entity.

#include <array>
#include <cstddef>
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

// Up to eight LINEAR rotation tracks of one clip that share a timeline, stored key-major as
// lanes in Clip::rotation_lanes so that one sample reads a few contiguous cache lines and
// slerps the eight rotations as lanes, with no transposes on the way in. Derived data
// (Clip::derive_rotation_blocks), never edited by hand.
struct RotationBlock {
  uint32_t times_offset = 0;  // the tracks' shared timeline in Clip::times
  uint32_t key_count = 0;     // its keys, >= 2
  // First float in Clip::rotation_lanes; the block holds key_count * kRotationBlockStride
  // floats: for key k, at k * kRotationBlockStride, eight x, eight y, eight z, eight w (lane
  // i: track tracks[i]'s key k), then the key pair (k, k + 1)'s det_key_slerp_terms: eight
  // each of c's x, y, z, w, then eight theta. Lanes past `count` hold the identity rotation,
  // and they and the terms after the last key hold equal-keys terms (c = 0, theta = 0).
  uint32_t lanes_offset = 0;
  uint8_t count = 0;                   // lanes in use, 1..8
  std::array<uint16_t, 8> tracks{};    // lane -> index in Clip::tracks
  std::array<uint16_t, 8> nodes{};     // lane -> that track's skeleton node
};
inline constexpr uint32_t kRotationBlockStride = 72;  // floats per key in a RotationBlock
// Clip::slerp_terms holds this many floats per float of Clip::values (8 per rotation key).
inline constexpr std::size_t kSlerpTermsPerValue = 2;

// A named moment of a clip: a footstep, a sound, a hit (docs/events.md). The World emits an
// event each time a playing clip crosses it (sim/world.h, World::last_tick_events). Markers
// come from the rig config's `events` or the glTF animation's `extras.posecast_events`.
struct ClipMarker {
  std::string name;          // non-empty, at most kMaxMarkerNameBytes, unique within the clip
  int64_t time_us = 0;       // 0..Clip::duration_us
  int64_t duration_us = 0;   // >= 0: how long the moment lasts (informative, carried along)
  bool operator==(const ClipMarker&) const = default;
};
inline constexpr std::size_t kMaxClipMarkers = 256;
inline constexpr std::size_t kMaxMarkerNameBytes = 64;

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
  // part of det_key_slerp (det_key_slerp_terms: c's x, y, z, w, then theta, then three
  // zeros) of key pair k (keys k and k + 1), at kSlerpTermsPerValue * (values_offset + 4 * k),
  // so the sampler does no arc tangent, square root or division per key pair and tick; other
  // slots are 0. Either empty (not derived: the sampler computes the terms on every sample,
  // same bits, much slower) or kSlerpTermsPerValue * values.size() floats exactly as
  // derive_slerp_terms() writes them (validate() checks it). The importer derives them.
  std::vector<float> slerp_terms;

  // Fills slerp_terms from tracks and values. Call after the last edit of either; reads only
  // within the bounds validate() checks (tracks outside `values` are skipped).
  void derive_slerp_terms();

  // Derived from `tracks` and `values`, never edited by hand: every LINEAR rotation track with
  // two or more keys, grouped by timeline (times_offset, key_count), each timeline's tracks
  // in track order, in blocks of up to eight (RotationBlock); the sampler reads these instead
  // of the tracks' own values.
  // `loose_tracks`: every other track's index, ascending. Either all three empty (not
  // derived: the sampler reads every track from `values`, same bits, slower) or exactly as
  // derive_rotation_blocks() writes them (validate() checks it). The importer derives them.
  std::vector<RotationBlock> rotation_blocks;
  std::vector<float> rotation_lanes;
  std::vector<uint32_t> loose_tracks;

  // Fills rotation_blocks, rotation_lanes and loose_tracks from tracks and values. Call after
  // the last edit of either; reads only within the bounds validate() checks (tracks outside
  // `values` or `times` stay loose). Allocates; not for a hot path.
  void derive_rotation_blocks();

  // Derived from `tracks`, never edited by hand: (node << 2) | target of every track, in track
  // order (so sorted): the fields the clip writes. Either empty (not derived) or exactly as
  // derive_field_keys() writes them (validate() checks it). The importer derives them. Two
  // clips with equal keys write the same fields (same_clip_fields, sampling.h).
  std::vector<uint32_t> field_keys;

  // Fills field_keys from tracks. Call after the last edit of tracks.
  void derive_field_keys();

  // Sorted by (time_us, name): a clip's markers in the order forward playback meets them.
  std::vector<ClipMarker> markers;
  // Checks the invariants above against the skeleton the clip is bound to.
  Status validate(const Skeleton& skeleton) const;
};

}  // namespace posecast
