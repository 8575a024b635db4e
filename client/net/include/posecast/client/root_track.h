#pragma once
// RootTrack: where one entity stands at a render time, from the held roots of the samples
// around it (protocol/root_coding.h), consistent with its PoseTrack: the same SampleWindow and
// render time.
//
//   render time r between two samples   -> positions interpolated linearly, yaw along the
//                                          shorter arc (kInterpolate)
//   r on a sample                       -> that sample's held root (kExact)
//   r before the first sample           -> the first sample (kHold)
//   r past the newest sample            -> the newest sample moved on by its held velocity
//                                          (the server's own dead reckoning) for at most
//                                          max_extrapolation_us (kExtrapolate), then held there
//                                          (kStalled)
// When the source jumps (an extrapolation ends, a late sample lands before r), the
// difference between what was shown and the new target fades out linearly over
// convergence_us of render time: no pop.

#include <cstdint>

#include "posecast/client/pose_track.h"
#include "posecast/protocol/root_coding.h"

namespace posecast::client {

class RootTrack {
 public:
  // The root at `render_us` from `window` (the PoseTrack's window for the same frame); false
  // (nothing shown) when the window has no sample. `tick_rate_hz` (> 0): the server's, to turn
  // held velocities (per tick) into motion over render time.
  bool present(const SampleWindow& window, int64_t render_us, const PresentSettings& settings,
               uint32_t tick_rate_hz);

  const protocol::RootValue& value() const { return shown_; }
  PresentMode mode() const { return mode_; }
  bool correcting() const { return fade_left_us_ > 0; }
  void reset() { *this = RootTrack{}; }

 private:
  protocol::RootValue shown_;
  protocol::RootValue offset_;  // shown - target when the correction started
  PresentMode mode_ = PresentMode::kNone;
  int64_t last_render_us_ = 0;
  int64_t fade_left_us_ = 0;
  int64_t fade_total_us_ = 0;
};

}  // namespace posecast::client
