#pragma once
// Clip sampling: key data is shared and immutable (Clip); what an entity owns is a
// SamplingCursor, one 32-bit key index per track, so playback state stays small.
//
// Forward playback is amortised O(1) per track: the cursor's key (or the next one) is checked
// first; any other time (a seek, a loop wrap, backwards play) falls back to binary search.
// Both paths find the same key, so the output bits never depend on the cursor's history.

#include <cstdint>
#include <span>

#include "posecast/clip.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast {

// Per-entity, per-clip playback cursor. Sized for one clip with reset(); holds no key data.
struct SamplingCursor {
  std::vector<uint32_t> keys;  // one per Clip::tracks entry
  void reset(const Clip& clip) { keys.assign(clip.tracks.size(), 0u); }
};

// Microseconds to the float seconds the key times use. Exact-rounding conversion (double
// division then one rounding to float): deterministic everywhere.
inline float seconds_from_us(int64_t us) { return static_cast<float>(static_cast<double>(us) / 1e6); }

// Samples one clip at one time into local TRS for every skeleton node.
// Time is clip-local: times before a track's first key give the first key, after the last key
// the last key (no looping here; the animator wraps time). Nodes without a track get the rest
// TRS. STEP holds the previous key; LINEAR lerps T/S and slerps R along the shortest path;
// CUBICSPLINE evaluates the Hermite spline with tangents scaled by the key interval and
// normalises rotations.
struct SampleJob {
  const Skeleton* skeleton = nullptr;
  const Clip* clip = nullptr;
  int64_t time_us = 0;
  std::span<uint32_t> cursor;    // clip->tracks.size() entries, in/out (see SamplingCursor)
  std::span<Transform> output;   // skeleton->node_count() entries, written
  // True only when the caller has checked these assets once with Skeleton::validate() and
  // Clip::validate(*skeleton) and they cannot change afterwards (the World's models are
  // immutable and validated when added). Validate() then checks only the pointers and buffer
  // sizes and skips its per-track loop: repeated work for every entity and tick. False (the
  // default) checks everything.
  bool assets_validated = false;
  // True only when `output` already holds the skeleton's rest TRS in every field this clip has
  // no track for: it was last written by a successful Run() of this same clip and skeleton
  // (at any time) and by nothing since. Run() then skips its rest-pose copy, whose result
  // would be those same bits (every track writes all of its field on every Run()). A caller
  // that cannot vouch for its buffer leaves it false (the default). sim's evaluator keeps
  // such a record per scratch buffer (EvalScratch).
  bool output_holds_base = false;

  // (A buffer last written by a Run() of another clip of the same skeleton qualifies too when
  // same_clip_fields(clip, that clip): see there.)

  // True when the pointers are set and every span has the right size. Run() checks it too.
  bool Validate() const;
  // Never allocates. Returns false (writing nothing) when Validate() fails.
  bool Run() const;
};

// True when `clip` and `other` write exactly the same fields (node, target), as their
// derived Clip::field_keys say (false when either has none). A buffer that a successful
// SampleJob::Run() of `other` wrote, and nothing since, then holds the skeleton's rest TRS in
// every field `clip` has no track for: a SampleJob of `clip` on the same skeleton may set
// output_holds_base. Clips exported from one rig often animate the same fields (Fox's three:
// 21 tracks on the same nodes). A size check and a memcmp; no allocation.
bool same_clip_fields(const Clip& clip, const Clip& other);

}  // namespace posecast
