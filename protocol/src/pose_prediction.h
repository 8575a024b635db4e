#pragma once
// Private to posecast_protocol, a part of pose_codec.cpp: how each code of a pose is predicted
// and which context (residual class and bucket) codes its residual: Predictor and Expectation,
// the same on both sides of the codec, and the context classes residual_tables.h is indexed
// by. The body loops inline Predictor::expect_steady (pose_body.h, pose_body_fast.h).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/residual_tables.h"

namespace posecast::protocol::codec {
// Internal linkage on purpose, as when this was pose_codec.cpp itself (its top comment).
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
static_assert(kClasses + 2 == static_cast<int>(kResidualClasses),
              "residual_tables.h has one class per channel x kind, plus recipe times and weights");

// A code's prediction and the context its residual is coded in (class and bucket).
struct Expectation {
  int64_t prediction = 0;
  uint32_t bucket = 0;  // bit length of the expected |residual|
  uint8_t cls = 0;
};

// |v|, for v > INT64_MIN.
uint64_t magnitude(int64_t v) { return v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v); }

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

// Per code slot of a node: its index among the node's prior components (PoseFormat
// value_prior, speed_prior); -1 for the rotation axis code, which has none.
constexpr int kPriorSlot[kValuesPerNode] = {0, 1, 2, -1, 3, 4, 5, 6, 7, 8};
// Per channel (T, R, S): the slot of its first code, and its bit in PoseFormat::channels.
constexpr int kChannelSlots[3] = {kTranslationCode, kRotationCode, kScaleCode};
constexpr uint8_t kChannelBits[3] = {kChannelTranslation, kChannelRotation, kChannelScale};

// Null when the first `count` (0..3) references of `ref` are usable for `format`, else the
// reason (the decoder's error names it).
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
  // reference prediction for every code. Uses the first `references` (0..3) poses of `ref`,
  // which reference_problem() must have accepted. Keeps `format`, `ref` and
  // `dictionary` by reference: they must outlive the predictor.
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

}  // namespace
}  // namespace posecast::protocol::codec
