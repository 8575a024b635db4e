// Pose codec: the record format and its entry points (docs/codec.md).
//
// Range-coded stream (the wire format, docs/codec.md):
//   side stream:     adaptive bit "omitted" (its bits would all be zero)
//   reference count: adaptive bit "uses 3" (the steady state), else 2 raw bits (0..2)
//   off_layout:      adaptive bit
//   recipe:          adaptive bit "has one", then adaptive "predicted from it" and, when
//                    predicted, adaptive "inexact" (0: the pose equals the prediction, and
//                    nothing follows the recipe), then the recipe (adaptive "crossfade" and
//                    "from a frozen pose", counts, motion parameters, fade states, steady
//                    time, inputs; docs/codec.md)
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
//
// This file: the entry points (PoseEncoder, decode_pose): the record header and the choice of
// body. Its parts, in the order they build on each other: pose_prediction.h (Predictor),
// recipe_prediction.h (what a recipe's fields are expected to be), pose_coding_streams.h (the
// range-coded and bit-packed sinks and sources), recipe_coding.h (a recipe on the wire),
// pose_body.h (the general body), pose_body_fast.h (the straight-line bodies).
// They are headers included here only, in posecast::protocol::codec, and everything in them
// has internal linkage (an anonymous namespace), so GCC inlines the general bodies into the
// entry points that call them once and keeps the fast bodies' registers as tight as in one
// file. With external linkage (the named namespace alone) the general bodies stay out of line
// and decode_pose of bench_codec FoxRun/20Hz/delta takes 3.5 % more instructions per call. A new part that another .cpp needs
// belongs in a header of its own, not here.

#include "posecast/protocol/pose_codec.h"

#include <algorithm>
#include <string>

#include "posecast/protocol/bit_io.h"
#include "posecast/protocol/range_coder.h"
#include "pose_prediction.h"
#include "recipe_prediction.h"
#include "pose_coding_streams.h"
#include "recipe_coding.h"
#include "pose_body.h"
#include "pose_body_fast.h"

namespace posecast::protocol {
namespace {

constexpr int kMaxReferences = 3;

// Whether every coded rotation of `pose` has its likely axis (Predictor::likely_axis): then
// the range-coded stream says so once instead of once per node.
bool axes_as_expected(const PoseFormat& format, const QuantizedPose& pose,
                      const codec::Predictor& predictor) {
  for (std::size_t n = 0; n < format.node_count(); ++n) {
    const uint8_t coded = pose.off_layout ? 7 : format.channels[n];
    if ((coded & kChannelRotation) &&
        pose.values[n * kValuesPerNode + kRotationAxis] != predictor.likely_axis(n)) {
      return false;
    }
  }
  return true;
}

// The flags that open a range-coded record, in stream order (the file's top comment): read
// by decode_pose and, alone, by peek_pose_record, so the two cannot disagree.
struct RecordHeader {
  bool side_stream = false;
  int references = 0;
  bool off_layout = false;
  bool has_recipe = false;
  bool from_dictionary = false;
  bool exact = false;
};

RecordHeader decode_record_header(RangeDecoder& rc, codec::Models& models) {
  RecordHeader h;
  h.side_stream = rc.decode(models.side_stream_omitted) == 0;
  h.references = rc.decode(models.full_references) == 0 ? kMaxReferences
                                                         : static_cast<int>(rc.decode_direct(2));
  h.off_layout = rc.decode(models.off_layout) != 0;
  h.has_recipe = rc.decode(models.has_recipe) != 0;
  if (h.has_recipe) {
    h.from_dictionary = rc.decode(models.from_dictionary) != 0;
    h.exact = h.from_dictionary && rc.decode(models.dictionary_inexact) == 0;
  }
  return h;
}

}  // namespace

PoseEncoder::PoseEncoder(const PoseFormat& format, ClipDictionary* dictionary)
    : format_(format), dictionary_(dictionary) {}

bool PoseEncoder::encode(const QuantizedPose& pose, const PoseReference& reference,
                         std::vector<uint8_t>& out, const PoseEncodeOptions& options) {
  if (pose.values.size() != format_.node_count() * kValuesPerNode) return false;
  const int references =
      std::clamp(std::min(reference_count(reference), options.max_references), 0, kMaxReferences);
  if (codec::reference_problem(format_, reference, references) != nullptr) return false;
  const bool has_recipe = pose.recipe.count > 0;
  if (has_recipe && !codec::recipe_valid(format_, pose.recipe)) return false;
  if (options.coding == PoseCoding::kBitPacked) {
    if (has_recipe) return false;  // the reference stage carries no recipes
    const codec::Predictor predictor(format_, reference, references);
    out.push_back(static_cast<uint8_t>(references | (pose.off_layout ? 4 : 0)));
    (void)codec::encode_body(format_, pose, predictor, codec::BitSink{BitWriter(out)}, false);
    return true;
  }
  if (has_recipe && dictionary_ != nullptr && options.recipe_reproduces_pose) {
    return encode_range(pose, reference, references, &pose, out);
  }
  if (!has_recipe || dictionary_ == nullptr || !dictionary_->predict(pose.recipe, dictionary_codes_)) {
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
  // A pose equal to its dictionary prediction (codes and hence the layout flag, which they
  // determine) is sent as the header and the recipe alone.
  const bool exact = dictionary_codes != nullptr && dictionary_codes->values == pose.values;
  // Returns false, leaving `out` to be trimmed, when the side stream was to be kept but turned
  // out all zeros: then the record is coded again without it.
  const auto attempt = [&](bool keep_side_stream) {
    const auto finish = [&](codec::RangeSink& done) {
      if (keep_side_stream && !done.raw_bits.empty() && done.raw_bits.all_zero()) return false;
      // The side stream goes after the range-coded bytes, reversed (range_coder.h).
      const bool side_stream = keep_side_stream && !done.raw_bits.empty();
      done.rc.finish(/*bytes_follow=*/side_stream);
      if (side_stream) done.raw_bits.append_reversed(out);
      return true;
    };
    codec::Models models;
    codec::RangeSink sink{RangeEncoder(out, range_scratch_), RawBitWriter(raw_scratch_), &models};
    sink.rc.encode(models.side_stream_omitted, keep_side_stream ? 0u : 1u);
    sink.rc.encode(models.full_references, references == kMaxReferences ? 0u : 1u);
    if (references != kMaxReferences) sink.rc.encode_direct(static_cast<uint32_t>(references), 2);
    sink.rc.encode(models.off_layout, pose.off_layout ? 1u : 0u);
    sink.rc.encode(models.has_recipe, pose.recipe.count > 0 ? 1u : 0u);
    if (pose.recipe.count > 0) {
      sink.rc.encode(models.from_dictionary, dictionary_codes != nullptr ? 1u : 0u);
      if (dictionary_codes != nullptr) sink.rc.encode(models.dictionary_inexact, exact ? 0u : 1u);
      sink.recipe(format_, pose.recipe, reference, references);
      if (exact) return finish(sink);  // the codes are the prediction's: no axes, no body
    }
    const codec::Predictor predictor(format_, reference, references, dictionary_codes);
    const bool axes_known = axes_as_expected(format_, pose, predictor);
    sink.rc.encode(models.axes_as_expected, axes_known ? 0u : 1u);
    const auto body = [&]() -> codec::RangeSink {
      switch (codec::fast_body(predictor, pose.off_layout, axes_known)) {
        case codec::FastBody::kSteady:
          return codec::encode_body_fast<codec::FastBody::kSteady>(format_, pose, predictor, sink);
        case codec::FastBody::kSteadyAxesCoded:
          return codec::encode_body_fast<codec::FastBody::kSteadyAxesCoded>(format_, pose,
                                                                            predictor, sink);
        case codec::FastBody::kDictionary:
          return codec::encode_body_fast<codec::FastBody::kDictionary>(format_, pose, predictor,
                                                                       sink);
        case codec::FastBody::kNone:
          break;
      }
      return codec::encode_body(format_, pose, predictor, sink, axes_known);
    };
    codec::RangeSink done = body();
    return finish(done);
  };
  if (!attempt(true)) {
    out.resize(start);
    (void)attempt(false);
  }
  return true;
}

Status decode_pose(const PoseFormat& format, std::span<const uint8_t> bytes,
                   const PoseReference& reference, QuantizedPose& out, PoseCoding coding,
                   ClipDictionary* dictionary, QuantizedPose* scratch, PoseDecodeInfo* info,
                   bool defer_exact) {
  if (info != nullptr) *info = PoseDecodeInfo{};
  out.values.resize(format.node_count() * kValuesPerNode);
  // No recipe unless one is decoded (RangeSource::recipe resets it); inputs past `count`
  // are never read (PoseRecipe's contract), so only the count is cleared here.
  out.recipe.count = 0;
  int references = 0;
  auto check_references = [&]() -> Status {
    if (const char* problem = codec::reference_problem(format, reference, references)) {
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
    const codec::Predictor predictor(format, reference, references);
    codec::BitSource source{BitReader(bytes.subspan(1))};
    if (Status st = codec::decode_body(format, predictor, source, out, false); !st) return st;
    if (source.bits.bytes_consumed() != bytes.size() - 1) return Error{"pose: trailing bytes"};
    if (info != nullptr) info->references = references;
    return {};
  }
  codec::Models models;
  codec::RangeSource source{RangeDecoder(bytes), RawBitReader(bytes), &models};
  const RecordHeader header = decode_record_header(source.rc, models);
  const bool side_stream = header.side_stream;
  const bool from_dictionary = header.from_dictionary;
  const bool exact = header.exact;
  // Without a side stream every raw bit is zero: the reader of an empty span supplies them.
  if (!side_stream) source.raw_bits = RawBitReader(std::span<const uint8_t>{});
  references = header.references;
  out.off_layout = header.off_layout;
  if (Status st = check_references(); !st) return st;
  if (header.has_recipe && !source.recipe(format, out.recipe, reference, references)) {
    return Error{"pose: recipe names a clip, time or weight out of range"};
  }
  if (from_dictionary && dictionary == nullptr) {
    return Error{"pose: predicted from the clip dictionary, but the receiver has none"};
  }
  // (Built only when returned: a string per record would be an allocation per decode.)
  const char* const recipe_refused = "pose: the recipe does not evaluate on this clip dictionary";
  // Every byte must have been needed by the range decoder (from the start, with its 4-byte
  // look-ahead) or the side stream (from the end).
  const auto all_bytes_read = [&] {
    const std::size_t side_stream_bytes = side_stream ? source.raw_bits.bytes_read() : 0;
    return source.rc.consumed() + side_stream_bytes >= bytes.size();
  };
  if (exact) {  // nothing follows the recipe
    if (!all_bytes_read()) return Error{"pose: unread bytes"};
    if (!dictionary->valid(out.recipe)) return Error{recipe_refused};
    if (info != nullptr) *info = PoseDecodeInfo{true, true, defer_exact, references};
    if (defer_exact) return {};
    if (!dictionary->predict(out.recipe, out)) return Error{recipe_refused};
    return {};
  }
  // The dictionary's prediction, made only for records predicted from it. A caller without a
  // scratch gets one here, in a call of its own: a QuantizedPose local to this function (even
  // an empty std::optional of one) is a few hundred bytes that GCC zeroes on every call, 1-2 %
  // of a steady record's decode (perf).
  if (from_dictionary && scratch == nullptr) {
    QuantizedPose local;
    return decode_pose(format, bytes, reference, out, coding, dictionary, &local, info,
                       defer_exact);
  }
  const QuantizedPose* predicted = nullptr;
  if (from_dictionary) {
    if (!dictionary->predict(out.recipe, *scratch)) return Error{recipe_refused};
    predicted = scratch;
  }
  const codec::Predictor predictor(format, reference, references, predicted);
  const bool axes_known = source.rc.decode(models.axes_as_expected) == 0;
  const codec::FastBody body = codec::fast_body(predictor, out.off_layout, axes_known);
  const codec::RangeSource body_start = source;
  const bool fast_done =
      (body == codec::FastBody::kSteady &&
       codec::decode_body_fast<codec::FastBody::kSteady>(format, predictor, source, out)) ||
      (body == codec::FastBody::kSteadyAxesCoded &&
       codec::decode_body_fast<codec::FastBody::kSteadyAxesCoded>(format, predictor, source,
                                                                  out)) ||
      (body == codec::FastBody::kDictionary &&
       codec::decode_body_fast<codec::FastBody::kDictionary>(format, predictor, source, out));
  if (!fast_done) {
    source = body_start;  // the general body again, from the same start: it names the fault
    if (Status st = codec::decode_body(format, predictor, source, out, axes_known); !st) return st;
  }
  if (!all_bytes_read()) return Error{"pose: unread bytes"};
  if (info != nullptr) {
    info->from_dictionary = from_dictionary;
    info->references = references;
  }
  return {};
}

PoseRecordFlags peek_pose_record(std::span<const uint8_t> bytes) {
  codec::Models models;
  RangeDecoder rc(bytes);
  const RecordHeader header = decode_record_header(rc, models);
  return PoseRecordFlags{header.from_dictionary, header.exact, header.references};
}

}  // namespace posecast::protocol
