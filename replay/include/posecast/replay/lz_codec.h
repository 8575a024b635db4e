#pragma once
// A small LZ77 byte compressor for checkpoint payloads (world snapshots repeat the same field
// layout for every entity and compress 2-4x). Own format, documented in
// docs/recording-format.md ("Compressed payloads"), so a recording never depends on an external
// library's version:
//
//   sequence* where sequence = varint literal_count, literal bytes,
//                              then, unless the output is complete: varint (match_length - 4),
//                              varint distance (1.. bytes already produced)
//
// The decoder knows the decompressed size (stored beside the payload) and checks every count
// and distance against it: hostile input gives an error, never an out-of-bounds access.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace posecast::replay {

// Replaces `out` with the compressed form of `in`. Deterministic (same input, same bytes).
void lz_compress(std::span<const uint8_t> in, std::vector<uint8_t>& out);

// Replaces `out` with exactly `raw_size` decompressed bytes. False with `error` set when `in`
// is malformed or does not produce exactly raw_size bytes.
bool lz_decompress(std::span<const uint8_t> in, std::size_t raw_size, std::vector<uint8_t>& out,
                   std::string& error);

}  // namespace posecast::replay
