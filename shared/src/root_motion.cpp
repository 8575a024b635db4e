#include "posecast/root_motion.h"

#include <algorithm>

#include "posecast/det_math.h"

namespace posecast {

namespace {

struct RootSample {
  float x, z, yaw;
};

// The track at time t in [0, duration_us]: the stored sample at a sample time, else linear
// between the two around it.
RootSample sample_at(const RootMotionTrack& track, int64_t t) {
  const std::vector<int64_t>& times = track.times_us;
  const auto after = std::upper_bound(times.begin(), times.end(), t);
  const std::size_t k = after == times.begin() ? 0 : static_cast<std::size_t>(after - times.begin()) - 1;
  if (times[k] == t || k + 1 >= times.size()) return {track.x[k], track.z[k], track.yaw[k]};
  const float u = static_cast<float>(static_cast<double>(t - times[k]) / static_cast<double>(times[k + 1] - times[k]));
  return {track.x[k] + (track.x[k + 1] - track.x[k]) * u, track.z[k] + (track.z[k + 1] - track.z[k]) * u,
          track.yaw[k] + (track.yaw[k + 1] - track.yaw[k]) * u};
}

// From a to b, no wrap, in the frame at a.
RootMotionDelta segment(const RootMotionTrack& track, int64_t a, int64_t b) {
  const RootSample pa = sample_at(track, a);
  const RootSample pb = sample_at(track, b);
  RootMotionDelta d;
  const float mx = pb.x - pa.x, mz = pb.z - pa.z;
  if (track.turns) {
    rotate_by_yaw(-pa.yaw, mx, mz, d.dx, d.dz);
  } else {
    d.dx = mx;
    d.dz = mz;
  }
  d.dyaw = pb.yaw - pa.yaw;
  return d;
}

}  // namespace

void rotate_by_yaw(float yaw, float dx, float dz, float& out_x, float& out_z) {
  float s, c;
  det_sin_cos(yaw, s, c);
  rotate_by_sin_cos(s, c, dx, dz, out_x, out_z);
}

RootMotionDelta root_motion_between(const RootMotionTrack& track, int64_t from_us, int64_t to_us, bool looping) {
  if (!track.travels || track.times_us.empty()) return {};
  const int64_t from = std::clamp<int64_t>(from_us, 0, track.duration_us);
  const int64_t to = std::clamp<int64_t>(to_us, 0, track.duration_us);
  if (!looping || to >= from) return segment(track, from, to);
  // Tail then head; the head is in the frame at the loop's start, turned by the tail's yaw.
  const RootMotionDelta tail = segment(track, from, track.duration_us);
  const RootMotionDelta head = segment(track, 0, to);
  RootMotionDelta d;
  float hx = head.dx, hz = head.dz;
  if (track.turns) rotate_by_yaw(tail.dyaw, head.dx, head.dz, hx, hz);
  d.dx = tail.dx + hx;
  d.dz = tail.dz + hz;
  d.dyaw = tail.dyaw + head.dyaw;
  return d;
}

}  // namespace posecast
