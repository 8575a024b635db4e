#include "posecast/protocol/root_coding.h"

#include <bit>
#include <cmath>
#include <string>

#include "posecast/protocol/bit_io.h"

namespace posecast::protocol {
namespace {

constexpr int32_t kYawHalf = kRootYawCodesPerTurn / 2;
constexpr int32_t kMaxExactCode = kMaxRootCode - 8;
constexpr double kTwoPi = 6.283185307179586;
constexpr float kYawStep = static_cast<float>(kTwoPi / kRootYawCodesPerTurn);
constexpr uint32_t kLengthBits = 5;
constexpr uint32_t kRemainderBits = std::bit_width(static_cast<uint32_t>(kRootCoarse - 1));
constexpr int64_t kRemainderBias = kRootCoarse / 2;
// The Exp-Golomb order of a record's position quotients: 5 bits, at most kMaxOrder.
constexpr uint32_t kOrderBits = 4;
constexpr uint32_t kMaxOrder = 15;
constexpr int kComponents = 4;  // x, y, z, yaw; each with a velocity
constexpr int kYaw = 3;
const char* const kNames[kComponents] = {"x", "y", "z", "yaw"};

int32_t wrap_yaw(int64_t code) {
  const int64_t turn = kRootYawCodesPerTurn;
  int64_t r = (code + kYawHalf) % turn;
  if (r < 0) r += turn;
  return static_cast<int32_t>(r - kYawHalf);
}

// n / d rounded half away from zero (d > 0).
int64_t round_div(int64_t n, int64_t d) { return n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d); }

int64_t clamp64(int64_t v, int64_t limit) { return v > limit ? limit : (v < -limit ? -limit : v); }

// Component i's position (0..3), velocity (4..7) or fraction (8..11).
int32_t& slot_of(QuantizedRoot& r, int i) {
  int32_t* c[3 * kComponents] = {&r.x, &r.y, &r.z, &r.yaw, &r.vx, &r.vy, &r.vz, &r.vyaw, &r.fx, &r.fy, &r.fz, &r.fyaw};
  return *c[i];
}
int32_t code_of(const QuantizedRoot& r, int i) {
  const int32_t c[3 * kComponents] = {r.x, r.y, r.z, r.yaw, r.vx, r.vy, r.vz, r.vyaw, r.fx, r.fy, r.fz, r.fyaw};
  return c[i];
}

// Position a - b: wrapped for yaw, plain otherwise.
int64_t difference(int32_t a, int32_t b, int i) {
  const int64_t d = int64_t{a} - int64_t{b};
  return i == kYaw ? wrap_yaw(d) : d;
}
// A position moved by `delta`: wrapped for yaw, clamped to the exact range otherwise.
int32_t moved(int32_t base, int64_t delta, int i) {
  const int64_t v = int64_t{base} + delta;
  return i == kYaw ? wrap_yaw(v) : static_cast<int32_t>(clamp64(v, kMaxRootCode));
}

bool position_code(float v, int32_t& out) {
  if (!std::isfinite(v)) return false;
  const double code = std::floor(static_cast<double>(v) * static_cast<double>(kRootStepsPerUnit) + 0.5);
  if (code > kMaxExactCode || code < -kMaxExactCode) return false;
  out = static_cast<int32_t>(code);
  return true;
}

void write_signed(BitWriter& writer, int64_t value) {
  const uint64_t magnitude = static_cast<uint64_t>(value < 0 ? -value : value);
  const uint32_t length = static_cast<uint32_t>(std::bit_width(magnitude));
  writer.write_bit(value < 0 ? 1u : 0u);
  writer.write(length, kLengthBits);
  if (length > 1) writer.write(static_cast<uint32_t>(magnitude), length - 1);  // below the leading one
}

// Inverse of write_signed; an error text (static) for negative zero.
const char* read_signed(BitReader& reader, int64_t& value) {
  const bool negative = reader.read_bit() != 0;
  const uint32_t length = reader.read(kLengthBits);
  if (length == 0) {
    value = 0;
    return negative ? "negative zero" : nullptr;
  }
  const int64_t magnitude = (int64_t{1} << (length - 1)) | (length > 1 ? int64_t{reader.read(length - 1)} : 0);
  value = negative ? -magnitude : magnitude;
  return nullptr;
}

// Signed value as sign + order-k Exp-Golomb magnitude (no sign for zero). Magnitudes < 2^31.
void write_quotient(BitWriter& writer, int64_t value, uint32_t k) {
  const uint64_t magnitude = static_cast<uint64_t>(value < 0 ? -value : value);
  writer.write_exp_golomb(magnitude, k);
  if (magnitude != 0) writer.write_bit(value < 0 ? 1u : 0u);
}
int64_t read_quotient(BitReader& reader, uint32_t k) {
  const int64_t magnitude = static_cast<int64_t>(reader.read_exp_golomb(k));
  if (magnitude == 0) return 0;
  return reader.read_bit() != 0 ? -magnitude : magnitude;
}
uint32_t quotient_bits(int64_t value, uint32_t k) {
  const uint64_t v = static_cast<uint64_t>(value < 0 ? -value : value) + (uint64_t{1} << k);
  return 2 * static_cast<uint32_t>(std::bit_width(v) - 1) + 1 - k + (value != 0 ? 1 : 0);
}

Error root_error(int i, const char* what) { return Error{std::string("root: ") + kNames[i] + " " + what}; }

}  // namespace

bool quantize_root(const RootValue& value, QuantizedRoot& out) {
  QuantizedRoot q;
  if (!position_code(value.x, q.x) || !position_code(value.y, q.y) || !position_code(value.z, q.z)) return false;
  if (!std::isfinite(value.yaw) || std::fabs(value.yaw) > 1e6f) return false;
  const double turns = static_cast<double>(value.yaw) * (kRootYawCodesPerTurn / kTwoPi);
  q.yaw = wrap_yaw(static_cast<int64_t>(std::floor(turns + 0.5)));
  out = q;
  return true;
}

RootValue dequantize_root(const QuantizedRoot& root) {
  return RootValue{static_cast<float>(root.x) * kRootStep, static_cast<float>(root.y) * kRootStep,
                   static_cast<float>(root.z) * kRootStep, static_cast<float>(root.yaw) * kYawStep};
}

float root_lerp_fraction(int64_t from_us, int64_t to_us, int64_t at_us) {
  return static_cast<float>(static_cast<double>(at_us - from_us) / static_cast<double>(to_us - from_us));
}

float wrap_root_angle(float a) {
  constexpr float kPi = 3.14159265358979f;
  while (a >= kPi) a -= 2.0f * kPi;
  while (a < -kPi) a += 2.0f * kPi;
  return a;
}

RootValue lerp_root(const RootValue& a, const RootValue& b, float t) {
  return {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t,
          wrap_root_angle(a.yaw + wrap_root_angle(b.yaw - a.yaw) * t)};
}

bool root_in_range(const QuantizedRoot& root) {
  for (int i = 0; i < 2 * kComponents; ++i) {
    if (i == kYaw) continue;
    const int32_t c = code_of(root, i);
    if (c > kMaxRootCode || c < -kMaxRootCode) return false;
  }
  for (int i = 2 * kComponents; i < 3 * kComponents; ++i) {
    if (code_of(root, i) < 0 || code_of(root, i) >= kRootVelocityScale) return false;
  }
  return root.yaw >= -kYawHalf && root.yaw < kYawHalf;
}

QuantizedRoot predict_root(const RootReference& reference) {
  if (reference.baseline == nullptr) return QuantizedRoot{};
  QuantizedRoot out = *reference.baseline;
  for (int i = 0; i < kComponents; ++i) {
    // In 1/kRootVelocityScale codes: position and fraction plus velocity x age (< 2^43).
    const int64_t fine = int64_t{code_of(out, i + 2 * kComponents)} +
                         int64_t{code_of(out, i + kComponents)} * int64_t{reference.age};
    int64_t whole = fine / kRootVelocityScale, fraction = fine % kRootVelocityScale;
    if (fraction < 0) fraction += kRootVelocityScale, --whole;
    const int64_t position = int64_t{code_of(out, i)} + whole;
    if (i == kYaw) {
      slot_of(out, i) = wrap_yaw(position);
    } else if (position > kMaxExactCode || position < -kMaxExactCode) {
      slot_of(out, i) = static_cast<int32_t>(clamp64(position, kMaxExactCode));
      fraction = 0;
    } else {
      slot_of(out, i) = static_cast<int32_t>(position);
    }
    slot_of(out, i + 2 * kComponents) = static_cast<int32_t>(fraction);
  }
  return out;
}

QuantizedRoot measure_root_velocity(const RootValue& now, const RootValue& before, uint32_t age) {
  QuantizedRoot out;
  if (age == 0) return out;
  const double scale = static_cast<double>(kRootStepsPerUnit) * kRootVelocityScale / age;
  const auto velocity = [&](double d, double per_unit) {
    const double v = std::floor(d * per_unit + 0.5);
    return static_cast<int32_t>(v > kMaxRootVelocity ? kMaxRootVelocity : (v < -kMaxRootVelocity ? -kMaxRootVelocity : v));
  };
  out.vx = velocity(static_cast<double>(now.x) - static_cast<double>(before.x), scale);
  out.vy = velocity(static_cast<double>(now.y) - static_cast<double>(before.y), scale);
  out.vz = velocity(static_cast<double>(now.z) - static_cast<double>(before.z), scale);
  double dyaw = static_cast<double>(now.yaw) - static_cast<double>(before.yaw);
  while (dyaw >= kTwoPi / 2) dyaw -= kTwoPi;
  while (dyaw < -kTwoPi / 2) dyaw += kTwoPi;
  out.vyaw = velocity(dyaw, kRootYawCodesPerTurn / kTwoPi * kRootVelocityScale / age);
  return out;
}

int32_t implied_root_velocity(const RootReference& reference, int32_t position, int component) {
  if (reference.baseline == nullptr || reference.age == 0) return 0;
  const QuantizedRoot& b = *reference.baseline;
  // From the baseline's fine position (code and fraction) to `position` with fraction 0.
  const int64_t codes = difference(position, code_of(b, component), component);
  const int64_t fine = codes * kRootVelocityScale - code_of(b, component + 2 * kComponents);
  return static_cast<int32_t>(clamp64(round_div(fine, reference.age), kMaxRootVelocity));
}

QuantizedRoot hold_root(const QuantizedRoot& exact, const RootReference& reference, const QuantizedRoot& velocity) {
  const QuantizedRoot predicted = predict_root(reference);
  QuantizedRoot out = predicted;
  for (int i = 0; i < kComponents; ++i) {
    const int64_t e = difference(code_of(exact, i), code_of(predicted, i), i);
    if (e >= -kRootTolerance && e <= kRootTolerance) continue;
    const int32_t position = moved(code_of(predicted, i), kRootCoarse * round_div(e, kRootCoarse), i);
    slot_of(out, i) = position;
    if (reference.baseline != nullptr && (e > kRootFar || e < -kRootFar)) {
      // The motion changed (a turn, a new speed, a fade): the velocity since the baseline,
      // which the receiver derives from the positions it holds.
      slot_of(out, i + kComponents) = implied_root_velocity(reference, position, i);
      slot_of(out, i + 2 * kComponents) = 0;
    } else {
      slot_of(out, i + kComponents) = code_of(velocity, i + kComponents);
    }
  }
  return out;
}

namespace {

// What encode_root writes per record and component, decided before writing.
struct RootResidual {
  uint32_t mask = 0;                // components that differ, x first (MSB)
  bool aligned = true;              // every position residual a multiple of kRootCoarse
  bool fractions_derived = true;    // every fraction as derived
  uint32_t order = 0;               // Exp-Golomb order of the quotients
  bool implied[kComponents] = {};   // velocity implied by the positions
  int64_t position[kComponents] = {}, velocity[kComponents] = {}, fraction[kComponents] = {};
};

RootResidual residual_of(const QuantizedRoot& held, const RootReference& reference) {
  const QuantizedRoot predicted = predict_root(reference);
  RootResidual r;
  for (int i = 0; i < kComponents; ++i) {
    r.position[i] = difference(code_of(held, i), code_of(predicted, i), i);
    const int32_t v = code_of(held, i + kComponents), f = code_of(held, i + 2 * kComponents);
    const bool differs = r.position[i] != 0 || v != code_of(predicted, i + kComponents) ||
                         f != code_of(predicted, i + 2 * kComponents);
    if (!differs) continue;
    r.mask |= 1u << (kComponents - 1 - i);
    r.implied[i] = reference.baseline != nullptr && v == implied_root_velocity(reference, code_of(held, i), i);
    r.velocity[i] = r.implied[i] ? 0 : int64_t{v} - code_of(predicted, i + kComponents);
    r.fraction[i] = int64_t{f} - (r.implied[i] ? 0 : code_of(predicted, i + 2 * kComponents));
    if (r.position[i] % kRootCoarse != 0) r.aligned = false;
    if (r.fraction[i] != 0) r.fractions_derived = false;
  }
  // The order that codes the quotients in the fewest bits.
  uint32_t best_bits = ~0u;
  for (uint32_t k = 0; k <= kMaxOrder; ++k) {
    uint32_t bits = 0;
    for (int i = 0; i < kComponents; ++i) {
      if (r.mask & (1u << (kComponents - 1 - i))) bits += quotient_bits(round_div(r.position[i], kRootCoarse), k);
    }
    if (bits < best_bits) best_bits = bits, r.order = k;
  }
  return r;
}

}  // namespace

std::size_t encode_root(const QuantizedRoot& held, const RootReference& reference, std::vector<uint8_t>& out) {
  const RootResidual r = residual_of(held, reference);
  if (r.mask == 0) return 0;
  const std::size_t start = out.size();
  BitWriter writer(out);
  bool all_implied = true;
  for (int i = 0; i < kComponents; ++i) {
    if ((r.mask & (1u << (kComponents - 1 - i))) != 0 && !r.implied[i]) all_implied = false;
  }
  writer.write(r.mask, kComponents);
  // The common record (a canonical receiver) in one bit: aligned, fractions derived, every
  // velocity implied.
  const bool plain = r.aligned && r.fractions_derived && all_implied;
  writer.write_bit(plain ? 1u : 0u);
  if (!plain) {
    writer.write_bit(r.aligned ? 1u : 0u);
    writer.write_bit(r.fractions_derived ? 1u : 0u);
  }
  writer.write(r.order, kOrderBits);
  for (int i = 0; i < kComponents; ++i) {
    if ((r.mask & (1u << (kComponents - 1 - i))) == 0) continue;
    const int64_t a = round_div(r.position[i], kRootCoarse);
    if (!plain) writer.write_bit(r.implied[i] ? 1u : 0u);
    if (!r.aligned) writer.write(static_cast<uint32_t>(r.position[i] - kRootCoarse * a + kRemainderBias), kRemainderBits);
    write_quotient(writer, a, r.order);
    if (!r.implied[i]) write_signed(writer, r.velocity[i]);
    if (!r.fractions_derived) write_signed(writer, r.fraction[i]);
  }
  return out.size() - start;
}

Status decode_root(std::span<const uint8_t> bytes, const RootReference& reference, QuantizedRoot& out) {
  out = predict_root(reference);
  if (bytes.empty()) return {};
  if (bytes.size() > kMaxRootBytes) {
    return Error{"root: " + std::to_string(bytes.size()) + " bytes, at most " + std::to_string(kMaxRootBytes)};
  }
  BitReader reader(bytes);
  const uint32_t mask = reader.read(kComponents);
  if (mask == 0) return Error{"root: " + std::to_string(bytes.size()) + " bytes, an empty residual"};
  const bool plain = reader.read_bit() != 0;
  const bool aligned = plain || reader.read_bit() != 0;
  const bool fractions_derived = plain || reader.read_bit() != 0;
  const uint32_t order = reader.read(kOrderBits);
  const QuantizedRoot predicted = out;
  bool all_implied = true;
  for (int i = 0; i < kComponents; ++i) {
    if ((mask & (1u << (kComponents - 1 - i))) == 0) continue;
    const bool implied = plain || reader.read_bit() != 0;
    all_implied = all_implied && implied;
    if (implied && reference.baseline == nullptr) return root_error(i, "velocity implied without a reference");
    int64_t remainder = 0;
    if (!aligned) {
      remainder = int64_t{reader.read(kRemainderBits)} - kRemainderBias;
      if (remainder > kRootCoarse - 1 - kRemainderBias) return root_error(i, "remainder out of range");
    }
    const int64_t a = read_quotient(reader, order);
    int64_t dv = 0, df = 0;
    const char* bad = nullptr;
    if (!implied) bad = read_signed(reader, dv);
    if (bad == nullptr && !fractions_derived) bad = read_signed(reader, df);
    if (reader.failed()) break;  // reported below
    if (bad != nullptr) return root_error(i, bad);
    const int64_t position = int64_t{code_of(predicted, i)} + kRootCoarse * a + remainder;
    if (i != kYaw && (position > kMaxRootCode || position < -kMaxRootCode)) return root_error(i, "code out of range");
    const int32_t held_position = i == kYaw ? wrap_yaw(position) : static_cast<int32_t>(position);
    const int64_t v = implied ? int64_t{implied_root_velocity(reference, held_position, i)}
                              : int64_t{code_of(predicted, i + kComponents)} + dv;
    if (v > kMaxRootVelocity || v < -kMaxRootVelocity) return root_error(i, "velocity out of range");
    const int64_t f = (implied ? 0 : int64_t{code_of(predicted, i + 2 * kComponents)}) + df;
    if (f < 0 || f >= kRootVelocityScale) return root_error(i, "fraction out of range");
    if (held_position == code_of(predicted, i) && v == code_of(predicted, i + kComponents) &&
        f == code_of(predicted, i + 2 * kComponents)) {
      return root_error(i, "flagged as differing, but equal");
    }
    // One coding per value: a velocity the positions imply is never coded.
    if (!implied && reference.baseline != nullptr && v == implied_root_velocity(reference, held_position, i)) {
      return root_error(i, "velocity coded although the positions imply it");
    }
    slot_of(out, i) = held_position;
    slot_of(out, i + kComponents) = static_cast<int32_t>(v);
    slot_of(out, i + 2 * kComponents) = static_cast<int32_t>(f);
  }
  if (reader.failed()) return Error{"root: bits run past the " + std::to_string(bytes.size()) + " bytes"};
  if (!plain && aligned && fractions_derived && all_implied) return Error{"root: a plain record not marked plain"};
  if (reader.bytes_consumed() != bytes.size()) {
    return Error{"root: " + std::to_string(bytes.size() - reader.bytes_consumed()) + " bytes left over"};
  }
  // Padding bits of the last byte must be zero (one coding per value).
  const std::size_t used_bits = reader.bits_consumed() % 8;
  if (used_bits != 0 && (bytes.back() & (0xFFu >> used_bits)) != 0) return Error{"root: nonzero padding"};
  return {};
}

}  // namespace posecast::protocol
