// read_recording(): parses and validates a recording file chunk by chunk, keeping everything up
// to the last complete valid chunk (docs/recording-format.md).

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "chunks.h"
#include "posecast/replay/recording.h"
#include "posecast/replay/zstd_frame.h"

namespace posecast::replay {
namespace {

using detail::kMaxTick;

std::string num(uint64_t v) { return std::to_string(v); }

std::string type_name(std::span<const uint8_t> type) {
  std::string s;
  for (uint8_t c : type) {
    if (c >= 0x20 && c < 0x7F) {
      s += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      s += buf;
    }
  }
  return s;
}

bool is_type(std::span<const uint8_t> type, const char (&code)[4]) {
  return std::memcmp(type.data(), code, 4) == 0;
}

struct Frame {
  std::span<const uint8_t> type;
  std::span<const uint8_t> payload;
  std::size_t size = 0;  // whole chunk, overhead included
};

// Reads the chunk frame at `pos` (type, length, payload; the payload's zstd frame is checked
// when it is decompressed); on failure sets `stop` (offset, reason, message).
bool read_frame(std::span<const uint8_t> file, std::size_t pos, Frame& frame, RecordingStop& stop) {
  stop.offset = pos;
  const std::size_t left = file.size() - pos;
  if (left < kChunkOverhead) {
    stop.reason = StopReason::kTruncated;
    stop.message = "chunk at offset " + num(pos) + ": truncated (" + num(left) + " bytes of its frame)";
    return false;
  }
  frame.type = file.subspan(pos, 4);
  const uint32_t length = static_cast<uint32_t>(file[pos + 4]) | static_cast<uint32_t>(file[pos + 5]) << 8 |
                          static_cast<uint32_t>(file[pos + 6]) << 16 | static_cast<uint32_t>(file[pos + 7]) << 24;
  const std::string where = type_name(frame.type) + " chunk at offset " + num(pos);
  if (length > kMaxChunkPayload) {
    stop.reason = StopReason::kInvalidChunk;
    stop.message = where + ": length " + num(length) + " exceeds the " + num(kMaxChunkPayload) + "-byte limit";
    return false;
  }
  if (left < kChunkOverhead + length) {
    stop.reason = StopReason::kTruncated;
    stop.message = where + ": truncated (" + num(left) + " of " + num(kChunkOverhead + length) + " bytes)";
    return false;
  }
  frame.payload = file.subspan(pos + kChunkOverhead, length);
  frame.size = kChunkOverhead + length;
  return true;
}

// HEAD: the format version, uncompressed, then a zstd frame of the other fields.
Status parse_header(std::span<const uint8_t> payload, RecordingHeader& h) {
  ByteReader version(payload);
  h.format_version = version.u32("format_version");
  if (!version.ok()) return Error{"HEAD: " + version.error()};
  if (h.format_version != kRecordingFormatVersion) {
    return Error{"HEAD: format_version: wrong version " + num(h.format_version) + " (this build reads version " +
                 num(kRecordingFormatVersion) + ")"};
  }
  std::vector<uint8_t> content;
  std::string why;
  if (FrameDecompressor().decompress(payload.subspan(version.position()), kMaxChunkContent, content, why) !=
      FrameError::kNone) {
    return Error{"HEAD: " + why};
  }
  ByteReader r(content);
  h.tick_rate_hz = r.u32("tick_rate_hz");
  h.start_tick = r.u64("start_tick");
  h.checkpoint_interval_ticks = r.u32("checkpoint_interval_ticks");
  h.flush_interval_ticks = r.u32("flush_interval_ticks");
  const uint32_t flags = r.u32("flags");
  h.has_palettes = (flags & 1u) != 0;
  h.producer = r.str("producer", detail::kMaxTextBytes);
  h.config = r.str("config", detail::kMaxTextBytes);
  const uint64_t models = r.varint("models", detail::kMaxModels);
  for (uint64_t m = 0; m < models && r.ok(); ++m) {
    RecordedModel model;
    model.source = r.str("models.source", detail::kMaxTextBytes);
    model.content_hash = r.u64("models.content_hash");
    h.models.push_back(std::move(model));
  }
  if (r.ok() && (h.tick_rate_hz < 1 || h.tick_rate_hz > 1000000)) r.fail("tick_rate_hz", num(h.tick_rate_hz) + " is outside 1..1000000");
  if (r.ok() && h.start_tick > kMaxTick) r.fail("start_tick", num(h.start_tick) + " is out of range");
  if (r.ok() && (flags & ~1u) != 0) r.fail("flags", "unknown bits set");
  if (r.ok() && r.remaining() != 0) r.fail("HEAD", num(r.remaining()) + " unexpected trailing bytes");
  if (!r.ok()) return Error{"HEAD: " + r.error()};
  return {};
}

class ChunkParser {
 public:
  explicit ChunkParser(Recording& rec) : rec_(rec) {}

  // Each parses one payload into the recording, all or nothing; false with `error` set
  // ("<field>: <reason>") when the contents are invalid.
  // `content` is the chunk's decompressed payload; `frame` its zstd frame in the file.
  bool checkpoint(std::span<const uint8_t> content, std::span<const uint8_t> frame, std::string& error) {
    ByteReader r(content);
    Checkpoint c;
    c.tick = r.u64("tick");
    const uint64_t count = r.varint("entities", detail::kMaxEntities);
    for (uint64_t i = 0; i < count && r.ok(); ++i) {
      const auto id = static_cast<uint32_t>(r.varint("entities.id", std::numeric_limits<uint32_t>::max()));
      const uint64_t hash = r.u64("entities.palette_hash");
      if (r.ok() && !c.entity_hashes.empty() && id <= c.entity_hashes.back().first) {
        r.fail("entities[" + num(i) + "].id", num(id) + " is not above the previous id");
      }
      c.entity_hashes.emplace_back(id, hash);
    }
    if (r.ok() && c.tick != rec_.end_tick()) {
      r.fail("tick", num(c.tick) + " is not the next tick boundary " + num(rec_.end_tick()));
    }
    if (r.ok() && !rec_.checkpoints.empty() && rec_.checkpoints.back().tick == c.tick) {
      r.fail("tick", "a second checkpoint for tick " + num(c.tick));
    }
    if (r.ok() && rec_.checkpoints.empty() && !c.entity_hashes.empty()) r.fail("entities", "the first checkpoint has entity hashes");
    if (r.ok() && r.remaining() == 0) r.fail("snapshot", "missing");
    if (!r.ok()) {
      error = r.error();
      return false;
    }
    c.offset = static_cast<std::size_t>(frame.data() - rec_.bytes.data());
    c.stored_size = frame.size();
    c.snapshot_at = r.position();
    c.raw_size = r.remaining();
    rec_.checkpoints.push_back(std::move(c));
    return true;
  }

  void read_sums(ByteReader& r, uint8_t count, bool total32, const char* total, const char* locators) {
    if (!r.ok()) return;
    rec_.check_sums.push_back(total32 ? r.u32(total) : r.u64(total));
    for (uint8_t i = 1; i < count && r.ok(); ++i) rec_.check_sums.push_back(r.u8(locators));
  }

  // u8 sum_count  u64 state_total  u8 state_locators[sum_count - 1]  varint palettes_checked
  // (only when palettes_checked > 0:) u32 palette_total  u8 palette_locators[sum_count - 1]
  // Stored in check_sums as sum_count values per kind (the locators as their byte).
  void read_tick_check(ByteReader& r, TickRecord& t) {
    t.sum_count = r.u8("check.sum_count");
    if (r.ok() && (t.sum_count == 0 || t.sum_count > sim::kMaxCheckSums)) {
      r.fail("check.sum_count", num(t.sum_count) + " is out of range (1.." + num(sim::kMaxCheckSums) + ")");
    }
    t.first_sum = rec_.check_sums.size();
    read_sums(r, t.sum_count, false, "check.state_total", "check.state_locators");
    t.palettes_checked = static_cast<uint32_t>(r.varint("check.palettes_checked", detail::kMaxEntities));
    if (t.palettes_checked == 0) return;
    read_sums(r, t.sum_count, true, "check.palette_total", "check.palette_locators");
  }

  bool ticks(std::span<const uint8_t> content, std::string& error) {
    ByteReader r(content);
    const uint64_t first = r.u64("first_tick");
    const uint64_t count = r.varint("tick_count", detail::kMaxTicksPerChunk);
    if (r.ok() && first != rec_.end_tick()) {
      r.fail("first_tick", num(first) + " does not continue the recording at tick " + num(rec_.end_tick()));
    }
    if (r.ok() && (count == 0 || first + count > kMaxTick)) r.fail("tick_count", num(count) + " is out of range");
    const std::size_t ticks_before = rec_.ticks.size();
    const std::size_t commands_before = rec_.commands.size();
    const std::size_t sums_before = rec_.check_sums.size();
    const std::size_t events_before = rec_.events.size();
    for (uint64_t i = 0; i < count && r.ok(); ++i) {
      const uint64_t tick = first + i;
      TickRecord t;
      t.world_hash = r.u64("world_hash");
      read_tick_check(r, t);
      const uint64_t n = r.varint("command_count", detail::kMaxCommandsPerTick);
      // Every command takes at least 4 bytes: a hostile count cannot make us allocate.
      if (r.ok() && n > r.remaining() / 4) r.fail("command_count", num(n) + " commands cannot fit the chunk");
      t.first_command = static_cast<uint32_t>(rec_.commands.size());
      t.command_count = static_cast<uint32_t>(n);
      for (uint64_t k = 0; k < n && r.ok(); ++k) {
        RecordedCommand command;
        ByteReader sub = r;  // decode on a copy so the error can be prefixed with the path
        if (!decode_command(sub, tick, command)) {
          r.fail("ticks[" + num(i) + "] (tick " + num(tick) + ").commands[" + num(k) + "]." +
                     sub.error().substr(0, sub.error().find(':')),
                 sub.error().substr(sub.error().find(':') + 2));
          break;
        }
        r = sub;
        rec_.commands.push_back(std::move(command));
      }
      if (rec_.commands.size() > std::numeric_limits<uint32_t>::max()) r.fail("commands", "more than 2^32 in one recording");
      // The tick's animation events: varint entity, varint clip, varint marker, u8 layer,
      // f32 weight, f32 x, f32 z (at least 15 bytes each).
      const uint64_t e = r.ok() ? r.varint("event_count", detail::kMaxEventsPerTick) : 0;
      if (r.ok() && e > r.remaining() / 15) r.fail("event_count", num(e) + " events cannot fit the chunk");
      t.first_event = static_cast<uint32_t>(rec_.events.size());
      t.event_count = static_cast<uint32_t>(e);
      for (uint64_t k = 0; k < e && r.ok(); ++k) {
        sim::AnimationEvent event;
        event.tick = tick;
        ByteReader sub = r;  // on a copy, so the error can be prefixed with the path
        event.entity = static_cast<uint32_t>(sub.varint("entity", UINT32_MAX));
        event.clip = static_cast<uint16_t>(sub.varint("clip", UINT16_MAX));
        event.marker = static_cast<uint16_t>(sub.varint("marker", UINT16_MAX));
        event.layer = sub.u8("layer");
        event.weight = sub.f32("weight");
        event.x = sub.f32("x");
        event.z = sub.f32("z");
        if (!sub.ok()) {
          r.fail("ticks[" + num(i) + "] (tick " + num(tick) + ").events[" + num(k) + "]." +
                     sub.error().substr(0, sub.error().find(':')),
                 sub.error().substr(sub.error().find(':') + 2));
          break;
        }
        r = sub;
        rec_.events.push_back(event);
      }
      if (rec_.events.size() > std::numeric_limits<uint32_t>::max()) r.fail("events", "more than 2^32 in one recording");
      rec_.ticks.push_back(t);
    }
    if (r.ok() && r.remaining() != 0) r.fail("records", num(r.remaining()) + " unexpected trailing bytes");
    if (!r.ok()) {
      rec_.ticks.resize(ticks_before);
      rec_.commands.resize(commands_before);
      rec_.check_sums.resize(sums_before);
      rec_.events.resize(events_before);
      error = r.error();
      return false;
    }
    return true;
  }

  bool palettes(std::span<const uint8_t> payload, std::string& error) {
    ByteReader r(payload);
    PaletteSample s;
    s.tick = r.u64("tick");
    const uint64_t count = r.varint("entities", detail::kMaxEntities);
    if (r.ok() && !rec_.header.has_palettes) r.fail("PALS", "the header does not announce palettes");
    if (r.ok() && (rec_.ticks.empty() || s.tick + 1 != rec_.end_tick())) {
      r.fail("tick", num(s.tick) + " is not the last recorded tick");
    }
    if (r.ok() && !rec_.palettes.empty() && rec_.palettes.back().tick >= s.tick) r.fail("tick", "not after the previous palette sample");
    for (uint64_t i = 0; i < count && r.ok(); ++i) {
      PaletteSample::Entity e;
      e.id = static_cast<uint32_t>(r.varint("entities.id", std::numeric_limits<uint32_t>::max()));
      const uint64_t joints = r.varint("entities.joints", detail::kMaxJoints);
      if (r.ok() && joints * 64 > r.remaining()) {
        r.fail("entities[" + num(i) + "].matrices", "truncated");
        break;
      }
      e.matrices.resize(static_cast<std::size_t>(joints) * 16);
      for (float& f : e.matrices) f = r.f32("entities.matrices");
      if (r.ok() && !s.entities.empty() && e.id <= s.entities.back().id) {
        r.fail("entities[" + num(i) + "].id", num(e.id) + " is not above the previous id");
      }
      s.entities.push_back(std::move(e));
    }
    if (r.ok() && r.remaining() != 0) r.fail("PALS", num(r.remaining()) + " unexpected trailing bytes");
    if (!r.ok()) {
      error = r.error();
      return false;
    }
    rec_.palettes.push_back(std::move(s));
    return true;
  }

  bool end(std::span<const uint8_t> payload, std::string& error) {
    ByteReader r(payload);
    const uint64_t end_tick = r.u64("end_tick");
    if (r.ok() && end_tick != rec_.end_tick()) {
      r.fail("end_tick", num(end_tick) + " but the ticks read end at " + num(rec_.end_tick()));
    }
    if (r.ok() && r.remaining() != 0) r.fail("END", num(r.remaining()) + " unexpected trailing bytes");
    if (!r.ok()) {
      error = r.error();
      return false;
    }
    return true;
  }

  // Decompresses a chunk's payload into content(); false with `stop` set (damaged, or too
  // large to be a chunk) otherwise.
  bool decompress(std::span<const uint8_t> payload, const std::string& where, RecordingStop& stop) {
    std::string why;
    const FrameError e = decompressor_.decompress(payload, kMaxChunkContent, content_, why);
    if (e == FrameError::kNone) return true;
    stop.reason = e == FrameError::kTooLarge ? StopReason::kInvalidChunk : StopReason::kDamaged;
    stop.message = where + why;
    return false;
  }
  std::span<const uint8_t> content() const { return content_; }

 private:
  Recording& rec_;
  FrameDecompressor decompressor_;
  std::vector<uint8_t> content_;
};

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kClosed: return "closed";
    case StopReason::kUnclosed: return "unclosed";
    case StopReason::kTruncated: return "truncated";
    case StopReason::kDamaged: return "damaged";
    case StopReason::kUnknownChunk: return "unknown-chunk";
    case StopReason::kInvalidChunk: return "invalid-chunk";
  }
  return "?";
}

bool RecordingStop::benign() const {
  return reason == StopReason::kClosed || reason == StopReason::kUnclosed || reason == StopReason::kTruncated;
}

std::span<const RecordedCommand> Recording::commands_at(uint64_t tick) const {
  const TickRecord* t = tick_record(tick);
  if (t == nullptr) return {};
  return std::span<const RecordedCommand>(commands).subspan(t->first_command, t->command_count);
}

std::span<const sim::AnimationEvent> Recording::events_at(uint64_t tick) const {
  const TickRecord* t = tick_record(tick);
  if (t == nullptr) return {};
  return std::span<const sim::AnimationEvent>(events).subspan(t->first_event, t->event_count);
}

const TickRecord* Recording::tick_record(uint64_t tick) const {
  if (tick < first_tick() || tick >= end_tick()) return nullptr;
  return &ticks[static_cast<std::size_t>(tick - first_tick())];
}

sim::TickCheck Recording::tick_check(uint64_t tick) const {
  sim::TickCheck check;
  const TickRecord* t = tick_record(tick);
  if (t == nullptr) return check;
  check.sum_count = t->sum_count;
  check.palettes_checked = t->palettes_checked;
  for (uint8_t i = 0; i < t->sum_count; ++i) check.state.sums[i] = check_sums[t->first_sum + i];
  if (t->palettes_checked == 0) return check;
  for (uint8_t i = 0; i < t->sum_count; ++i) check.palettes.sums[i] = check_sums[t->first_sum + t->sum_count + i];
  return check;
}

const Checkpoint* Recording::checkpoint_at_or_before(uint64_t tick) const {
  auto it = std::upper_bound(checkpoints.begin(), checkpoints.end(), tick,
                             [](uint64_t t, const Checkpoint& c) { return t < c.tick; });
  if (it == checkpoints.begin()) return nullptr;
  return &*std::prev(it);
}

const Checkpoint* Recording::checkpoint_at_or_after(uint64_t tick) const {
  auto it = std::lower_bound(checkpoints.begin(), checkpoints.end(), tick,
                             [](const Checkpoint& c, uint64_t t) { return c.tick < t; });
  return it == checkpoints.end() ? nullptr : &*it;
}

const PaletteSample* Recording::palettes_at(uint64_t tick) const {
  auto it = std::lower_bound(palettes.begin(), palettes.end(), tick,
                             [](const PaletteSample& p, uint64_t t) { return p.tick < t; });
  return it != palettes.end() && it->tick == tick ? &*it : nullptr;
}

Result<std::vector<uint8_t>> Recording::snapshot(const Checkpoint& c) const {
  std::vector<uint8_t> content;
  std::string why;
  if (FrameDecompressor().decompress(std::span<const uint8_t>(bytes).subspan(c.offset, c.stored_size),
                                     kMaxChunkContent, content, why) != FrameError::kNone ||
      content.size() != c.snapshot_at + c.raw_size) {
    return Error{"checkpoint at tick " + num(c.tick) + ": " + (why.empty() ? "snapshot size differs" : why)};
  }
  content.erase(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(c.snapshot_at));
  return content;
}

Result<std::shared_ptr<const Recording>> read_recording(std::vector<uint8_t> bytes) {
  auto rec = std::make_shared<Recording>();
  rec->bytes = std::move(bytes);
  const std::span<const uint8_t> file(rec->bytes);
  if (file.size() < sizeof kRecordingSignature ||
      std::memcmp(file.data(), kRecordingSignature, sizeof kRecordingSignature) != 0) {
    return Error{"not a posecast recording (the file does not start with the recording signature)"};
  }
  std::size_t pos = sizeof kRecordingSignature;
  Frame frame;
  RecordingStop stop;
  if (!read_frame(file, pos, frame, stop)) return Error{"header: " + stop.message};
  if (!is_type(frame.type, kChunkHeader)) {
    return Error{"header: the first chunk is '" + type_name(frame.type) + "', not HEAD"};
  }
  if (Status s = parse_header(frame.payload, rec->header); !s) return s.error();
  pos += frame.size;
  rec->chunks = 1;

  ChunkParser parser(*rec);
  bool closed = false;
  while (true) {
    if (pos == file.size()) {
      stop.reason = closed ? StopReason::kClosed : StopReason::kUnclosed;
      stop.offset = pos;
      stop.message = closed ? "closed cleanly" : "no END chunk: the recording was not closed (the producer was killed or is still writing)";
      break;
    }
    if (closed) {
      stop.reason = StopReason::kInvalidChunk;
      stop.offset = pos;
      stop.message = "offset " + num(pos) + ": data after the END chunk";
      break;
    }
    if (!read_frame(file, pos, frame, stop)) break;
    const std::string where = type_name(frame.type) + " chunk at offset " + num(pos) + ": ";
    std::string error;
    bool ok = true;
    const bool known = is_type(frame.type, kChunkCheckpoint) || is_type(frame.type, kChunkTicks) ||
                       is_type(frame.type, kChunkPalettes) || is_type(frame.type, kChunkEnd);
    if (!known) {
      stop.reason = StopReason::kUnknownChunk;
      stop.message = where + "unknown chunk type";
      break;
    }
    if (!parser.decompress(frame.payload, where, stop)) break;
    const std::span<const uint8_t> content = parser.content();
    if (rec->checkpoints.empty() && !is_type(frame.type, kChunkCheckpoint)) {
      ok = false;
      error = "expected the first checkpoint (CKPT) right after HEAD";
    } else if (is_type(frame.type, kChunkCheckpoint)) {
      ok = parser.checkpoint(content, frame.payload, error);
    } else if (is_type(frame.type, kChunkTicks)) {
      ok = parser.ticks(content, error);
    } else if (is_type(frame.type, kChunkPalettes)) {
      ok = parser.palettes(content, error);
    } else {
      ok = parser.end(content, error);
      closed = ok;
    }
    if (!ok) {
      stop.reason = StopReason::kInvalidChunk;
      stop.message = where + error;
      break;
    }
    pos += frame.size;
    ++rec->chunks;
  }
  rec->stop = std::move(stop);
  if (rec->checkpoints.empty()) {
    return Error{"the recording has no checkpoint (" + rec->stop.message + ")"};
  }
  if (rec->checkpoints.front().tick != rec->header.start_tick) {
    return Error{"CKPT: the first checkpoint's tick differs from HEAD start_tick"};
  }
  return std::shared_ptr<const Recording>(std::move(rec));
}

Result<std::shared_ptr<const Recording>> read_recording_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot open '" + path + "'"};
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error{"cannot read '" + path + "'"};
  Result<std::shared_ptr<const Recording>> rec = read_recording(std::move(bytes));
  if (!rec) return Error{path + ": " + rec.error().message};
  return rec;
}

}  // namespace posecast::replay
