#pragma once
// Root transforms on the wire: where an entity stands on the ground plane and which way it
// faces, quantised, predicted and coded the same way on the server and on every client
// (docs/codec.md, "Root transforms").
//
// Codes. Positions on a grid of kRootStep model units (1/8192; 0.12 mm when a unit is a metre,
// glTF's unit, and finer still for models authored in centimetres, like Fox), yaw in 1/65536
// of a turn (0.0055 degrees), wrapping. Beside them the held velocity, in 1/kRootVelocityScale
// codes per tick.
//
// Held value. What a client holds for a tick (QuantizedPose::root) is not the exact code but
// a dead-reckoned state: position, velocity and a sub-code fraction. The prediction from an
// earlier held state is position + velocity x age (predict_root). The server keeps a component
// as predicted while the prediction is within kRootTolerance codes of the exact code; otherwise
// it moves the position by whole multiples of kRootCoarse codes to within kRootCoarse / 2 of the
// exact one, and takes as velocity either the one the positions imply (the motion changed:
// a miss beyond kRootFar; the receiver derives it, no bits) or the World's measured one (a
// drift; hold_root). The held position is never further than kRootTolerance + 1/2 codes from
// the World's: 7.5 / 8192 = 0.00092 units for positions (0.92 mm when a unit is a metre),
// 0.041 degrees for yaw. The server decides the held state once per tick, against the entity's
// history entry one send interval old (the baseline of a client acking in time); every client
// receives it exactly: encode_root sends the held state minus the client's own prediction,
// zero bytes while the entity moves as predicted.
//
// Bytes (root coding version 8). Zero bytes: the held state equals the receiver's prediction.
// Otherwise a bit stream (MSB first): 4 bits "component differs" (x, y, z, yaw; never all
// zero); 1 bit "plain" (every position residual a multiple of kRootCoarse, every fraction as
// derived, every velocity implied: what a receiver with the canonical baseline gets); when not
// plain, 1 bit "aligned" (the multiples) and 1 bit "fractions derived"; 4 bits k, the
// Exp-Golomb order of the position quotients; then per flagged component: when not plain, 1
// bit "velocity implied" (implied_root_velocity; its fraction is then 0); when not aligned,
// 4 bits of remainder (b + 6, b in [-6, 6]); the position quotient a (residual =
// kRootCoarse * a + b) as an order-k Exp-Golomb magnitude and, when nonzero, a sign bit; when
// the velocity is not implied, its residual against the predicted velocity; when fractions
// are not derived, the fraction's residual (against 0 for an implied velocity, else the
// predicted fraction); these two each as a sign bit and a 5-bit length L = bit_width(|value|)
// followed by the L - 1 bits under the leading one. At most kMaxRootBytes bytes; padding bits
// are zero; one coding per value except the choice of k.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posecast/result.h"

namespace posecast::protocol {

inline constexpr float kRootStepsPerUnit = 8192.0f;
inline constexpr float kRootStep = 1.0f / kRootStepsPerUnit;
inline constexpr int32_t kRootYawCodesPerTurn = 65536;
// Held positions at most this many codes from the exact one keep their prediction; a
// correction moves the prediction by whole multiples of kRootCoarse, to within
// kRootCoarse / 2 codes of the exact one (then drifting a whole tolerance takes longest).
inline constexpr int32_t kRootTolerance = 7;
inline constexpr int32_t kRootCoarse = 13;
// Velocities are in 1/kRootVelocityScale codes per tick, within +-kMaxRootVelocity.
inline constexpr int32_t kRootVelocityScale = 256;
inline constexpr int32_t kMaxRootVelocity = (1 << 30) - 1;
// Position codes stay within +-kMaxRootCode (2^17 units, eight times the World's extent).
inline constexpr int32_t kMaxRootCode = 1 << 30;
// A record's root bytes fit in 5 bits of its size field (docs/protocol.md).
inline constexpr std::size_t kMaxRootBytes = 31;

// A held root state: position x, y, z in kRootStep units, yaw in [-32768, 32767] (1/65536
// turn), their velocities (1/kRootVelocityScale codes per tick) and the positions' fractions.
// The fractions carry the prediction's sub-code part from tick to tick (both sides compute
// them; sent only to a receiver that predicts other ones), so a steady velocity does not lose
// a rounding per prediction.
struct QuantizedRoot {
  int32_t x = 0, y = 0, z = 0, yaw = 0;
  int32_t vx = 0, vy = 0, vz = 0, vyaw = 0;
  int32_t fx = 0, fy = 0, fz = 0, fyaw = 0;  // in [0, kRootVelocityScale): 1/256 codes above x...
  bool operator==(const QuantizedRoot&) const = default;
};

// A root transform in model units and radians (yaw about +Y, 0 faces +Z).
struct RootValue {
  float x = 0, y = 0, z = 0, yaw = 0;
};

// Exact position codes of `value` (nearest step; yaw wrapped into a turn); velocities 0. False,
// `out` unchanged, when a value is not finite or a position is beyond (kMaxRootCode - 8) steps.
bool quantize_root(const RootValue& value, QuantizedRoot& out);
// Position codes -> units and radians (yaw in [-pi, pi)); + - * / only, same bits everywhere.
RootValue dequantize_root(const QuantizedRoot& root);
// Whether every code is in range (what decode_root and hold_root produce).
bool root_in_range(const QuantizedRoot& root);

// Where a frame at `at_us` lies between two roots' times `from_us` < `to_us`, as a float
// fraction (computed in double, then rounded once). With lerp_root, the one interpolation of
// held roots: a client's presented root and the server's hit-query rewind (docs/hit-queries.md)
// derive the same bits from the same held roots.
float root_lerp_fraction(int64_t from_us, int64_t to_us, int64_t at_us);
// a + (b - a) * t, yaw along the shorter arc (result wrapped to [-pi, pi)); + - * and
// comparisons only, same bits everywhere.
RootValue lerp_root(const RootValue& a, const RootValue& b, float t);
// `a` wrapped into [-pi, pi) by whole float turns (the wrap lerp_root uses).
float wrap_root_angle(float a);

// The held root a receiver has for an entity at an earlier tick, `age` ticks (> 0) before the
// record's (null: none).
struct RootReference {
  const QuantizedRoot* baseline = nullptr;
  uint32_t age = 0;
};

// The prediction both sides make: no reference -> the origin facing +Z, at rest; else the
// baseline (position and fraction) moved by its velocity x age, exactly in integers (yaw
// wrapped; positions clamped to the code range, fraction 0 there), velocities kept.
QuantizedRoot predict_root(const RootReference& reference);

// The server measures the World's velocity over the newest history entry at least this many
// ticks old (else the oldest it has): float positions far from the origin are only 1/16 unit
// apart, and a difference over a few ticks would carry that noise into every prediction.
inline constexpr uint32_t kRootVelocitySpan = 12;
// A component whose prediction missed by more than this many codes changed its motion (a turn,
// a new speed, a fade): its held velocity becomes the one its positions imply.
inline constexpr int32_t kRootFar = 24;

// The World's velocity between two exact roots `age` ticks (> 0) apart, in held units (yaw the
// shorter way round), clamped to +-kMaxRootVelocity. Positions only of the result are unset.
QuantizedRoot measure_root_velocity(const RootValue& now, const RootValue& before, uint32_t age);

// The velocity (1/kRootVelocityScale codes per tick) of `component` (0..3: x, y, z, yaw) that
// takes the reference's baseline (position and fraction) to `position` (fraction 0) in the
// reference's age, rounded, clamped to +-kMaxRootVelocity (yaw the shorter way round); 0
// without a baseline. Both sides compute it from what the receiver holds, so it costs no bits.
int32_t implied_root_velocity(const RootReference& reference, int32_t position, int component);

// The held state for the exact codes `exact` (positions) against the canonical `reference`
// (the prediction predict_root(reference)) and the World's velocity `velocity`
// (measure_root_velocity), per component: as predicted while its position is within
// kRootTolerance of exact; else the position moved by kRootCoarse * round((exact - predicted)
// / kRootCoarse) (within kRootCoarse / 2 codes of exact) and, when the prediction missed by
// more than kRootFar (and there is a baseline), the implied velocity with fraction 0, else the
// World's velocity with the predicted fraction.
QuantizedRoot hold_root(const QuantizedRoot& exact, const RootReference& reference,
                        const QuantizedRoot& velocity);

// Appends the coding of `held` against the receiver's `reference` to `out` (nothing when the
// prediction is exact). Returns the bytes appended (<= kMaxRootBytes). `held` must be in range.
std::size_t encode_root(const QuantizedRoot& held, const RootReference& reference,
                        std::vector<uint8_t>& out);

// Decodes `bytes` (a record's root bytes, possibly empty) against `reference` into `out`.
// Errors name the reason ("root: 3 bytes, an empty residual", "root: x code out of range",
// "root: bits run past the 2 bytes", "root: nonzero padding"); `out` is unspecified after one.
Status decode_root(std::span<const uint8_t> bytes, const RootReference& reference,
                   QuantizedRoot& out);

}  // namespace posecast::protocol
