#include "posecast/replay/lz_codec.h"

#include <algorithm>
#include <cstring>

#include "posecast/byte_io.h"

namespace posecast::replay {
namespace {

constexpr std::size_t kMinMatch = 4;
constexpr int kHashBits = 14;
constexpr uint32_t kNoPosition = 0xFFFFFFFFu;
// Longer distances cost more varint bytes than they save on the short matches they find.
constexpr std::size_t kMaxDistance = 1u << 20;

uint32_t read4(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint32_t hash4(uint32_t v) { return (v * 2654435761u) >> (32 - kHashBits); }

}  // namespace

void lz_compress(std::span<const uint8_t> in, std::vector<uint8_t>& out) {
  out.clear();
  ByteWriter w(out);
  // Greedy parse with a single-entry hash table of the last position of each 4-byte prefix.
  std::vector<uint32_t> table(std::size_t{1} << kHashBits, kNoPosition);
  const std::size_t n = in.size();
  std::size_t literal_start = 0;
  std::size_t i = 0;
  while (n >= kMinMatch && i + kMinMatch <= n) {
    const uint32_t v = read4(&in[i]);
    const uint32_t h = hash4(v);
    const uint32_t candidate = table[h];
    table[h] = static_cast<uint32_t>(i);
    if (candidate != kNoPosition && i - candidate <= kMaxDistance && read4(&in[candidate]) == v) {
      std::size_t length = kMinMatch;
      while (i + length < n && in[candidate + length] == in[i + length]) ++length;
      w.varint(i - literal_start);
      w.bytes(in.subspan(literal_start, i - literal_start));
      w.varint(length - kMinMatch);
      w.varint(i - candidate);
      // Index a few positions inside the match so the next repeats are found.
      for (std::size_t k = i + 1; k < i + length && k + kMinMatch <= n; k += 3) {
        table[hash4(read4(&in[k]))] = static_cast<uint32_t>(k);
      }
      i += length;
      literal_start = i;
    } else {
      ++i;
    }
  }
  w.varint(n - literal_start);
  w.bytes(in.subspan(literal_start));
}

bool lz_decompress(std::span<const uint8_t> in, std::size_t raw_size, std::vector<uint8_t>& out,
                   std::string& error) {
  out.clear();
  // Not raw_size itself: a hostile size must not allocate before the data proves it.
  out.reserve(std::min(raw_size, in.size() * 8));
  ByteReader r(in);
  while (true) {
    const uint64_t literals = r.varint("literal_count", raw_size - out.size());
    const std::span<const uint8_t> bytes = r.bytes(static_cast<std::size_t>(literals), "literals");
    if (!r.ok()) break;
    out.insert(out.end(), bytes.begin(), bytes.end());
    if (out.size() == raw_size) {
      if (r.remaining() != 0) r.fail("payload", std::to_string(r.remaining()) + " bytes after the end");
      break;
    }
    const uint64_t extra = r.varint("match_length", raw_size - out.size());
    const uint64_t distance = r.varint("distance", out.size());
    if (!r.ok()) break;
    const std::size_t length = static_cast<std::size_t>(extra) + kMinMatch;
    if (distance == 0) {
      r.fail("distance", "0");
      break;
    }
    if (length > raw_size - out.size()) {
      r.fail("match_length", "runs past the decompressed size");
      break;
    }
    // Byte by byte: a match may overlap the bytes it produces (distance < length).
    const std::size_t from = out.size() - static_cast<std::size_t>(distance);
    for (std::size_t k = 0; k < length; ++k) {
      const uint8_t b = out[from + k];  // a copy: push_back may reallocate
      out.push_back(b);
    }
  }
  if (!r.ok()) {
    error = "compressed payload: " + r.error();
    return false;
  }
  return true;
}

}  // namespace posecast::replay
