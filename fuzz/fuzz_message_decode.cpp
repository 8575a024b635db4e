// libFuzzer: decode_message() on arbitrary datagrams must return a message or an error; a
// decoded message must re-encode (every field it holds is in range). A snapshot's records'
// root bytes go through decode_root (with and without a baseline): an error or an in-range root.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "posecast/protocol/messages.h"
#include "posecast/protocol/root_coding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace posecast::protocol;
  const auto decoded = decode_message(std::span<const uint8_t>(data, size));
  if (!decoded.ok()) return 0;
  const auto encoded = encode_message(decoded.value());
  if (!encoded.ok()) std::abort();  // decode accepted something encode refuses
  const auto again = decode_message(encoded.value());
  if (!again.ok()) std::abort();
  // Equal, or (a HitQuery passes NaN floats through, and NaN != NaN) encoding to the same bytes.
  if (!(again.value() == decoded.value())) {
    const auto re_encoded = encode_message(again.value());
    if (!re_encoded.ok() || re_encoded.value() != encoded.value()) std::abort();
  }
  if (const auto* snapshot = std::get_if<Snapshot>(&decoded.value())) {
    const QuantizedRoot base{81920, 0, -4096, 1000, 2560, 0, -512, 16, 128, 0, 0, 0};
    for (const EntityPose& record : snapshot->entities) {
      for (const RootReference& ref : {RootReference{}, RootReference{&base, 3}}) {
        QuantizedRoot root;
        if (decode_root(record.root_bytes(), ref, root).ok() && !root_in_range(root)) std::abort();
      }
    }
  }
  return 0;
}
