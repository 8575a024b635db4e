#pragma once
// A recording in memory, as read from a file (docs/recording-format.md): the header, every tick
// (world hash and the commands the World applied, in apply order), the checkpoints (World
// snapshots at tick boundaries) and optional palette samples.
//
// The file is a signature followed by append-only chunks:
//   u8[4] type  u32 payload_length  payload (one zstd frame with its checksum; HEAD: u32
//   format_version before the frame)
// HEAD (once, first), CKPT (the first right after HEAD), TICK batches, PALS, END (clean close).
// read_recording() keeps every chunk up to the last complete, valid one and says why it stopped
// (RecordingStop); it never fails on a damaged tail, only on a file that is not a usable
// recording at all (no valid HEAD, a version it does not read, no checkpoint).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "posecast/replay/command_codec.h"
#include "posecast/sim/animation_event.h"
#include "posecast/result.h"
#include "posecast/sim/tick_check.h"

namespace posecast::replay {

// 2: palette hash version 2 (hash.h); 3: zstd-compressed chunk payloads; 4: root transforms
// (spawn position, teleport / move / move_to, a motion's root_motion flag, world hashes
// folding each entity's root transform, snapshot version 3); 5: every TICK record holds a tick
// check (sim/tick_check.h: state and palette hash sums; the world hash 0 when the producer's
// World did not hash every palette) and the tick's animation events
// (docs/events.md).
inline constexpr uint32_t kRecordingFormatVersion = 5;
inline constexpr uint8_t kRecordingSignature[8] = {0x89, 'P', 'C', 'R', '\r', '\n', 0x1A, '\n'};
inline constexpr std::size_t kChunkOverhead = 8;                   // type, length
inline constexpr uint32_t kMaxChunkPayload = 256u * 1024u * 1024u;  // anything larger is damage
// A chunk's content once decompressed: anything larger is damage.
inline constexpr std::size_t kMaxChunkContent = 256u * 1024u * 1024u;

// Chunk type codes: four ASCII bytes, in file order.
inline constexpr char kChunkHeader[4] = {'H', 'E', 'A', 'D'};
inline constexpr char kChunkCheckpoint[4] = {'C', 'K', 'P', 'T'};
inline constexpr char kChunkTicks[4] = {'T', 'I', 'C', 'K'};
inline constexpr char kChunkPalettes[4] = {'P', 'A', 'L', 'S'};
inline constexpr char kChunkEnd[4] = {'E', 'N', 'D', ' '};

struct RecordedModel {
  std::string source;         // as the producer loaded it: a path or "gen-rig:N"
  uint64_t content_hash = 0;  // Model::content_hash; a replay refuses a model that differs
};

struct RecordingHeader {
  uint32_t format_version = kRecordingFormatVersion;
  uint32_t tick_rate_hz = 60;
  uint64_t start_tick = 0;  // the first recorded tick (the first checkpoint's tick)
  uint32_t checkpoint_interval_ticks = 0;
  uint32_t flush_interval_ticks = 0;
  bool has_palettes = false;  // PALS chunks follow each checkpoint
  std::string producer;       // e.g. "posecast-server 0.1.0"
  std::string config;         // the producer's configuration, free text (key=value lines)
  std::vector<RecordedModel> models;  // World model id = index
};

// One checkpoint: World::snapshot() bytes at the boundary before `tick` (tick_index() == tick).
struct Checkpoint {
  uint64_t tick = 0;
  std::size_t offset = 0;        // of the CKPT chunk's zstd frame in Recording::bytes
  std::size_t stored_size = 0;   // of the frame
  std::size_t snapshot_at = 0;   // where the snapshot starts in the frame's content
  std::size_t raw_size = 0;      // snapshot bytes
  // Palette hash of every entity at tick `tick - 1` (id order); empty in the first checkpoint.
  std::vector<std::pair<uint32_t, uint64_t>> entity_hashes;
};

// Every entity's palette at one tick (recorded when RecordingHeader::has_palettes).
struct PaletteSample {
  uint64_t tick = 0;
  struct Entity {
    uint32_t id = 0;
    std::vector<float> matrices;  // 16 floats per joint, column-major
  };
  std::vector<Entity> entities;  // id order
};

struct TickRecord {
  uint64_t world_hash = 0;     // 0: the producer's World did not hash every palette
  uint32_t first_command = 0;  // into Recording::commands
  uint32_t command_count = 0;
  // The tick check's sums: sum_count state sums, then (palettes_checked > 0) sum_count palette
  // sums, from Recording::check_sums[first_sum] on (Recording::tick_check assembles them).
  uint64_t first_sum = 0;
  uint32_t palettes_checked = 0;
  uint8_t sum_count = 0;
  uint32_t first_event = 0;    // into Recording::events
  uint32_t event_count = 0;
};

enum class StopReason : uint8_t {
  kClosed,            // an END chunk: the producer closed the recording
  kUnclosed,          // the file ends on a chunk boundary with no END (killed, or still open)
  kTruncated,         // a partial chunk at the end (the writer died mid-write)
  kDamaged,           // a complete chunk whose zstd frame is damaged (checksum mismatch, bad frame)
  kUnknownChunk,      // a chunk type this reader does not know
  kInvalidChunk,      // a chunk with a good checksum but contents that do not parse or fit
};
const char* to_string(StopReason reason);

struct RecordingStop {
  StopReason reason = StopReason::kClosed;
  std::size_t offset = 0;  // where the first unread chunk starts (== file size when clean)
  std::string message;     // names the chunk, its offset and the field
  // True when the stop is only the cut-off tail of a recording (closed, unclosed, truncated);
  // false for damage in the middle (a damaged, unknown or invalid chunk).
  bool benign() const;
};

struct Recording {
  std::vector<uint8_t> bytes;  // the whole file (checkpoints point into it)
  RecordingHeader header;
  std::vector<Checkpoint> checkpoints;  // increasing ticks; [0].tick == header.start_tick
  std::vector<TickRecord> ticks;        // ticks[i] is tick header.start_tick + i
  std::vector<RecordedCommand> commands;
  std::vector<uint64_t> check_sums;     // TickRecord::first_sum
  // The animation events each tick emitted (World::last_tick_events; docs/events.md), in the
  // World's order; each with its tick.
  std::vector<sim::AnimationEvent> events;
  std::vector<PaletteSample> palettes;  // increasing ticks
  RecordingStop stop;
  std::size_t chunks = 0;  // valid chunks read

  uint64_t first_tick() const { return header.start_tick; }
  uint64_t end_tick() const { return header.start_tick + ticks.size(); }  // one past the last
  // Commands applied at `tick` in apply order; empty outside [first_tick, end_tick).
  std::span<const RecordedCommand> commands_at(uint64_t tick) const;
  // The animation events tick `tick` emitted, in the World's order; empty outside the range.
  std::span<const sim::AnimationEvent> events_at(uint64_t tick) const;
  const TickRecord* tick_record(uint64_t tick) const;  // nullptr outside the range
  // The recorded tick check of `tick` (all zero outside the range).
  sim::TickCheck tick_check(uint64_t tick) const;
  // The last checkpoint with tick <= `tick`, or nullptr.
  const Checkpoint* checkpoint_at_or_before(uint64_t tick) const;
  // The first checkpoint with tick >= `tick`, or nullptr.
  const Checkpoint* checkpoint_at_or_after(uint64_t tick) const;
  const PaletteSample* palettes_at(uint64_t tick) const;  // nullptr when none
  // The checkpoint's snapshot bytes, decompressed. Errors name the checkpoint.
  Result<std::vector<uint8_t>> snapshot(const Checkpoint& checkpoint) const;
};

// Parses a whole file's bytes. Errors (no Recording at all): not a recording (signature), a
// first chunk that is missing, damaged or not HEAD, an unsupported format_version ("wrong
// version"), a missing first checkpoint. Anything after that stops reading and is reported in
// Recording::stop instead.
Result<std::shared_ptr<const Recording>> read_recording(std::vector<uint8_t> bytes);
Result<std::shared_ptr<const Recording>> read_recording_file(const std::string& path);

}  // namespace posecast::replay
