#pragma once
// Recorder: writes a World session to a recording file (docs/recording-format.md) as it runs,
// crash-safe: append-only chunks, each a zstd frame with its checksum, written with one write() call.
// A process killed at any moment leaves a file readable up to its last complete chunk. The
// chunks are compressed, framed and written by a writer thread of the recorder's own, so the
// tick thread only encodes each tick's commands and hands batches over; the ticks a kill loses
// are those not yet handed over (under one flush interval, default half a second) and the
// batch the writer is writing (written within milliseconds of the hand-over while the disk
// keeps up): at most the last second by default.
//
// Use (the tick thread, which also owns the World):
//   auto rec = Recorder::create("session.pcrec", world, model_sources, config);   // after the
//       // models and masks are registered; writes HEAD and a checkpoint of the world as it is
//   each tick:  world.tick();  rec->record_tick(world);   // logs world.last_tick_commands()
//       // and world.world_hash(); writes a checkpoint at every multiple of the interval
//   at the end: rec->close();   // flushes and writes END (the destructor does it too)
// On the tick thread, record_tick costs a few hundred nanoseconds, plus once per checkpoint
// interval one World::snapshot() and the palette hashes (see bench_replay).
//
// The recorded tick checks (sim/tick_check.h: every entity's state hash, a rotating sixteenth
// of the palette hashes) and, from a World that hashes every palette, world hashes are what a
// replay verifies against. The World computes the tick checks in its parallel evaluation pass
// (WorldOptions::tick_checks, server::ServerOptions::tick_checks; posecast-server --record sets
// it); create() refuses a World without them.
//
// Errors: any failed write() puts the recorder in a failed state: every later call returns
// the same error and writes nothing, and the file stays valid up to its last complete chunk.
// Not thread-safe: one thread calls everything (the thread that ticks the World); the writer
// thread is internal.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "posecast/replay/recording.h"
#include "posecast/replay/zstd_frame.h"
#include "posecast/result.h"
#include "posecast/sim/world.h"

namespace posecast::replay {

namespace detail {
class ChunkWriter;  // chunk_writer.h
}  // namespace detail

struct RecorderConfig {
  // World snapshot every this many ticks, at multiples of it (0: 5 s of ticks at the world's rate).
  uint32_t checkpoint_interval_ticks = 0;
  // Buffered ticks are handed to the writer at least every this many ticks (0: half a second
  // of ticks), and always before a checkpoint. 1 hands every tick over.
  uint32_t flush_interval_ticks = 0;
  // fsync() after every chunk written: survives power loss and OS crashes, not only a killed
  // process (a killed process loses nothing already written). Costs milliseconds on the
  // writer thread.
  bool fsync = false;
  // Every entity's palette at the tick before each checkpoint (PALS chunks): lets a divergence
  // report name the joint for any cause, at about 64 bytes per joint per entity per checkpoint.
  bool record_palettes = false;
  std::string producer;  // e.g. "posecast-server 0.1.0"
  std::string config;    // the producer's configuration, free text (key=value lines)
  // The zstd level of every chunk (the writer thread compresses; see kDefaultCompressionLevel).
  int compression_level = kDefaultCompressionLevel;
};

struct RecorderStats {
  uint64_t ticks = 0;        // ticks recorded
  uint64_t commands = 0;     // commands recorded
  uint64_t events = 0;       // animation events recorded
  uint64_t checkpoints = 0;  // including the first
  uint64_t flushes = 0;      // tick batches handed to the writer thread
  uint64_t bytes = 0;        // bytes written so far (by the writer thread)
  uint64_t buffered_ticks = 0;  // recorded but not yet handed to the writer
};

class Recorder {
 public:
  // Creates (or truncates) `path` and writes the header and a first checkpoint of `world` at
  // its current tick. `model_sources[i]` is the source (path or "gen-rig:N") world.model(i) was
  // loaded from: a replay loads it from there and checks its content hash. Errors: a source
  // count that differs from world.model_count(), the file (path + OS reason).
  static Result<std::unique_ptr<Recorder>> create(const std::string& path, const sim::World& world,
                                                  std::vector<std::string> model_sources,
                                                  RecorderConfig config = {});
  ~Recorder();  // close(), errors ignored
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Call once after every world.tick(): records the tick just run (world.tick_index() - 1)
  // with world.last_tick_commands(), world.world_hash() and world.last_tick_events(), then
  // checkpoints and flushes as the config says. Errors: a tick that does not follow the last
  // recorded one (a missed call, a restore), a write failure.
  Status record_tick(const sim::World& world);

  // Lower level, for producers that do not hold a World between ticks: the tick must be the
  // next one; commands in the order the World applied them.
  // `world_hash` 0 when the World did not hash every palette; `check` the World's tick_check();
  // `events` the tick's animation events (World::last_tick_events).
  Status append_tick(uint64_t tick, std::span<const sim::QueuedCommand> commands, uint64_t world_hash,
                     const sim::TickCheck& check, std::span<const sim::AnimationEvent> events = {});
  // Hands over buffered ticks, then a checkpoint of `world` (its tick_index() must be the next
  // tick to record) with the palette hash of every entity (and palettes when configured). A
  // second call at the same tick writes nothing.
  Status append_checkpoint(const sim::World& world);

  // Hands over the buffered ticks and waits until everything handed over is written.
  Status flush();
  // Hands over the buffered ticks and END, waits for the writer to write everything (fsync
  // when configured), closes the file; later calls are no-ops.
  Status close();

  const RecordingHeader& header() const { return header_; }
  RecorderStats stats() const;
  uint64_t next_tick() const { return next_tick_; }

 private:
  Recorder() = default;
  // The writer's first error, or that the recorder is closed.
  Status fail_if_failed() const;
  // Hands the buffered ticks (if any) to the writer thread.
  void hand_off_ticks();
  uint64_t entity_palette_hash(const sim::World& world, std::size_t index);
  // Hands the writer a checkpoint of `world`: its snapshot and the palette hashes of the tick
  // just run (and the palettes when configured), after the framed bytes `prefix`.
  void queue_checkpoint(const sim::World& world, std::vector<uint8_t> prefix = {});

  int fd_ = -1;
  std::string path_;
  RecordingHeader header_;
  RecorderConfig config_;
  RecorderStats stats_;
  uint64_t next_tick_ = 0;
  uint64_t batch_first_tick_ = 0;
  uint64_t last_checkpoint_tick_ = 0;
  uint32_t batch_ticks_ = 0;
  bool recorded_a_tick_ = false;
  bool palettes_hashed_by_world_ = true;  // as seen by the last record_tick
  std::vector<uint8_t> batch_;     // encoded tick records not yet handed over
  std::unique_ptr<detail::ChunkWriter> writer_;  // writes to fd_; finished by close()
};

}  // namespace posecast::replay
