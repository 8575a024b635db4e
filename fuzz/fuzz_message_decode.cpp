// libFuzzer: decode_message() on arbitrary datagrams must return a message or an error; a
// decoded message must re-encode (every field it holds is in range).

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "posecast/protocol/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace posecast::protocol;
  const auto decoded = decode_message(std::span<const uint8_t>(data, size));
  if (!decoded.ok()) return 0;
  const auto encoded = encode_message(decoded.value());
  if (!encoded.ok()) std::abort();  // decode accepted something encode refuses
  const auto again = decode_message(encoded.value());
  if (!again.ok() || !(again.value() == decoded.value())) std::abort();
  return 0;
}
