#pragma once
// Private to posecast_protocol, a part of pose_codec.cpp: the general pose body, both
// directions: the walk over nodes and channels that codes every code against its Predictor
// expectation, rotation axes first unless known, for any sink or source
// (pose_coding_streams.h). The two common kinds of record take pose_body_fast.h instead.

#include <cstddef>
#include <cstdint>
#include <string>

#include "posecast/protocol/pose_codec.h"
#include "pose_prediction.h"

namespace posecast::protocol::codec {
// Internal linkage on purpose, as when this was pose_codec.cpp itself (its top comment).
namespace {

// For each of the three codes of node `n`'s channel `c` (0..2: T, R, S; `axis` the rotation
// axis for R), in stream order: `code(slot, limit, expectation)` with the code's slot in the
// node, its range +-limit and its Predictor expectation (expect_steady when the predictor is
// steady and the channel's references share `axis`, else expect). Stops at the first `false`
// that `code` returns and returns that code's slot; -1 when all three ran.
template <class Code>
[[gnu::always_inline]] inline int for_each_channel_code(const PoseFormat& format,
                                                         const Predictor& predictor,
                                                         std::size_t n, int c, int32_t axis,
                                                         Code&& code) {
  const int64_t limit = c == 1 ? format.precision[n].rotation_limit : kMaxLinearCode;
  const bool steady = predictor.steady() && predictor.steady_channel(n, c, axis);
  const auto steady_cls = static_cast<uint8_t>(c * kKinds + kKindAccel);
  for (int k = 0; k < 3; ++k) {
    const int slot = kChannelSlots[c] + k;
    const Expectation e =
        steady ? predictor.expect_steady(n * kValuesPerNode + static_cast<std::size_t>(slot),
                                         limit, steady_cls)
               : predictor.expect(n, c, slot, axis);
    if (!code(slot, limit, e)) return slot;
  }
  return -1;
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
      for_each_channel_code(
          format, predictor, n, c, axis,
          [&](int slot, int64_t, const Expectation& e) __attribute__((always_inline)) {
            sink.residual(e, static_cast<int64_t>(codes[slot]) - e.prediction);
            return true;
          });
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
      const int stopped = for_each_channel_code(
          format, predictor, n, c, axis,
          [&](int slot, int64_t limit, const Expectation& e) __attribute__((always_inline)) {
            const int64_t value = e.prediction + source.residual(e);
            if (source.failed || value > limit || value < -limit) return false;
            codes[slot] = static_cast<int32_t>(value);
            return true;
          });
      if (stopped >= 0 && source.failed) {
        return status(Error{"pose: corrupt residual at node " + std::to_string(n)});
      }
      if (stopped >= 0) {
        return status(Error{"pose: node " + std::to_string(n) + " code " +
                            std::to_string(stopped) + " out of range"});
      }
    }
  }
  return status({});
}

}  // namespace
}  // namespace posecast::protocol::codec
