#pragma once
// The pose codec: one entity's quantised pose for one tick <-> bytes, coded against poses the
// receiver is known to hold (docs/codec.md has the format and the measurements).
//
//   reference     prediction                              context (expected |residual|)
//   rest          0 (the rest pose)                       clip-derived |code| prior
//   baseline      the baseline's code                     clip-derived speed prior x age
//   prior         baseline extrapolated at constant       the extrapolated step
//                 velocity from baseline and prior
//   older         the same                                 the step and the acceleration seen
//                                                          over older, prior and baseline
//   dictionary    the pose's recipe evaluated on the      "expect zero"
//                 shared clips (clip_dictionary.h)
// The residuals (code - prediction) go through an adaptive binary range coder whose contexts
// come from that expected magnitude (docs/codec.md has the format and the measurements).
// A pose with a recipe carries it; the encoder then codes the residual against whichever of
// the dictionary prediction and the reference prediction is smaller.
//
// decode_pose() reproduces the encoder's QuantizedPose exactly. It treats its input as hostile:
// any byte string yields the pose or an Error, never undefined behaviour.

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/result.h"

namespace posecast::protocol {

// Entropy stage. kRangeCoded is the wire format; kBitPacked (signed Exp-Golomb, order chosen
// by the same contexts) is kept as the measured reference the range coder has to beat. The
// coding is not in the stream: decode with the coding the encoder used.
enum class PoseCoding : uint8_t { kRangeCoded = 0, kBitPacked = 1 };

// Ages larger than this are refused (a baseline that old is useless for prediction; the
// session drops baselines after 1 s).
inline constexpr uint32_t kMaxReferenceAge = 4096;

// What the receiver holds: up to three earlier quantised poses of the entity, newest first.
// Ages are in server ticks, each > 0 and <= kMaxReferenceAge when its pose is set; a pose may
// only be set when the newer ones are.
struct PoseReference {
  const QuantizedPose* baseline = nullptr;  // snapshot baseline_tick's pose (null: rest)
  uint32_t baseline_age = 0;                // server_tick - baseline_tick
  const QuantizedPose* prior = nullptr;     // snapshot prior_tick's pose
  uint32_t prior_age = 0;                   // baseline_tick - prior_tick
  const QuantizedPose* older = nullptr;     // snapshot older_tick's pose
  uint32_t older_age = 0;                   // prior_tick - older_tick
  uint32_t tick_rate_hz = 60;               // converts ages to time for the clip priors
};

// How many of `ref`'s poses are set, newest first (0..3): the references a record coded
// against it may use.
inline int reference_count(const PoseReference& ref) {
  if (ref.baseline == nullptr) return 0;
  if (ref.prior == nullptr) return 1;
  return ref.older == nullptr ? 2 : 3;
}

// The root reference of a record whose pose is coded against the first `references` (0..3) of
// `ref`: the baseline's held root (root_coding.h), when it uses one. Both sides take it from the
// record's own reference count (the encoder's reference_count(ref); the decoder's
// PoseDecodeInfo::references), so they agree whatever else either holds.
inline RootReference root_reference(const PoseReference& ref, int references) {
  if (ref.baseline == nullptr || references < 1) return RootReference{};
  return RootReference{&ref.baseline->root, ref.baseline_age};
}

struct PoseEncodeOptions {
  PoseCoding coding = PoseCoding::kRangeCoded;
  // How many reference poses to use at most (0..3): fewer than given is for measuring what
  // each one buys (docs/codec.md).
  int max_references = 3;
  // The caller vouches that `pose` is exactly ClipDictionary::predict of its own recipe:
  // PoseQuantizer::quantize, without a reference, of the pose the recipe evaluates to
  // (ClipDictionary::evaluate; the server attaches recipes only to such poses and quantises
  // them without a reference, and World and dictionary evaluate with the same jobs, bit for
  // bit). The encoder then takes the pose's codes as the prediction without evaluating the
  // clips (the costly part of dictionary encoding) and sends an exact record (header and
  // recipe only). A pose quantised against a reference may differ from its prediction in a
  // rotation axis: the receiver would then decode other codes, so do not vouch for it.
  bool recipe_reproduces_pose = false;
};

// Encodes poses of one format. Holds no per-entity state; keep one per thread.
class PoseEncoder {
 public:
  // `format` (and `dictionary`, when given) must outlive the encoder. Without a dictionary,
  // recipes are still sent but never used for prediction.
  explicit PoseEncoder(const PoseFormat& format, ClipDictionary* dictionary = nullptr);

  // Appends the encoding of `pose` to `out`. `pose` must come from PoseQuantizer::quantize
  // for this format (the entity's previous tick as reference keeps rotation axes stable; a
  // pose with a recipe predicts best quantised without one, as the dictionary predicts).
  // Returns false when a pose or reference has the wrong size, a reference age is out of
  // range, or the pose's recipe is invalid (clip index, time, weight); the bit-packed stage
  // refuses poses with a recipe.
  bool encode(const QuantizedPose& pose, const PoseReference& reference,
              std::vector<uint8_t>& out, const PoseEncodeOptions& options = {});

 private:
  bool encode_range(const QuantizedPose& pose, const PoseReference& reference, int references,
                    const QuantizedPose* dictionary_codes, std::vector<uint8_t>& out);

  const PoseFormat& format_;
  ClipDictionary* dictionary_;
  QuantizedPose dictionary_codes_;
  std::vector<uint8_t> scratch_[2];
  std::vector<uint8_t> raw_scratch_;    // the side stream of a record (range_coder.h)
  std::vector<uint8_t> range_scratch_;  // its range-coded bytes until they are appended
};

// What decode_pose() found in a record.
struct PoseDecodeInfo {
  bool from_dictionary = false;  // predicted from the clip dictionary
  // Predicted from the dictionary and equal to the prediction: the record sent no body, and
  // the codes are dictionary->predict(out.recipe) (a function of the recipe alone).
  bool exact = false;
  // Exact, and decode_pose() was asked to leave the codes to the caller (defer_exact):
  // out.values has the format's size but not the codes, until the caller runs
  // dictionary->predict(out.recipe, out).
  bool deferred = false;
  int references = 0;  // reference poses the record is coded against (0..3)
};

// Decodes into `out` (resized as needed; reuse it to avoid allocation). Errors name the
// reason: "pose: needs 2 reference poses, the receiver holds 1", "pose: node 3 code 5 out of
// range", ... `out` is unspecified after an error.
// A record predicted from the clip dictionary needs `dictionary` (else an Error says so).
// `scratch` receives the prediction of a record that differs from it (reuse it to avoid
// allocation); an exact record's prediction goes straight into `out`. `info` (nullable) says
// which of these the record was: after success, the prediction is in `*scratch` (when given)
// for a dictionary record that is not exact, in `out` for an exact one, and
// dictionary->predicted_rotations() describes it (dequantize_pose_reusing); not when deferred.
// `defer_exact`: an exact record's codes are not computed (PoseDecodeInfo::deferred); its
// recipe is still checked against the dictionary (ClipDictionary::valid), but whether it
// quantises is known only when predicted: a hostile recipe (a weight of 1e30, say) decodes
// here, deferred, and its predict() fails later, which the caller must handle (the network
// client then treats the pose as one it does not hold). Without defer_exact such a record is
// an error here. The references' codes are read only by records not predicted from the
// dictionary (peek_pose_record tells which a record is).
Status decode_pose(const PoseFormat& format, std::span<const uint8_t> bytes,
                   const PoseReference& reference, QuantizedPose& out,
                   PoseCoding coding = PoseCoding::kRangeCoded,
                   ClipDictionary* dictionary = nullptr, QuantizedPose* scratch = nullptr,
                   PoseDecodeInfo* info = nullptr, bool defer_exact = false);

// The flags at the start of a range-coded record, read without decoding the rest: whether it
// is predicted from the clip dictionary and whether it is exact (PoseDecodeInfo). Any bytes
// give some flags; decode_pose() is what checks a record.
struct PoseRecordFlags {
  bool from_dictionary = false;
  bool exact = false;
  int references = 0;  // as the record's header says (0..3)
};
PoseRecordFlags peek_pose_record(std::span<const uint8_t> bytes);

}  // namespace posecast::protocol
