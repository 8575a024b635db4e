#include "rig_texture.h"

#include <array>
#include <string>

namespace posecast::rig::detail {

namespace {

void put_u32_be(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>((v >> shift) & 0xFFu));
}

// CRC-32 (ISO 3309, polynomial 0xEDB88320) as PNG chunks need it.
uint32_t crc32(const uint8_t* data, std::size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t adler32(const std::vector<uint8_t>& data) {
  uint32_t a = 1, b = 0;
  for (uint8_t byte : data) {
    a = (a + byte) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

void put_chunk(std::vector<uint8_t>& png, const char (&type)[5], const std::vector<uint8_t>& data) {
  put_u32_be(png, static_cast<uint32_t>(data.size()));
  const std::size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  put_u32_be(png, crc32(png.data() + start, png.size() - start));
}

// zlib stream of stored deflate blocks (at most 65535 bytes each).
std::vector<uint8_t> zlib_stored(const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> out = {0x78, 0x01};
  std::size_t pos = 0;
  do {
    const std::size_t n = raw.size() - pos < 65535u ? raw.size() - pos : 65535u;
    const bool last = pos + n == raw.size();
    out.push_back(last ? 1u : 0u);
    const auto len = static_cast<uint16_t>(n);
    const auto nlen = static_cast<uint16_t>(~len);
    out.insert(out.end(), {static_cast<uint8_t>(len & 0xFFu), static_cast<uint8_t>(len >> 8),
                           static_cast<uint8_t>(nlen & 0xFFu), static_cast<uint8_t>(nlen >> 8)});
    out.insert(out.end(), raw.begin() + static_cast<std::ptrdiff_t>(pos),
               raw.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < raw.size());
  put_u32_be(out, adler32(raw));
  return out;
}

}  // namespace

std::vector<uint8_t> make_rig_texture_png() {
  // Scanlines: filter byte 0, then RGB.
  std::vector<uint8_t> raw;
  for (uint32_t y = 0; y < kTextureSize; ++y) {
    raw.push_back(0u);
    for (uint32_t x = 0; x < kTextureSize; ++x) {
      const bool check = ((x / 4u) + (y / 4u)) % 2u == 0u;
      const bool band = (y % 16u) < 2u;  // a darker stripe across each capsule twice
      uint8_t level = check ? 255u : 226u;
      if (band) level = 170u;
      raw.insert(raw.end(), {level, level, static_cast<uint8_t>(level - (check ? 10u : 6u))});
    }
  }
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  std::vector<uint8_t> header;
  put_u32_be(header, kTextureSize);
  put_u32_be(header, kTextureSize);
  header.insert(header.end(), {8u, 2u, 0u, 0u, 0u});  // 8-bit RGB, deflate, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", zlib_stored(raw));
  put_chunk(png, "IEND", {});
  return png;
}

}  // namespace posecast::rig::detail
