// libFuzzer: decode_pose() on arbitrary bytes must return a pose with every code in range, or
// an error; never crash, leak, read out of bounds or hit undefined behaviour.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "pose_fuzz_setup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace posecast;
  const fuzz::PoseFuzzSetup& setup = fuzz::pose_fuzz_setup();
  if (!setup.format || setup.poses.size() < 5 || !setup.dictionary) std::abort();  // broken setup
  if (size < 2) return 0;
  const protocol::PoseReference ref = fuzz::fuzz_reference(setup, data[0]);
  const auto coding = (data[1] & 1) ? protocol::PoseCoding::kBitPacked : protocol::PoseCoding::kRangeCoded;
  protocol::ClipDictionary* dictionary = (data[1] & 2) ? setup.dictionary.get() : nullptr;
  // Bit 2: an exact record's codes deferred to the caller (as the network client does), then
  // computed. A hostile recipe (a huge weight, say) may pass decode_pose's checks and still
  // fail to quantise: the prediction then fails cleanly (the client marks the pose unusable).
  const bool defer_exact = (data[1] & 4) != 0;
  const std::span<const uint8_t> bytes(data + 2, size - 2);
  (void)protocol::peek_pose_record(bytes);  // any bytes give some flags
  protocol::QuantizedPose out;
  protocol::PoseDecodeInfo info;
  const Status st = protocol::decode_pose(*setup.format, bytes, ref, out, coding, dictionary,
                                          nullptr, &info, defer_exact);
  if (!st.ok()) return 0;
  if (info.deferred) {
    if (dictionary == nullptr) std::abort();  // deferred without a dictionary to compute it
    if (!dictionary->predict(out.recipe, out)) return 0;
  }
  // A decoded pose must be usable: dequantise it and check the codes' ranges.
  const protocol::PoseFormat& f = *setup.format;
  for (std::size_t n = 0; n < f.node_count(); ++n) {
    const int32_t* codes = &out.values[n * protocol::kValuesPerNode];
    if (codes[protocol::kRotationAxis] < 0 || codes[protocol::kRotationAxis] > 3) std::abort();
    for (int k = 0; k < 3; ++k) {
      const int32_t c = codes[protocol::kRotationCode + k];
      if (c > f.precision[n].rotation_limit || c < -f.precision[n].rotation_limit) std::abort();
    }
  }
  if (out.recipe.count > 0 && !setup.dictionary->valid(out.recipe)) std::abort();
  std::vector<Transform> pose(f.node_count());
  protocol::dequantize_pose(f, out, pose);
  return 0;
}
