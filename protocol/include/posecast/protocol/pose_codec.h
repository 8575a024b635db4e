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

struct PoseEncodeOptions {
  PoseCoding coding = PoseCoding::kRangeCoded;
  // How many reference poses to use at most (0..3): fewer than given is for measuring what
  // each one buys (docs/codec.md).
  int max_references = 3;
  // The caller vouches that `pose` is exactly PoseQuantizer::quantize of the pose its recipe
  // evaluates to (ClipDictionary::evaluate; the server attaches recipes only to such poses, and
  // World and dictionary evaluate with the same jobs, bit for bit). Quantisation depends on its
  // reference only through the reference's rotation axes, so whenever the baseline's axes equal
  // the pose's own, ClipDictionary::predict would return the pose's codes: the encoder then
  // takes them as the prediction without evaluating the clips (the costly part of dictionary
  // encoding) and codes an all-zero residual. The bytes are what the full path would send
  // whenever it would choose the dictionary.
  bool recipe_reproduces_pose = false;
};

// Encodes poses of one format. Holds no per-entity state; keep one per thread.
class PoseEncoder {
 public:
  // `format` (and `dictionary`, when given) must outlive the encoder. Without a dictionary,
  // recipes are still sent but never used for prediction.
  explicit PoseEncoder(const PoseFormat& format, ClipDictionary* dictionary = nullptr);

  // Appends the encoding of `pose` to `out`. `pose` must come from PoseQuantizer::quantize
  // for this format (the entity's previous tick as reference keeps rotation axes stable).
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
  std::vector<uint8_t> raw_scratch_;  // the side stream of a record (range_coder.h)
};

// Decodes into `out` (resized as needed; reuse it to avoid allocation). Errors name the
// reason: "pose: needs 2 reference poses, the receiver holds 1", "pose: node 3 code 5 out of
// range", ... `out` is unspecified after an error.
// A record predicted from the clip dictionary needs `dictionary` (else an Error says so);
// `scratch` receives the dictionary's prediction (reuse it to avoid allocation).
// `from_dictionary` (nullable) is set to whether this record was predicted from the
// dictionary: then, after success, `*scratch` (when given) and
// dictionary->predicted_rotations() describe the prediction (dequantize_pose_reusing).
Status decode_pose(const PoseFormat& format, std::span<const uint8_t> bytes,
                   const PoseReference& reference, QuantizedPose& out,
                   PoseCoding coding = PoseCoding::kRangeCoded,
                   ClipDictionary* dictionary = nullptr, QuantizedPose* scratch = nullptr,
                   bool* from_dictionary = nullptr);

}  // namespace posecast::protocol
