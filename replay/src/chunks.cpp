#include "chunks.h"

#include "posecast/replay/crc32c.h"

namespace posecast::replay::detail {

void append_chunk(std::vector<uint8_t>& out, const char (&type)[4], std::span<const uint8_t> payload) {
  const std::size_t start = out.size();
  ByteWriter w(out);
  for (char c : type) w.u8(static_cast<uint8_t>(c));
  w.u32(static_cast<uint32_t>(payload.size()));
  w.bytes(payload);
  const uint32_t crc = crc32c(std::span<const uint8_t>(out).subspan(start));
  w.u32(crc);
}

void write_header(ByteWriter& w, const RecordingHeader& h) {
  w.u32(h.format_version);
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
}

}  // namespace posecast::replay::detail
