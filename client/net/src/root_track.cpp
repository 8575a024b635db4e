#include "posecast/client/root_track.h"

#include <algorithm>

namespace posecast::client {
namespace {

using protocol::lerp_root;

float wrap_angle(float a) { return protocol::wrap_root_angle(a); }

// The held root of `ref`, moved on by its held velocity over `ticks` (fractional) ticks.
protocol::RootValue dead_reckoned(const protocol::QuantizedRoot& held, double ticks) {
  protocol::RootValue v = protocol::dequantize_root(held);
  const double per_tick = 1.0 / protocol::kRootVelocityScale;
  const double position = per_tick * static_cast<double>(protocol::kRootStep) * ticks;
  const double yaw = per_tick * (2.0 * 3.141592653589793 / protocol::kRootYawCodesPerTurn) * ticks;
  v.x += static_cast<float>(held.vx * position);
  v.y += static_cast<float>(held.vy * position);
  v.z += static_cast<float>(held.vz * position);
  v.yaw = wrap_angle(v.yaw + static_cast<float>(held.vyaw * yaw));
  return v;
}

protocol::RootValue difference(const protocol::RootValue& a, const protocol::RootValue& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z, wrap_angle(a.yaw - b.yaw)};
}

}  // namespace

bool RootTrack::present(const SampleWindow& window, int64_t render_us, const PresentSettings& settings,
                        uint32_t tick_rate_hz) {
  const SampleRef& before = window.before;
  const SampleRef& after = window.after;
  if (!before && !after) return false;
  protocol::RootValue target;
  PresentMode mode = PresentMode::kNone;
  if (!before) {
    target = protocol::dequantize_root(after.sample->quantized.root);
    mode = PresentMode::kHold;
  } else if (render_us == before.time_us) {
    target = protocol::dequantize_root(before.sample->quantized.root);
    mode = PresentMode::kExact;
  } else if (after) {
    const float t = protocol::root_lerp_fraction(before.time_us, after.time_us, render_us);
    target = lerp_root(protocol::dequantize_root(before.sample->quantized.root),
                       protocol::dequantize_root(after.sample->quantized.root), t);
    mode = PresentMode::kInterpolate;
  } else {
    const int64_t ahead_us = render_us - before.time_us;
    const int64_t used_us = std::min(ahead_us, settings.max_extrapolation_us);
    target = dead_reckoned(before.sample->quantized.root,
                           static_cast<double>(used_us) * tick_rate_hz / 1e6);
    mode = ahead_us > settings.max_extrapolation_us ? PresentMode::kStalled : PresentMode::kExtrapolate;
  }
  // A jump in source: start fading out the difference from what was shown.
  const bool was_extrapolating = mode_ == PresentMode::kExtrapolate || mode_ == PresentMode::kStalled;
  const bool is_extrapolating = mode == PresentMode::kExtrapolate || mode == PresentMode::kStalled;
  if (mode_ != PresentMode::kNone && ((was_extrapolating && !is_extrapolating) || render_us < last_render_us_) &&
      settings.convergence_us > 0) {
    offset_ = difference(shown_, target);
    fade_left_us_ = fade_total_us_ = settings.convergence_us;
  } else if (fade_left_us_ > 0) {
    fade_left_us_ = std::max<int64_t>(0, fade_left_us_ - std::max<int64_t>(0, render_us - last_render_us_));
  }
  shown_ = target;
  if (fade_left_us_ > 0) {
    const float k = static_cast<float>(static_cast<double>(fade_left_us_) / static_cast<double>(fade_total_us_));
    shown_ = {target.x + offset_.x * k, target.y + offset_.y * k, target.z + offset_.z * k,
              wrap_angle(target.yaw + offset_.yaw * k)};
  }
  mode_ = mode;
  last_render_us_ = render_us;
  return true;
}

}  // namespace posecast::client
