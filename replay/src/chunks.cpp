#include "chunks.h"

namespace posecast::replay::detail {
namespace {

void put_u32_at(std::vector<uint8_t>& out, std::size_t at, uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

void append_chunk(std::vector<uint8_t>& out, const char (&type)[4], std::span<const uint8_t> content,
                  FrameCompressor& compressor) {
  for (char c : type) out.push_back(static_cast<uint8_t>(c));
  const std::size_t length_at = out.size();
  out.resize(out.size() + 4);
  compressor.compress(content, out);
  put_u32_at(out, length_at, static_cast<uint32_t>(out.size() - length_at - 4));
}

void append_header_chunk(std::vector<uint8_t>& out, const RecordingHeader& h, FrameCompressor& compressor) {
  std::vector<uint8_t> content;
  ByteWriter w(content);
  w.u32(h.tick_rate_hz);
  w.u64(h.start_tick);
  w.u32(h.checkpoint_interval_ticks);
  w.u32(h.flush_interval_ticks);
  w.u32(h.has_palettes ? 1u : 0u);
  w.str(h.producer);
  w.str(h.config);
  w.varint(h.models.size());
  for (const RecordedModel& m : h.models) {
    w.str(m.source);
    w.u64(m.content_hash);
  }
  for (char c : kChunkHeader) out.push_back(static_cast<uint8_t>(c));
  const std::size_t length_at = out.size();
  out.resize(out.size() + 4);
  ByteWriter(out).u32(h.format_version);
  compressor.compress(content, out);
  put_u32_at(out, length_at, static_cast<uint32_t>(out.size() - length_at - 4));
}

}  // namespace posecast::replay::detail
