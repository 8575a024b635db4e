#pragma once
// Internal: chunk framing and the payload layouts shared by the recorder and the reader
// (docs/recording-format.md is the reference; keep the two in step).

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/byte_io.h"
#include "posecast/replay/recording.h"
#include "posecast/replay/zstd_frame.h"

namespace posecast::replay::detail {

// Appends a chunk to `out`: type, u32 length, then `content` compressed as one zstd frame
// (with its checksum) by `compressor`.
void append_chunk(std::vector<uint8_t>& out, const char (&type)[4], std::span<const uint8_t> content,
                  FrameCompressor& compressor);

// Appends the HEAD chunk: type, u32 length, u32 format_version (uncompressed, so that a reader
// of any version can name a file's version), then one zstd frame of
//   u32 tick_rate_hz  u64 start_tick  u32 checkpoint_interval_ticks  u32 flush_interval_ticks
//   u32 flags (bit 0: palettes)  str producer  str config  varint models { str source  u64 content_hash }
void append_header_chunk(std::vector<uint8_t>& out, const RecordingHeader& header, FrameCompressor& compressor);

// The content (what the zstd frame holds) of the other chunks:
// CKPT:  u64 tick  varint entities { varint id  u64 palette_hash }  (hashes of tick - 1)
//        snapshot bytes (World::snapshot(), the rest of the content)
// TICK:  u64 first_tick  varint tick_count
//        records = { u64 world_hash  varint command_count  command*
//                    varint event_count  event* }[tick_count]
//        event = varint entity  varint clip  varint marker  u8 layer  f32 weight  f32 x  f32 z
// PALS:  u64 tick  varint entities { varint id  varint joints  f32[16 * joints] }
// END:   u64 end_tick

// Limits the reader enforces on header fields.
inline constexpr std::size_t kMaxTextBytes = 1u << 20;
inline constexpr uint64_t kMaxModels = 1u << 16;
inline constexpr uint64_t kMaxEntities = 1u << 24;
inline constexpr uint64_t kMaxJoints = 1u << 16;
inline constexpr uint64_t kMaxTicksPerChunk = 1u << 24;
inline constexpr uint64_t kMaxCommandsPerTick = 1u << 24;
inline constexpr uint64_t kMaxEventsPerTick = 1u << 24;
// Ticks far beyond any session (about 580 years at 60 Hz), as World snapshots allow.
inline constexpr uint64_t kMaxTick = uint64_t{1} << 40;

}  // namespace posecast::replay::detail
