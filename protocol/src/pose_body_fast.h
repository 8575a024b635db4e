#pragma once
// Private to posecast_protocol, a part of pose_codec.cpp: the straight-line pose bodies of the
// common records (the steady state, with or without coded rotation axes, and a record
// predicted from the clip dictionary), range-coded only; the same bytes as the general body
// (pose_body.h). The walk and its per-code steps are always_inline: this is the codec's hot
// loop.

#include <cstddef>
#include <cstdint>

#include "posecast/protocol/pose_codec.h"
#include "pose_coding_streams.h"
#include "pose_prediction.h"

namespace posecast::protocol::codec {
// Internal linkage on purpose, as when this was pose_codec.cpp itself (its top comment).
namespace {

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
// (side by side, medians of pairs; docs/codec.md, "Speed").
//
// kSteadyAxesCoded is the steady state when some rotation's axis is not its likely one (the
// header's axes bit is 1, so every rotation codes its axis first, as in encode_body): about
// one Fox Run record in seven at 20 Hz, a joint whose largest quaternion component changed
// since the baseline. Without it those records would take the general bodies.
enum class FastBody : uint8_t { kNone, kSteady, kSteadyAxesCoded, kDictionary };

// Which straight-line body codes this record's body (kNone: the general one). `axes_known`:
// the header's "every rotation has its likely axis".
FastBody fast_body(const Predictor& predictor, bool off_layout, bool axes_known) {
  if (off_layout) return FastBody::kNone;
  if (!axes_known) return predictor.steady() ? FastBody::kSteadyAxesCoded : FastBody::kNone;
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
  if constexpr (kBody != FastBody::kDictionary) {
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

// The walk the fast bodies share: for every node in order, `node_start(n, base, axis)` with
// the node's likely rotation axis code (Predictor::likely_axis; 3 when it has no rotation
// channel), which returns the node's axis, then for each coded value in stream order
// `value(i, limit, e)` with its index, limit and expectation. When the record's axes are
// known, node_start returns the likely axis: that is the pose's axis when encoding
// (axes_as_expected checked it) and the one decode_body would take. In kSteadyAxesCoded,
// node_start codes the axis of a node with a rotation channel (encode_body's order) and
// returns it.
template <FastBody kBody, class NodeStart, class Value>
[[gnu::always_inline]] inline void walk_fast_body(const PoseFormat& format,
                                                  const Predictor& predictor,
                                                  NodeStart&& node_start, Value&& value) {
  const int32_t* dictionary = predictor.dictionary_codes();
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const uint8_t coded = format.channels[n];
    const std::size_t base = n * kValuesPerNode;
    const int32_t axis =
        node_start(n, base, (coded & kChannelRotation) ? predictor.likely_axis(n) : 3);
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
              kBody == FastBody::kDictionary || predictor.steady_channel(n, 1, axis));
    }
    if (coded & kChannelScale) channel(2, 0, kMaxLinearCode, true);
  }
}

// encode_body for a record fast_body() accepted.
template <FastBody kBody>
RangeSink encode_body_fast(const PoseFormat& format, const QuantizedPose& pose,
                           const Predictor& predictor, const RangeSink& sink_in) {
  RangeSink sink(sink_in);
  const int32_t* values = pose.values.data();
  walk_fast_body<kBody>(
      format, predictor,
      [&](std::size_t n, std::size_t base, int32_t likely) __attribute__((always_inline)) {
        if constexpr (kBody == FastBody::kSteadyAxesCoded) {
          if (format.channels[n] & kChannelRotation) {
            const int32_t axis = values[base + kRotationAxis];
            sink.axis(predictor.reference_axis(n), axis);
            return axis;
          }
        }
        return likely;
      },
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
      [&](std::size_t n, std::size_t base, int32_t likely) __attribute__((always_inline)) {
        int32_t* codes = values + base;
        for (int v = 0; v < kValuesPerNode; ++v) codes[v] = 0;
        int32_t axis = likely;
        if constexpr (kBody == FastBody::kSteadyAxesCoded) {
          if (format.channels[n] & kChannelRotation) {
            axis = decode_axis(rc, *source_io.models, predictor.reference_axis(n));
          }
        }
        codes[kRotationAxis] = axis;
        return axis;
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

}  // namespace
}  // namespace posecast::protocol::codec
