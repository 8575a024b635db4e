// Pose codec: prediction, contexts and the two entropy stages (docs/codec.md).
//
// Range-coded stream (the wire format, docs/codec.md):
//   side stream:     adaptive bit "omitted" (its bits would all be zero)
//   reference count: adaptive bit "uses 3" (the steady state), else 2 raw bits (0..2)
//   off_layout:      adaptive bit
//   recipe:          adaptive bit "has one", then the recipe (adaptive "crossfade" and
//                    "from a frozen pose", counts, motion parameters, fade states, steady
//                    time, inputs; docs/codec.md) and
//                    adaptive "predicted from it"
//   axes:            adaptive bit "every rotation has its likely axis" (the reference's)
//   body:            for each node in order, for each coded channel (T, R, S): R first codes
//                    its axis unless the axes bit said so (adaptive "same as the reference's",
//                    else 2 raw bits), then three residuals; T and S code three residuals.
//                    A residual is one symbol of a static table in the range coder
//                    (residual_tables.h) plus its low bits in the side stream.
//   side stream:     the residuals' low bits and escapes, after the range-coded bytes and
//                    byte-reversed (range_coder.h: RawBitWriter), unless omitted.
// Bit-packed reference stream: one header byte (bits 0-1 reference count, bit 2 off_layout,
// the rest zero), then the same body with signed Exp-Golomb residuals.

#include "posecast/protocol/pose_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "posecast/protocol/bit_io.h"
#include "posecast/protocol/range_coder.h"
#include "posecast/protocol/residual_tables.h"

namespace posecast::protocol {
namespace {

// Context classes: channel (T, R, S) x how the prediction was made.
enum Kind : uint8_t {
  kKindAccel = 0,
  kKindVelocity = 1,
  kKindBaseline = 2,
  kKindAbsolute = 3,
  kKindDictionary = 4,
};
constexpr int kKinds = 5;
constexpr int kClasses = kKinds * 3;
constexpr int kRecipeTimeClass = kClasses;        // residuals of predicted recipe clip times
constexpr int kRecipeWeightClass = kClasses + 1;  // residuals of predicted weights (float ulps)

// Residual binarisation (wire format since protocol version 4): with expected magnitude E
// (bucket m = bit length of E), the residual r is zigzag-mapped (z = 2|r| - [r < 0]: 0, -1, 1,
// -2, ... -> 0, 1, 2, 3, ...); its low s = min(m, kMaxShift) bits go raw to the side stream in
// one write, and q = z >> s is one symbol of the static table of (class, m)
// (residual_tables.h): q < 15 directly, else the escape symbol and q - 15 in Exp-Golomb in the
// side stream (the length through the escape table, residual_tables.h). One coder step per
// residual; in the "expect zero" bucket (m = 0) the whole
// residual is the symbol, and a zero residual there costs a few thousandths of a bit.
constexpr uint32_t kEscapeSymbol = SymbolTable::kSymbols - 1;
constexpr uint32_t kLongEscape = SymbolTable::kSymbols - 1;  // escape length symbol: n >= 15
constexpr uint32_t kMaxEscapeLength = 36;
constexpr uint32_t kMaxShift = 35;
constexpr uint64_t kMaxMagnitude = uint64_t{1} << 34;
constexpr uint64_t kMaxZigzag = kMaxMagnitude << 1;
constexpr int kMaxReferences = 3;
static_assert(kClasses + 2 == static_cast<int>(kResidualClasses),
              "residual_tables.h has one class per channel x kind, plus recipe times and weights");

// The few per-record flags stay adaptive binary decisions (their initial probabilities are
// what a steady stream sends); residuals use the static tables.
struct Models {
  BitModel axis_same{3900};
  BitModel axis_is_w{3900};
  BitModel axes_as_expected{3900};
  BitModel side_stream_omitted{4000};
  BitModel full_references{3900};
  BitModel off_layout{4000};
  BitModel has_recipe{3900};
  BitModel from_dictionary{1000};
  BitModel recipe_crossfade{3900};    // 1: a crossfade recipe
  BitModel recipe_frozen{3900};       // 1: a crossfade from a frozen pose (after "crossfade")
  BitModel recipe_motion_same{3900};  // 0: speeds and wraps as the baseline recipe's
};

struct Expectation {
  int64_t prediction = 0;
  uint32_t bucket = 0;  // bit length of the expected |residual|
  uint8_t cls = 0;
};

uint64_t magnitude(int64_t v) { return v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v); }

// 0, -1, 1, -2, 2, ... -> 0, 1, 2, 3, 4, ...; |v| <= 2^62.
uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t z) {
  return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
}

// round(num / den), halves away from zero, den > 0; exact integer arithmetic.
int64_t round_div(int64_t num, int64_t den) {
  return num >= 0 ? (num + den / 2) / den : -((-num + den / 2) / den);
}

// Bucket of a non-negative expected magnitude; doubles are exact-rounded on every machine
// (+ - * / only), and the bucket is their integer part's bit length.
uint32_t bucket_of(double expected) {
  if (!(expected >= 1.0)) return 0;
  if (expected > 1e12) expected = 1e12;
  return static_cast<uint32_t>(std::bit_width(static_cast<uint64_t>(expected)));
}

constexpr int kPriorSlot[kValuesPerNode] = {0, 1, 2, -1, 3, 4, 5, 6, 7, 8};
constexpr int kChannelSlots[3] = {kTranslationCode, kRotationCode, kScaleCode};
constexpr uint8_t kChannelBits[3] = {kChannelTranslation, kChannelRotation, kChannelScale};

int references_in(const PoseReference& ref) {
  if (ref.baseline == nullptr) return 0;
  if (ref.prior == nullptr) return 1;
  return ref.older == nullptr ? 2 : 3;
}

// Null when the first `count` references are usable for `format`, else the reason.
const char* reference_problem(const PoseFormat& format, const PoseReference& ref, int count) {
  const std::size_t size = format.node_count() * kValuesPerNode;
  const QuantizedPose* poses[3] = {ref.baseline, ref.prior, ref.older};
  const uint32_t ages[3] = {ref.baseline_age, ref.prior_age, ref.older_age};
  for (int i = 0; i < count; ++i) {
    if (poses[i] == nullptr) return "a reference pose the receiver does not hold";
    if (poses[i]->values.size() != size) return "a reference pose of another format";
    if (ages[i] == 0 || ages[i] > kMaxReferenceAge) return "a reference age out of range";
  }
  return nullptr;
}

// Shared by encoder and decoder: the prediction and context of every code. Everything that
// depends only on the ages is worked out once per record; when the ages are equal (the steady
// state: one snapshot per send interval, all acked) the per-code work is integer only.
class Predictor {
 public:
  // `dictionary` (nullable): codes predicted from the clip dictionary, which then replace the
  // reference prediction for every code.
  Predictor(const PoseFormat& format, const PoseReference& ref, int references,
            const QuantizedPose* dictionary = nullptr)
      : format_(format), ref_(ref), references_(references), dictionary_(dictionary) {
    if (dictionary_ != nullptr) axis_codes_ = dictionary_->values.data();
    else if (references_ >= 1) axis_codes_ = ref.baseline->values.data();
    if (references_ >= 1) {
      speed_scale_ = static_cast<double>(ref.baseline_age) /
                     static_cast<double>(std::max<uint32_t>(1, ref.tick_rate_hz));
    }
    if (references_ >= 2) unit_step_ = ref.baseline_age == ref.prior_age;
    if (references_ >= 3) {
      equal_ages_ = unit_step_ && ref.prior_age == ref.older_age;
      steady_ = equal_ages_ && dictionary_ == nullptr;
      baseline_ = ref.baseline->values.data();
      prior_ = ref.prior->values.data();
      older_ = ref.older->values.data();
      if (!equal_ages_) {  // equal ages use the integer form in expect()
        // What linear extrapolation misses under constant acceleration:
        //   [(b - p)/a1 - (p - o)/a0] * age * (age + a1) / (a1 + a0)
        const double age = ref.baseline_age, a1 = ref.prior_age, a0 = ref.older_age;
        const double common = age * (age + a1) / (a1 + a0);
        newer_factor_ = common / a1;
        older_factor_ = common / a0;
      }
    }
  }

  // The steady state: three references, equal ages, no dictionary. Then every code whose
  // representation all three references share (rotation axes equal) takes expect_steady().
  bool steady() const { return steady_; }
  // The clip dictionary's codes that predict every code (null: references predict).
  const int32_t* dictionary_codes() const {
    return dictionary_ == nullptr ? nullptr : dictionary_->values.data();
  }
  // Steady state only: whether node `node`'s channel `channel` (0..2; `axis` the decoded
  // rotation axis for R) can use expect_steady().
  bool steady_channel(std::size_t node, int channel, int32_t axis) const {
    if (channel != 1) return true;
    const std::size_t a = node * kValuesPerNode + kRotationAxis;
    return baseline_[a] == axis && prior_[a] == axis && older_[a] == axis;
  }
  // expect() in the steady state, for code index i (node * kValuesPerNode + slot), integer
  // only and inline: prediction b + (b - p) clamped to +-limit, accel class, bucket from
  // (2 |b - 2p + o| + |b - p|) / 4 (the same values expect() computes).
  [[gnu::always_inline]] Expectation expect_steady(std::size_t i, int64_t limit, uint8_t cls) const {
    const int64_t b = baseline_[i], p = prior_[i], o = older_[i];
    const int64_t step = b - p;
    Expectation e;
    e.prediction = std::clamp<int64_t>(b + step, -limit, limit);
    const uint64_t accel = magnitude(step - (p - o));
    e.bucket = static_cast<uint32_t>(std::bit_width((2 * accel + magnitude(step)) >> 2));
    e.cls = cls;
    return e;
  }

  // The axis a rotation most likely has: the reference's (see reference_axis), else w.
  int32_t likely_axis(std::size_t node) const {
    const int32_t expected = reference_axis(node);
    return expected >= 0 ? expected : 3;
  }

  int32_t reference_axis(std::size_t node) const {
    return axis_codes_ == nullptr ? -1 : axis_codes_[node * kValuesPerNode + kRotationAxis];
  }

  // `channel` 0..2 (T, R, S), `slot` the code index within the node, `axis` the decoded
  // rotation axis (R only).
  Expectation expect(std::size_t node, int channel, int slot, int32_t axis) const {
    const std::size_t base = node * kValuesPerNode;
    const std::size_t i = base + static_cast<std::size_t>(slot);
    if (dictionary_ != nullptr) {
      Expectation e;
      if (channel != 1 || dictionary_->values[base + kRotationAxis] == axis) {
        e.prediction = dictionary_->values[i];
        e.cls = static_cast<uint8_t>(channel * kKinds + kKindDictionary);  // bucket 0: expect 0
      } else {
        e.bucket = bucket_of(static_cast<double>(format_.value_prior[prior_index(node, slot)]));
        e.cls = static_cast<uint8_t>(channel * kKinds + kKindAbsolute);
      }
      return e;
    }
    // How many references share this code's representation (rotation axes must match).
    int usable = references_;
    if (channel == 1) {
      if (usable >= 1 && ref_.baseline->values[base + kRotationAxis] != axis) usable = 0;
      if (usable >= 2 && ref_.prior->values[base + kRotationAxis] != axis) usable = 1;
      if (usable >= 3 && ref_.older->values[base + kRotationAxis] != axis) usable = 2;
    }
    Expectation e;
    e.cls = static_cast<uint8_t>(channel * kKinds);
    if (usable == 0) {
      e.bucket = bucket_of(static_cast<double>(format_.value_prior[prior_index(node, slot)]));
      e.cls = static_cast<uint8_t>(e.cls + kKindAbsolute);
      return e;
    }
    const int64_t b = ref_.baseline->values[i];
    if (usable == 1) {
      e.prediction = b;
      e.bucket = bucket_of(static_cast<double>(format_.speed_prior[prior_index(node, slot)]) *
                           speed_scale_);
      e.cls = static_cast<uint8_t>(e.cls + kKindBaseline);
      return e;
    }
    const int64_t p = ref_.prior->values[i];
    const int64_t step =
        unit_step_ ? b - p
                   : round_div((b - p) * static_cast<int64_t>(ref_.baseline_age),
                               static_cast<int64_t>(ref_.prior_age));
    const int64_t limit = channel == 1 ? format_.precision[node].rotation_limit : kMaxLinearCode;
    e.prediction = std::clamp<int64_t>(b + step, -limit, limit);
    const uint64_t velocity = magnitude(step);
    if (usable == 2) {
      e.bucket = static_cast<uint32_t>(std::bit_width(velocity));
      e.cls = static_cast<uint8_t>(e.cls + kKindVelocity);
      return e;
    }
    const int64_t o = ref_.older->values[i];
    e.cls = static_cast<uint8_t>(e.cls + kKindAccel);
    // Expected |residual|: the mean of the acceleration estimate and half the step.
    if (equal_ages_) {
      const uint64_t accel = magnitude(b - 2 * p + o);
      e.bucket = static_cast<uint32_t>(std::bit_width((2 * accel + velocity) >> 2));
    } else {
      const double accel = std::fabs(static_cast<double>(b - p) * newer_factor_ -
                                     static_cast<double>(p - o) * older_factor_);
      e.bucket = bucket_of((accel + 0.5 * static_cast<double>(velocity)) * 0.5);
    }
    return e;
  }

 private:
  static std::size_t prior_index(std::size_t node, int slot) {
    return node * kPriorComponentsPerNode + static_cast<std::size_t>(kPriorSlot[slot]);
  }

  const PoseFormat& format_;
  const PoseReference& ref_;
  int references_;
  double speed_scale_ = 0.0;  // baseline age in seconds
  bool unit_step_ = false;    // baseline_age == prior_age: the step is b - p exactly
  bool equal_ages_ = false;   // all three ages equal
  bool steady_ = false;       // equal_ages_, three references, no dictionary
  const int32_t* baseline_ = nullptr;  // the three references' codes (three references only)
  const int32_t* prior_ = nullptr;
  const int32_t* older_ = nullptr;
  double newer_factor_ = 0.0, older_factor_ = 0.0;
  const QuantizedPose* dictionary_;
  // Whose rotation axes are expected: the dictionary's codes, else the baseline's, else none.
  const int32_t* axis_codes_ = nullptr;
};

// ---------- recipes (clip-dictionary prediction) ----------

int64_t tick_us(const PoseReference& ref) {
  const int64_t hz = std::max<uint32_t>(1, ref.tick_rate_hz);
  return (1000000 + hz / 2) / hz;
}

uint32_t clip_bits(const PoseFormat& format) {
  return format.clip_durations_us.size() <= 1
             ? 0u
             : static_cast<uint32_t>(std::bit_width(format.clip_durations_us.size() - 1));
}

bool recipe_valid(const PoseFormat& format, const PoseRecipe& recipe) {
  if (!recipe_shape_valid(recipe)) return false;
  for (uint8_t i = 0; i < recipe.count; ++i) {
    const PoseRecipe::Input& in = recipe.inputs[i];
    if (in.clip >= format.clip_durations_us.size() || in.time_us < 0 ||
        in.time_us > kMaxRecipeTimeUs || !std::isfinite(in.weight) || in.weight < 0.0f) {
      return false;
    }
  }
  return true;
}

// The baseline's age in microseconds (rounded tick length; bounded so products with a speed
// stay inside int64 whatever the reference says).
int64_t age_us(const PoseReference& ref) {
  return std::min<int64_t>(static_cast<int64_t>(ref.baseline_age) * tick_us(ref), int64_t{1} << 31);
}

// The recipe of the baseline, when there is one to predict from.
const PoseRecipe* baseline_recipe(const PoseReference& ref, int references) {
  if (references < 1 || ref.baseline->recipe.count == 0 ||
      !recipe_shape_valid(ref.baseline->recipe)) {
    return nullptr;
  }
  return &ref.baseline->recipe;
}

// Which motion input `i` belongs to: 0 a crossfade's source (a frozen chain's base), 1 the
// target (or plain) motion, 2 + k a frozen chain's mix k.
int role_of(const PoseRecipe& r, uint8_t i) {
  if (!r.crossfade() || i >= r.source_count) return 1;
  if (!r.frozen() || i < r.frozen_source_count) return 0;
  int k = 0;
  while (k + 1 < r.frozen_mix_count && i >= r.frozen_mixes[k].end) ++k;
  return 2 + k;
}

// The role in `base` that continues `role`: a frozen chain's last mix was the interrupted
// fade's target (role 1) in a baseline that was that fade (whose own chain, if any, is one
// mix shorter).
int base_role(const PoseRecipe& base, int role) {
  return role >= 2 && role - 2 == base.frozen_mix_count ? 1 : role;
}

// The input of `base` that continues `clip` in motion `role`: the first with the same clip and
// role, else the first with the same clip (a plain motion that became a crossfade's source);
// -1 when none.
int matching_input(const PoseRecipe& base, uint16_t clip, int role) {
  int any = -1;
  for (uint8_t j = 0; j < base.count && j < kMaxRecipeInputs; ++j) {
    if (base.inputs[j].clip != clip) continue;
    if (role_of(base, j) == role) return j;
    if (any < 0) any = j;
  }
  return any;
}

int64_t floor_mod(int64_t n, int64_t d) {  // d > 0
  const int64_t m = n % d;
  return m < 0 ? m + d : m;
}

// Where input `i`'s clip time is expected to be: the baseline recipe's time for the same clip
// (matching_input) advanced by the baseline's age at the motion's speed (this recipe's, coded
// before the inputs), wrapped by the clip duration (clamped for a clamped motion); -1 when the
// baseline has no such input. A frozen source's times stay where a frozen baseline had them;
// after a baseline that was the interrupted fade they are its times advanced at its playback
// until the interrupt (this fade's elapsed time, coded before the inputs, ago).
int64_t predicted_time(const PoseFormat& format, const PoseRecipe& recipe, uint8_t i,
                       const PoseReference& ref, int references) {
  const PoseRecipe* base = baseline_recipe(ref, references);
  if (base == nullptr) return -1;
  const int role = role_of(recipe, i);
  const int j = matching_input(*base, recipe.inputs[i].clip, base_role(*base, role));
  if (j < 0) return -1;
  int64_t speed = role == 1 ? recipe.speed : recipe.source_speed;
  uint8_t wrap = role == 1 ? recipe.wrap : recipe.source_wrap;
  int64_t advance = age_us(ref);
  if (role != 1 && recipe.frozen()) {
    const int played = role_of(*base, static_cast<uint8_t>(j));
    if (base->frozen() && played != 1) return base->inputs[j].time_us;
    speed = played == 1 ? base->speed : base->source_speed;
    wrap = played == 1 ? base->wrap : base->source_wrap;
    advance = std::max<int64_t>(0, advance - recipe.fade_elapsed_us);
  }
  // |speed| <= 2^31 and advance <= 2^31: the product fits; >> floors (arithmetic shift).
  int64_t t = base->inputs[j].time_us + ((advance * speed) >> 16);
  const int64_t duration = format.clip_durations_us[recipe.inputs[i].clip];
  if (duration > 0) {
    t = wrap == 1 ? std::clamp<int64_t>(t, 0, duration) : floor_mod(t, duration);
  } else {
    t = 0;
  }
  return t;
}

uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Expected IEEE bits of input `i`'s weight, from the same input (matching_input) of the
// baseline and prior recipes: constant-rate extrapolation in float, or the baseline's weight.
// -1 when the baseline has no such input (the weight is then sent raw).
int64_t predicted_weight_bits(const PoseRecipe& recipe, uint8_t i, const PoseReference& ref,
                              int references) {
  const PoseRecipe* base = baseline_recipe(ref, references);
  if (base == nullptr) return -1;
  const int role = role_of(recipe, i);
  const int j = matching_input(*base, recipe.inputs[i].clip, base_role(*base, role));
  if (j < 0) return -1;
  const PoseRecipe::Input& b = base->inputs[j];
  float w = b.weight;
  if (references >= 2 && ref.prior->recipe.count > 0 && recipe_shape_valid(ref.prior->recipe)) {
    const int k = matching_input(ref.prior->recipe, b.clip, role_of(*base, static_cast<uint8_t>(j)));
    if (k >= 0 && ref.prior_age > 0) {
      const float ratio = static_cast<float>(ref.baseline_age) / static_cast<float>(ref.prior_age);
      const float extrapolated = b.weight + (b.weight - ref.prior->recipe.inputs[k].weight) * ratio;
      if (std::isfinite(extrapolated)) w = extrapolated < 0.0f ? 0.0f : extrapolated;
    }
  }
  return float_bits(w);
}

// The motion parameters (speeds, wraps) equal the baseline's: one likely decision. A frozen
// source has none (speed 0, loop: implied by the shape).
bool same_motion(const PoseRecipe& r, const PoseRecipe& base) {
  return r.speed == base.speed && r.wrap == base.wrap &&
         (!r.crossfade() || r.frozen() ||
          (r.source_speed == base.source_speed && r.source_wrap == base.source_wrap));
}

// Frozen mix k's fade state expected from the baseline: the baseline chain's mix k (it is
// constant), or, for the mix after the baseline's chain (the baseline was the interrupted fade
// itself), that fade's duration and its elapsed time moved on to the interrupt (this fade's
// elapsed time before now). -1 without a prediction.
int64_t predicted_mix_duration(const PoseRecipe* base, uint8_t k) {
  if (base == nullptr) return -1;
  if (k < base->frozen_mix_count) return base->frozen_mixes[k].duration_us;
  return k == base->frozen_mix_count && base->crossfade() ? base->fade_duration_us : -1;
}
int64_t predicted_mix_elapsed(const PoseRecipe& r, const PoseRecipe* base, uint8_t k,
                              const PoseReference& ref) {
  if (base == nullptr) return -1;
  if (k < base->frozen_mix_count) return base->frozen_mixes[k].elapsed_us;
  if (k != base->frozen_mix_count || !base->crossfade()) return -1;
  return std::max<int64_t>(0, base->fade_elapsed_us + age_us(ref) - r.fade_elapsed_us);
}

// A crossfade's duration expected from a crossfading baseline (-1 without one).
int64_t predicted_duration(const PoseRecipe* base) {
  return base != nullptr && base->crossfade() ? base->fade_duration_us : -1;
}

// A crossfade's elapsed time expected from a baseline fading with the same duration.
int64_t predicted_elapsed(const PoseRecipe& r, const PoseRecipe* base, const PoseReference& ref) {
  if (base == nullptr || !base->crossfade() || base->fade_duration_us != r.fade_duration_us) return -1;
  return base->fade_elapsed_us + age_us(ref);
}

int64_t predicted_steady(const PoseRecipe* base, const PoseReference& ref) {
  if (base == nullptr) return -1;
  return std::min(base->steady_us + age_us(ref), kMaxRecipeTimeUs);
}

// ---------- entropy stages ----------

uint32_t shift_for(uint32_t bucket) { return std::min(bucket, kMaxShift); }

// The sinks and sources are small values (coder state + a pointer to the models): the body
// loops work on a local copy, which the compiler keeps in registers (a member of an object
// whose address escapes is reloaded after every byte store, which may alias it).
struct RangeSink {
  RangeEncoder rc;
  RawBitWriter raw_bits;  // residual low bits and escapes (the side stream)
  Models* models;

  [[gnu::always_inline]] void residual(const Expectation& e, int64_t r) {
    const uint32_t s = shift_for(e.bucket);
    const uint64_t z = zigzag(r);
    const uint64_t q = z >> s;
    const SymbolTable& table = residual_table(e.cls, e.bucket);
    if (q < kEscapeSymbol) {
      rc.encode_symbol(table, static_cast<uint32_t>(q));
    } else {  // escape: v = q - 14 as its length (escape table) and its low bits (raw)
      rc.encode_symbol(table, kEscapeSymbol);
      const uint64_t v = q - kEscapeSymbol + 1;
      const auto n = static_cast<uint32_t>(std::bit_width(v) - 1);
      if (n < kLongEscape) {
        rc.encode_symbol(escape_length_table(), n);
      } else {
        rc.encode_symbol(escape_length_table(), kLongEscape);
        raw(n - kLongEscape, 5);
      }
      raw(v & ((uint64_t{1} << n) - 1), n);
    }
    raw(z & ((uint64_t{1} << s) - 1), s);
  }
  void axis(int32_t expected, int32_t axis) {
    BitModel& m = expected >= 0 ? models->axis_same : models->axis_is_w;
    const int32_t likely = expected >= 0 ? expected : 3;
    rc.encode(m, axis == likely ? 0u : 1u);
    if (axis != likely) rc.encode_direct(static_cast<uint32_t>(axis), 2);
  }
  // `n` (0..64) low bits of `v` to the side stream.
  [[gnu::always_inline]] void raw(uint64_t v, uint32_t n) {
    if (n > 32) {
      raw_bits.write(static_cast<uint32_t>(v >> 32), n - 32);
      n = 32;
    }
    raw_bits.write(static_cast<uint32_t>(v), n);
  }
  // `value` (0..2^32 - 1) as a residual from `predicted`, or its 32 bits raw when there is no
  // prediction (predicted < 0). RangeSource::predicted_or_raw reads it back.
  void predicted_or_raw(const Expectation& e, int64_t value, int64_t predicted) {
    if (predicted >= 0) {
      residual(e, value - predicted);
    } else {
      raw(static_cast<uint64_t>(value), 32);
    }
  }
  void recipe(const PoseFormat& format, const PoseRecipe& r, const PoseReference& ref,
              int references) {
    rc.encode(models->recipe_crossfade, r.crossfade() ? 1u : 0u);
    if (r.crossfade()) {
      rc.encode(models->recipe_frozen, r.frozen() ? 1u : 0u);
      if (r.frozen()) {
        rc.encode_direct(static_cast<uint32_t>(r.frozen_source_count - 1), 2);
        rc.encode_direct(static_cast<uint32_t>(r.frozen_mix_count - 1), 2);
        for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
          rc.encode_direct(static_cast<uint32_t>(r.frozen_mixes[k].end - r.frozen_mix_begin(k) - 1), 2);
        }
      } else {
        rc.encode_direct(static_cast<uint32_t>(r.source_count - 1), 2);
      }
      rc.encode_direct(static_cast<uint32_t>(r.target_count() - 1), 2);
    } else {
      rc.encode_direct(static_cast<uint32_t>(r.count - 1), 2);
    }
    Expectation exact;
    exact.cls = kRecipeTimeClass;
    const PoseRecipe* base = baseline_recipe(ref, references);
    const bool same = base != nullptr && same_motion(r, *base);
    rc.encode(models->recipe_motion_same, same ? 0u : 1u);
    if (!same) {
      raw(static_cast<uint32_t>(r.speed), 32);
      raw(r.wrap, 2);
      if (r.crossfade() && !r.frozen()) {
        raw(static_cast<uint32_t>(r.source_speed), 32);
        raw(r.source_wrap, 2);
      }
    }
    if (r.crossfade()) {
      predicted_or_raw(exact, r.fade_duration_us, predicted_duration(base));
      predicted_or_raw(exact, r.fade_elapsed_us, predicted_elapsed(r, base, ref));
    }
    for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
      predicted_or_raw(exact, r.frozen_mixes[k].duration_us, predicted_mix_duration(base, k));
      predicted_or_raw(exact, r.frozen_mixes[k].elapsed_us, predicted_mix_elapsed(r, base, k, ref));
    }
    predicted_or_raw(exact, r.steady_us, predicted_steady(base, ref));
    Expectation ulps;
    ulps.cls = kRecipeWeightClass;
    for (uint8_t i = 0; i < r.count; ++i) {
      const PoseRecipe::Input& in = r.inputs[i];
      rc.encode_direct(in.clip, clip_bits(format));
      predicted_or_raw(exact, in.time_us, predicted_time(format, r, i, ref, references));
      predicted_or_raw(ulps, float_bits(in.weight), predicted_weight_bits(r, i, ref, references));
    }
  }
};

// `n` (0..64) bits from the side stream.
[[gnu::always_inline]] inline uint64_t read_raw(RawBitReader& raw_bits, uint32_t n) {
  if (n <= 32) return raw_bits.read(n);
  const uint64_t high = raw_bits.read(n - 32);
  return (high << 32) | raw_bits.read(32);
}

// What RangeSink::residual wrote for expectation `e`; sets `failed` (and returns 0) on a
// corrupt stream. A free function of the decoder's two parts, so that a loop can keep them in
// separate locals: the side-stream reader's address escapes into its out-of-line refill(),
// which would otherwise keep the range decoder's state in memory too, on its serial chain
// (decode_body_fast).
[[gnu::always_inline]] inline int64_t decode_residual(RangeDecoder& rc, RawBitReader& raw_bits,
                                                      bool& failed, const Expectation& e) {
  const uint32_t s = shift_for(e.bucket);
  uint64_t q = rc.decode_symbol(residual_table(e.cls, e.bucket));
  if (q == kEscapeSymbol) {
    uint32_t n = rc.decode_symbol(escape_length_table());
    if (n == kLongEscape) n += static_cast<uint32_t>(read_raw(raw_bits, 5));
    if (n > kMaxEscapeLength) {
      failed = true;
      return 0;
    }
    q = kEscapeSymbol + ((uint64_t{1} << n) | read_raw(raw_bits, n)) - 1;
  }
  if (q > (kMaxZigzag >> s)) {
    failed = true;
    return 0;
  }
  return unzigzag((q << s) | read_raw(raw_bits, s));
}

struct RangeSource {
  RangeDecoder rc;
  RawBitReader raw_bits;
  Models* models;
  bool failed = false;

  [[gnu::always_inline]] int64_t residual(const Expectation& e) {
    return decode_residual(rc, raw_bits, failed, e);
  }
  int32_t axis(int32_t expected) {
    BitModel& m = expected >= 0 ? models->axis_same : models->axis_is_w;
    const int32_t likely = expected >= 0 ? expected : 3;
    if (rc.decode(m) == 0) return likely;
    return static_cast<int32_t>(rc.decode_direct(2));
  }
  // `n` (0..64) bits from the side stream.
  [[gnu::always_inline]] uint64_t raw(uint32_t n) { return read_raw(raw_bits, n); }
  // What RangeSink::predicted_or_raw wrote: `predicted` plus a residual, or 32 raw bits when
  // there is no prediction (predicted < 0). Check `failed` after.
  int64_t predicted_or_raw(const Expectation& e, int64_t predicted) {
    return predicted >= 0 ? predicted + residual(e) : static_cast<int64_t>(raw(32));
  }
  // False for a recipe that does not fit the format (shape, clip index, time, weight, fade
  // state): every count, index and range is checked before use.
  bool recipe(const PoseFormat& format, PoseRecipe& r, const PoseReference& ref, int references) {
    // Every field but the inputs reset (inputs past `count` are never read: PoseRecipe's
    // contract; those below it are all written here).
    r.count = 0;
    r.source_count = 0;
    r.frozen_source_count = 0;
    r.frozen_mix_count = 0;
    for (PoseRecipe::FrozenMix& mix : r.frozen_mixes) mix = PoseRecipe::FrozenMix{};
    r.speed = r.source_speed = 1 << 16;
    r.wrap = r.source_wrap = 0;
    r.fade_elapsed_us = r.fade_duration_us = 0;
    r.steady_us = kMaxRecipeTimeUs;
    if (rc.decode(models->recipe_crossfade) != 0) {
      // Each motion's count is 2 bits (1..4); a frozen chain's mix count too (1..3).
      if (rc.decode(models->recipe_frozen) != 0) {
        r.frozen_source_count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
        r.frozen_mix_count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
        if (r.frozen_mix_count > kMaxFrozenMixes) return false;
        uint8_t end = r.frozen_source_count;
        for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
          end = static_cast<uint8_t>(end + rc.decode_direct(2) + 1);
          r.frozen_mixes[k].end = end;
        }
        r.source_count = end;
        r.source_speed = 0;  // the frozen source does not move
      } else {
        r.source_count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
      }
      r.count = static_cast<uint8_t>(r.source_count + rc.decode_direct(2) + 1);
      // Up to 4 + 3 x 4 + 4 = 20 motions' inputs can be announced; the array holds 16.
      if (r.count > kMaxRecipeInputs) return false;
    } else {
      r.count = static_cast<uint8_t>(rc.decode_direct(2) + 1);
    }
    Expectation exact;
    exact.cls = kRecipeTimeClass;
    const PoseRecipe* base = baseline_recipe(ref, references);
    if (rc.decode(models->recipe_motion_same) == 0) {
      if (base == nullptr) return false;  // "as the baseline's" without one
      r.speed = base->speed;
      r.wrap = base->wrap;
      if (r.crossfade() && !r.frozen()) {
        r.source_speed = base->source_speed;
        r.source_wrap = base->source_wrap;
      }
    } else {
      r.speed = static_cast<int32_t>(static_cast<uint32_t>(raw(32)));
      r.wrap = static_cast<uint8_t>(raw(2));
      if (r.crossfade() && !r.frozen()) {
        r.source_speed = static_cast<int32_t>(static_cast<uint32_t>(raw(32)));
        r.source_wrap = static_cast<uint8_t>(raw(2));
      }
    }
    if (r.wrap >= kRecipeWrapModes || r.source_wrap >= kRecipeWrapModes) return false;
    if (r.crossfade()) {
      r.fade_duration_us = predicted_or_raw(exact, predicted_duration(base));
      if (failed || r.fade_duration_us <= 0 || r.fade_duration_us > kMaxRecipeTimeUs) return false;
      r.fade_elapsed_us = predicted_or_raw(exact, predicted_elapsed(r, base, ref));
      if (failed || r.fade_elapsed_us < 0 || r.fade_elapsed_us >= r.fade_duration_us) return false;
    }
    for (uint8_t k = 0; k < r.frozen_mix_count; ++k) {
      PoseRecipe::FrozenMix& mix = r.frozen_mixes[k];
      mix.duration_us = predicted_or_raw(exact, predicted_mix_duration(base, k));
      if (failed || mix.duration_us <= 0 || mix.duration_us > kMaxRecipeTimeUs) return false;
      mix.elapsed_us = predicted_or_raw(exact, predicted_mix_elapsed(r, base, k, ref));
      if (failed || mix.elapsed_us < 0 || mix.elapsed_us >= mix.duration_us) return false;
    }
    r.steady_us = predicted_or_raw(exact, predicted_steady(base, ref));
    if (failed || r.steady_us < 0 || r.steady_us > kMaxRecipeTimeUs) return false;
    Expectation ulps;
    ulps.cls = kRecipeWeightClass;
    for (uint8_t i = 0; i < r.count; ++i) {
      PoseRecipe::Input& in = r.inputs[i];
      const uint32_t clip = rc.decode_direct(clip_bits(format));
      if (clip >= format.clip_durations_us.size()) return false;
      in.clip = static_cast<uint16_t>(clip);
      in.time_us = predicted_or_raw(exact, predicted_time(format, r, i, ref, references));
      if (failed || in.time_us < 0 || in.time_us > kMaxRecipeTimeUs) return false;
      const int64_t bits = predicted_or_raw(ulps, predicted_weight_bits(r, i, ref, references));
      if (failed || bits < 0 || bits > 0xFFFFFFFFll) return false;
      const auto word = static_cast<uint32_t>(bits);
      std::memcpy(&in.weight, &word, sizeof word);
      if (!std::isfinite(in.weight) || in.weight < 0.0f) return false;
    }
    return recipe_shape_valid(r);
  }
};

// Bit-packed reference stage: zigzag residual, Exp-Golomb of order k from the same context.
uint32_t golomb_order(uint32_t bucket) { return bucket > 1 ? std::min(bucket - 1, 24u) : 0u; }

struct BitSink {
  BitWriter bits;
  void residual(const Expectation& e, int64_t r) {
    const uint64_t z = r >= 0 ? static_cast<uint64_t>(r) << 1 : (magnitude(r) << 1) - 1;
    const uint32_t k = golomb_order(e.bucket);
    bits.write_exp_golomb(z >> k, 0);
    bits.write(static_cast<uint32_t>(z & ((uint64_t{1} << k) - 1)), k);
  }
  void axis(int32_t expected, int32_t axis) {
    const int32_t likely = expected >= 0 ? expected : 3;
    bits.write_bit(axis == likely ? 0u : 1u);
    if (axis != likely) bits.write(static_cast<uint32_t>(axis), 2);
  }
};

struct BitSource {
  BitReader bits;
  bool failed = false;
  int64_t residual(const Expectation& e) {
    const uint32_t k = golomb_order(e.bucket);
    const uint64_t high = bits.read_exp_golomb(0);
    const uint64_t z = (high << k) | bits.read(k);
    if (bits.failed() || z > (kMaxMagnitude << 1)) {
      failed = true;
      return 0;
    }
    return (z & 1) ? -static_cast<int64_t>((z + 1) >> 1) : static_cast<int64_t>(z >> 1);
  }
  int32_t axis(int32_t expected) {
    const int32_t likely = expected >= 0 ? expected : 3;
    if (bits.read_bit() == 0) return likely;
    return static_cast<int32_t>(bits.read(2));
  }
};

// ---------- the walk over nodes and channels, shared by both directions ----------

// Whether every coded rotation of `pose` has its likely axis (Predictor::likely_axis): then
// the range-coded stream says so once instead of once per node.
bool axes_as_expected(const PoseFormat& format, const QuantizedPose& pose,
                      const Predictor& predictor) {
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const uint8_t coded = pose.off_layout ? 7 : format.channels[n];
    if ((coded & kChannelRotation) &&
        pose.values[n * kValuesPerNode + kRotationAxis] != predictor.likely_axis(n)) {
      return false;
    }
  }
  return true;
}

// Returns the sink after the body (a copy: see RangeSink). With `axes_known`, rotation axes
// are the likely ones and not coded.
template <class Sink>
Sink encode_body(const PoseFormat& format, const QuantizedPose& pose, const Predictor& predictor,
                 const Sink& sink_in, bool axes_known) {
  Sink sink(sink_in);
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const uint8_t coded = pose.off_layout ? 7 : format.channels[n];
    if (coded == 0) continue;
    const int32_t* codes = &pose.values[n * kValuesPerNode];
    for (int c = 0; c < 3; ++c) {
      if (!(coded & kChannelBits[c])) continue;
      int32_t axis = 0;
      if (c == 1) {
        axis = codes[kRotationAxis];
        if (!axes_known) sink.axis(predictor.reference_axis(n), axis);
      }
      const int64_t limit = c == 1 ? format.precision[n].rotation_limit : kMaxLinearCode;
      const bool steady = predictor.steady() && predictor.steady_channel(n, c, axis);
      const auto steady_cls = static_cast<uint8_t>(c * kKinds + kKindAccel);
      for (int k = 0; k < 3; ++k) {
        const int slot = kChannelSlots[c] + k;
        const Expectation e =
            steady ? predictor.expect_steady(n * kValuesPerNode + static_cast<std::size_t>(slot),
                                             limit, steady_cls)
                   : predictor.expect(n, c, slot, axis);
        sink.residual(e, static_cast<int64_t>(codes[slot]) - e.prediction);
      }
    }
  }
  return Sink(sink);  // a copy, not the local itself (which stays a register candidate)
}

template <class Source>
Status decode_body(const PoseFormat& format, const Predictor& predictor, Source& source_io,
                   QuantizedPose& out, bool axes_known) {
  Source source(source_io);  // a local copy (see RangeSink), written back on every return
  const auto status = [&](Status st) {
    source_io = source;
    return st;
  };
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const uint8_t coded = out.off_layout ? 7 : format.channels[n];
    int32_t* codes = &out.values[n * kValuesPerNode];
    for (int v = 0; v < kValuesPerNode; ++v) codes[v] = 0;
    codes[kRotationAxis] = 3;
    for (int c = 0; c < 3; ++c) {
      if (!(coded & kChannelBits[c])) continue;
      int32_t axis = 0;
      if (c == 1) {
        axis = axes_known ? predictor.likely_axis(n) : source.axis(predictor.reference_axis(n));
        codes[kRotationAxis] = axis;
      }
      const int64_t limit = c == 1 ? format.precision[n].rotation_limit : kMaxLinearCode;
      const bool steady = predictor.steady() && predictor.steady_channel(n, c, axis);
      const auto steady_cls = static_cast<uint8_t>(c * kKinds + kKindAccel);
      for (int k = 0; k < 3; ++k) {
        const int slot = kChannelSlots[c] + k;
        const Expectation e =
            steady ? predictor.expect_steady(n * kValuesPerNode + static_cast<std::size_t>(slot),
                                             limit, steady_cls)
                   : predictor.expect(n, c, slot, axis);
        const int64_t value = e.prediction + source.residual(e);
        if (source.failed) {
          return status(Error{"pose: corrupt residual at node " + std::to_string(n)});
        }
        if (value > limit || value < -limit) {
          return status(Error{"pose: node " + std::to_string(n) + " code " +
                              std::to_string(slot) + " out of range"});
        }
        codes[slot] = static_cast<int32_t>(value);
      }
    }
  }
  return status({});
}

// ---------- straight-line bodies for the two common records ----------
//
// encode_body/decode_body decide per node and channel how each code is predicted. Most
// records need little of that: in the steady state (three references of equal ages, axes as
// the baseline's) and in a record predicted from the clip dictionary (axes as the
// dictionary's), the codes of a channel are predicted the same way. These bodies are those two
// cases written out: the same predictions, contexts and symbols, so the same bytes
// (ClipDictionary.WireBytesOfEveryRecordKindMatchTheGoldenHash), without the per-code
// decisions, the out-of-line Predictor::expect of dictionary records or the per-code failure
// branches (a fast decode that fails is decoded again by decode_body, which names the fault).
// Encode + decode of bench_codec FoxRun/20Hz/delta: 0.80 and 0.90 of the general bodies' time
// (scripts/ab.sh, 5 pairs per vCPU; docs/codec.md, "Speed, session 13").
enum class FastBody : uint8_t { kNone, kSteady, kDictionary };

// Which straight-line body codes this record's body (kNone: the general one). `axes_known`:
// the header's "every rotation has its likely axis".
FastBody fast_body(const Predictor& predictor, bool off_layout, bool axes_known) {
  if (off_layout || !axes_known) return FastBody::kNone;
  if (predictor.dictionary_codes() != nullptr) return FastBody::kDictionary;
  return predictor.steady() ? FastBody::kSteady : FastBody::kNone;
}

// The expectation of code `i` (node n * kValuesPerNode + slot) of channel `c` in a fast body:
// in the steady state Predictor::expect_steady, or Predictor::expect for a rotation whose three
// references do not share its axis (`steady` false: rare, e.g. a joint turning past 90
// degrees); from the dictionary its code in the dictionary class, bucket 0 (what
// Predictor::expect gives when the rotation axis is the dictionary's).
template <FastBody kBody>
[[gnu::always_inline]] inline Expectation fast_expect(const Predictor& predictor,
                                                      const int32_t* dictionary, std::size_t n,
                                                      std::size_t i, int c, int32_t axis,
                                                      int64_t limit, bool steady) {
  if constexpr (kBody == FastBody::kSteady) {
    if (!steady) {
      return predictor.expect(n, c, static_cast<int>(i - n * kValuesPerNode), axis);
    }
    return predictor.expect_steady(i, limit, static_cast<uint8_t>(c * kKinds + kKindAccel));
  } else {
    Expectation e;
    e.prediction = dictionary[i];
    e.cls = static_cast<uint8_t>(c * kKinds + kKindDictionary);
    return e;
  }
}

// The walk both fast bodies share: for every node in order, `node_start(base, axis)` with the
// node's rotation axis code (3 when it has no rotation channel), then for each coded value in
// stream order `value(i, limit, e)` with its index, limit and expectation. Rotations have
// their likely axis (Predictor::likely_axis): the record's axes are known, so that is the
// pose's axis when encoding (axes_as_expected checked it) and the one decode_body would take.
template <FastBody kBody, class NodeStart, class Value>
[[gnu::always_inline]] inline void walk_fast_body(const PoseFormat& format,
                                                  const Predictor& predictor,
                                                  NodeStart&& node_start, Value&& value) {
  const int32_t* dictionary = predictor.dictionary_codes();
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const uint8_t coded = format.channels[n];
    const std::size_t base = n * kValuesPerNode;
    const int32_t axis = (coded & kChannelRotation) ? predictor.likely_axis(n) : 3;
    node_start(base, axis);
    if (coded == 0) continue;
    const auto channel = [&](int c, int32_t channel_axis, int64_t limit, bool steady)
                             __attribute__((always_inline)) {
      for (int k = 0; k < 3; ++k) {
        const std::size_t i = base + static_cast<std::size_t>(kChannelSlots[c] + k);
        value(i, limit,
              fast_expect<kBody>(predictor, dictionary, n, i, c, channel_axis, limit, steady));
      }
    };
    if (coded & kChannelTranslation) channel(0, 0, kMaxLinearCode, true);
    if (coded & kChannelRotation) {
      channel(1, axis, format.precision[n].rotation_limit,
              kBody != FastBody::kSteady || predictor.steady_channel(n, 1, axis));
    }
    if (coded & kChannelScale) channel(2, 0, kMaxLinearCode, true);
  }
}

// encode_body for a record fast_body() accepted (axes known: none is coded).
template <FastBody kBody>
RangeSink encode_body_fast(const PoseFormat& format, const QuantizedPose& pose,
                           const Predictor& predictor, const RangeSink& sink_in) {
  RangeSink sink(sink_in);
  const int32_t* values = pose.values.data();
  walk_fast_body<kBody>(
      format, predictor, [](std::size_t, int32_t) __attribute__((always_inline)) {},
      [&](std::size_t i, int64_t, const Expectation& e) __attribute__((always_inline)) {
        sink.residual(e, static_cast<int64_t>(values[i]) - e.prediction);
      });
  return RangeSink(sink);  // a copy, as encode_body's
}

// decode_body for a record fast_body() accepted. False when the stream is corrupt or a code
// falls out of range (`out` and `source_io` are then garbage: decode again with decode_body
// from the same start for the error).
template <FastBody kBody>
bool decode_body_fast(const PoseFormat& format, const Predictor& predictor,
                      RangeSource& source_io, QuantizedPose& out) {
  // The decoder's two parts as separate locals (see decode_residual).
  RangeDecoder rc(source_io.rc);
  RawBitReader raw_bits(source_io.raw_bits);
  bool failed = false;
  bool out_of_range = false;
  int32_t* values = out.values.data();
  walk_fast_body<kBody>(
      format, predictor,
      [&](std::size_t base, int32_t axis) __attribute__((always_inline)) {
        int32_t* codes = values + base;
        for (int v = 0; v < kValuesPerNode; ++v) codes[v] = 0;
        codes[kRotationAxis] = axis;
      },
      [&](std::size_t i, int64_t limit, const Expectation& e) __attribute__((always_inline)) {
        const int64_t value = e.prediction + decode_residual(rc, raw_bits, failed, e);
        out_of_range |= value > limit || value < -limit;
        values[i] = static_cast<int32_t>(value);
      });
  source_io.rc = rc;
  source_io.raw_bits = raw_bits;
  return !out_of_range && !failed;
}

// True when every node's rotation axis code is the same in both poses (same format).
bool same_rotation_axes(const PoseFormat& format, const QuantizedPose& a, const QuantizedPose& b) {
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const std::size_t at = n * kValuesPerNode + kRotationAxis;
    if (a.values[at] != b.values[at]) return false;
  }
  return true;
}

}  // namespace

PoseEncoder::PoseEncoder(const PoseFormat& format, ClipDictionary* dictionary)
    : format_(format), dictionary_(dictionary) {}

bool PoseEncoder::encode(const QuantizedPose& pose, const PoseReference& reference,
                         std::vector<uint8_t>& out, const PoseEncodeOptions& options) {
  if (pose.values.size() != format_.node_count() * kValuesPerNode) return false;
  const int references =
      std::clamp(std::min(references_in(reference), options.max_references), 0, kMaxReferences);
  if (reference_problem(format_, reference, references) != nullptr) return false;
  const bool has_recipe = pose.recipe.count > 0;
  if (has_recipe && !recipe_valid(format_, pose.recipe)) return false;
  if (options.coding == PoseCoding::kBitPacked) {
    if (has_recipe) return false;  // the reference stage carries no recipes
    const Predictor predictor(format_, reference, references);
    out.push_back(static_cast<uint8_t>(references | (pose.off_layout ? 4 : 0)));
    (void)encode_body(format_, pose, predictor, BitSink{BitWriter(out)}, false);
    return true;
  }
  if (has_recipe && dictionary_ != nullptr && options.recipe_reproduces_pose && references >= 1 &&
      same_rotation_axes(format_, *reference.baseline, pose)) {
    return encode_range(pose, reference, references, &pose, out);
  }
  if (!has_recipe || dictionary_ == nullptr ||
      !dictionary_->predict(pose.recipe, references >= 1 ? reference.baseline : nullptr,
                            dictionary_codes_)) {
    return encode_range(pose, reference, references, nullptr, out);
  }
  // Both predictions; keep the smaller stream (a recipe the pose does not follow exactly,
  // e.g. with IK on top, may predict worse than the references).
  for (auto& s : scratch_) s.clear();
  encode_range(pose, reference, references, nullptr, scratch_[0]);
  encode_range(pose, reference, references, &dictionary_codes_, scratch_[1]);
  const std::vector<uint8_t>& best =
      scratch_[1].size() < scratch_[0].size() ? scratch_[1] : scratch_[0];
  out.insert(out.end(), best.begin(), best.end());
  return true;
}

bool PoseEncoder::encode_range(const QuantizedPose& pose, const PoseReference& reference,
                               int references, const QuantizedPose* dictionary_codes,
                               std::vector<uint8_t>& out) {
  const std::size_t start = out.size();
  // Returns false, leaving `out` to be trimmed, when the side stream was to be kept but turned
  // out all zeros (a pose equal to its prediction): then the record is coded again without it.
  const auto attempt = [&](bool keep_side_stream) {
    Models models;
    RangeSink sink{RangeEncoder(out), RawBitWriter(raw_scratch_), &models};
    sink.rc.encode(models.side_stream_omitted, keep_side_stream ? 0u : 1u);
    sink.rc.encode(models.full_references, references == kMaxReferences ? 0u : 1u);
    if (references != kMaxReferences) sink.rc.encode_direct(static_cast<uint32_t>(references), 2);
    sink.rc.encode(models.off_layout, pose.off_layout ? 1u : 0u);
    sink.rc.encode(models.has_recipe, pose.recipe.count > 0 ? 1u : 0u);
    if (pose.recipe.count > 0) {
      sink.recipe(format_, pose.recipe, reference, references);
      sink.rc.encode(models.from_dictionary, dictionary_codes != nullptr ? 1u : 0u);
    }
    const Predictor predictor(format_, reference, references, dictionary_codes);
    const bool axes_known = axes_as_expected(format_, pose, predictor);
    sink.rc.encode(models.axes_as_expected, axes_known ? 0u : 1u);
    const auto body = [&]() -> RangeSink {
      switch (fast_body(predictor, pose.off_layout, axes_known)) {
        case FastBody::kSteady:
          return encode_body_fast<FastBody::kSteady>(format_, pose, predictor, sink);
        case FastBody::kDictionary:
          return encode_body_fast<FastBody::kDictionary>(format_, pose, predictor, sink);
        case FastBody::kNone:
          break;
      }
      return encode_body(format_, pose, predictor, sink, axes_known);
    };
    RangeSink done = body();
    if (keep_side_stream && !done.raw_bits.empty() && done.raw_bits.all_zero()) return false;
    // The side stream goes after the range-coded bytes, reversed (range_coder.h).
    const bool side_stream = keep_side_stream && !done.raw_bits.empty();
    done.rc.finish(/*bytes_follow=*/side_stream);
    if (side_stream) done.raw_bits.append_reversed(out);
    return true;
  };
  if (!attempt(true)) {
    out.resize(start);
    (void)attempt(false);
  }
  return true;
}

Status decode_pose(const PoseFormat& format, std::span<const uint8_t> bytes,
                   const PoseReference& reference, QuantizedPose& out, PoseCoding coding,
                   ClipDictionary* dictionary, QuantizedPose* scratch,
                   bool* from_dictionary_out) {
  if (from_dictionary_out != nullptr) *from_dictionary_out = false;
  out.values.resize(format.node_count() * kValuesPerNode);
  // No recipe unless one is decoded (RangeSource::recipe resets it); inputs past `count`
  // are never read (PoseRecipe's contract), so only the count is cleared here.
  out.recipe.count = 0;
  int references = 0;
  auto check_references = [&]() -> Status {
    if (const char* problem = reference_problem(format, reference, references)) {
      return Error{"pose: coded against " + std::to_string(references) +
                   " reference pose(s), but " + problem};
    }
    return {};
  };
  if (coding == PoseCoding::kBitPacked) {
    if (bytes.empty()) return Error{"pose: empty"};
    const uint8_t header = bytes[0];
    if ((header & 0xF8u) != 0) return Error{"pose: reserved header bits set"};
    references = header & 3;
    out.off_layout = (header & 4u) != 0;
    if (Status st = check_references(); !st) return st;
    const Predictor predictor(format, reference, references);
    BitSource source{BitReader(bytes.subspan(1))};
    if (Status st = decode_body(format, predictor, source, out, false); !st) return st;
    if (source.bits.bytes_consumed() != bytes.size() - 1) return Error{"pose: trailing bytes"};
    return {};
  }
  Models models;
  RangeSource source{RangeDecoder(bytes), RawBitReader(bytes), &models};
  const bool side_stream = source.rc.decode(models.side_stream_omitted) == 0;
  // Without a side stream every raw bit is zero: the reader of an empty span supplies them.
  if (!side_stream) source.raw_bits = RawBitReader(std::span<const uint8_t>{});
  references = source.rc.decode(models.full_references) == 0
                   ? kMaxReferences
                   : static_cast<int>(source.rc.decode_direct(2));
  out.off_layout = source.rc.decode(models.off_layout) != 0;
  if (Status st = check_references(); !st) return st;
  bool from_dictionary = false;
  if (source.rc.decode(models.has_recipe) != 0) {
    if (!source.recipe(format, out.recipe, reference, references)) {
      return Error{"pose: recipe names a clip, time or weight out of range"};
    }
    from_dictionary = source.rc.decode(models.from_dictionary) != 0;
  }
  // The dictionary's prediction, made only for records predicted from it (a QuantizedPose
  // is a few hundred bytes to zero: not for every record).
  std::optional<QuantizedPose> local;
  const QuantizedPose* predicted = nullptr;
  if (from_dictionary) {
    if (dictionary == nullptr) {
      return Error{"pose: predicted from the clip dictionary, but the receiver has none"};
    }
    QuantizedPose& prediction = scratch != nullptr ? *scratch : local.emplace();
    if (!dictionary->predict(out.recipe, references >= 1 ? reference.baseline : nullptr,
                             prediction)) {
      return Error{"pose: the recipe does not evaluate on this clip dictionary"};
    }
    predicted = &prediction;
  }
  const Predictor predictor(format, reference, references, predicted);
  const bool axes_known = source.rc.decode(models.axes_as_expected) == 0;
  const FastBody body = fast_body(predictor, out.off_layout, axes_known);
  const RangeSource body_start = source;
  const bool fast_done =
      (body == FastBody::kSteady &&
       decode_body_fast<FastBody::kSteady>(format, predictor, source, out)) ||
      (body == FastBody::kDictionary &&
       decode_body_fast<FastBody::kDictionary>(format, predictor, source, out));
  if (!fast_done) {
    source = body_start;  // the general body again, from the same start: it names the fault
    if (Status st = decode_body(format, predictor, source, out, axes_known); !st) return st;
  }
  // Every byte must have been needed by the range decoder (from the start, with its 4-byte
  // look-ahead) or the side stream (from the end).
  const std::size_t side_stream_bytes = side_stream ? source.raw_bits.bytes_read() : 0;
  if (source.rc.consumed() + side_stream_bytes < bytes.size()) {
    return Error{"pose: unread bytes"};
  }
  if (from_dictionary_out != nullptr) *from_dictionary_out = from_dictionary;
  return {};
}

}  // namespace posecast::protocol
