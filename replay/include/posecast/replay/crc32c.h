#pragma once
// CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the checksum of every recording chunk.
// Table-driven (slicing by 8), portable, no CPU-specific instructions, so every build computes
// the same value. Check value: crc32c("123456789") == 0xE3069283.

#include <cstdint>
#include <span>

namespace posecast::replay {

// CRC32C of `bytes`, continuing from `crc` (the value a previous call returned; 0 to start).
// So crc32c(b, crc32c(a)) == crc32c(a followed by b).
uint32_t crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);

}  // namespace posecast::replay
