#pragma once
// Integer time for the animator (docs/determinism.md): tick boundaries in microseconds, clip
// phases in microseconds * 2^16, playback speed in signed 16.16 fixed point. Every operation
// here is exact integer arithmetic, so no rounding accumulates across ticks and every build
// computes the same clip times.

#include <cstdint>

namespace posecast::sim {

// Playback speed, signed 16.16 fixed point: 65536 is 1x, -32768 is -0.5x.
using SpeedQ16 = int32_t;
inline constexpr SpeedQ16 kSpeedOne = 1 << 16;

// A clip phase: microseconds * 2^16. Advancing by dt microseconds at speed s adds dt * s exactly.
inline constexpr int kPhaseFractionBits = 16;

// Longest clip the animator plays (about 19 hours); it keeps every phase product inside int64.
inline constexpr int64_t kMaxClipDurationUs = int64_t{1} << 36;

// How a clip's time continues past its ends.
enum class WrapMode : uint8_t {
  kLoop = 0,      // period = duration; time duration shows as 0
  kClamp = 1,     // holds the first / last key
  kPingPong = 2,  // forwards then backwards; period = 2 * duration
};
inline constexpr uint8_t kWrapModeCount = 3;
const char* to_string(WrapMode mode);

// Microseconds from tick 0 to the start of `tick` at `rate_hz` ticks per second:
// floor(tick * 1e6 / rate_hz), without overflow for any tick below 2^63 / 1e6.
// Tick lengths therefore alternate (16666 / 16667 us at 60 Hz) and never drift.
// Precondition: rate_hz > 0.
inline int64_t tick_start_us(uint64_t tick, uint32_t rate_hz) {
  const uint64_t whole = tick / rate_hz;
  const uint64_t part = tick % rate_hz;
  return static_cast<int64_t>(whole * 1000000u + (part * 1000000u) / rate_hz);
}

// Length of tick `tick` (from its start to the next tick's start), in microseconds.
inline int64_t tick_duration_us(uint64_t tick, uint32_t rate_hz) {
  return tick_start_us(tick + 1, rate_hz) - tick_start_us(tick, rate_hz);
}

// Length of one wrap cycle in phase units: duration (loop, clamp) or 2 * duration (ping-pong).
// Precondition: 0 <= duration_us <= kMaxClipDurationUs.
inline int64_t cycle_length(int64_t duration_us, WrapMode mode) {
  const int64_t period = duration_us << kPhaseFractionBits;
  return mode == WrapMode::kPingPong ? 2 * period : period;
}

// Brings a phase into its wrap cycle: [0, cycle) for loop and ping-pong (floored modulo, so
// negative phases wrap to the end), [0, cycle] for clamp. A zero-length clip keeps phase 0.
inline int64_t wrap_phase(int64_t phase, int64_t duration_us, WrapMode mode) {
  const int64_t cycle = cycle_length(duration_us, mode);
  if (cycle == 0) return 0;
  if (mode == WrapMode::kClamp) return phase < 0 ? 0 : (phase > cycle ? cycle : phase);
  // A tick moves a phase by less than a cycle nearly always: one comparison and at most one
  // subtraction or addition then give the modulo's result without a 64-bit division.
  if (phase >= 0 && phase < cycle) return phase;
  if (phase >= cycle && phase - cycle < cycle) return phase - cycle;
  if (phase < 0 && phase + cycle >= 0) return phase + cycle;
  int64_t r = phase % cycle;
  if (r < 0) r += cycle;
  return r;
}

// The phase after `dt_us` microseconds at `speed`, wrapped. Exact: no rounding at all.
// Preconditions: phase already wrapped, 0 <= dt_us <= 2^31.
inline int64_t advance_phase(int64_t phase, int64_t dt_us, SpeedQ16 speed, int64_t duration_us,
                             WrapMode mode) {
  return wrap_phase(phase + dt_us * speed, duration_us, mode);
}

// The clip-local time to sample for a wrapped phase, in whole microseconds (rounded down).
inline int64_t sample_time_us(int64_t phase, int64_t duration_us, WrapMode mode) {
  if (mode == WrapMode::kPingPong) {
    const int64_t period = duration_us << kPhaseFractionBits;
    if (phase > period) phase = 2 * period - phase;
  }
  return phase >> kPhaseFractionBits;
}

// The phase at the same normalised position (phase / cycle) in another cycle, rounded down:
// how a phase-synced crossfade starts its target clip. A zero-length source cycle gives 0.
int64_t rescale_phase(int64_t phase, int64_t from_cycle, int64_t to_cycle);

}  // namespace posecast::sim
