#include "posecast/replay/recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "chunk_writer.h"
#include "chunks.h"
#include "posecast/hash.h"

namespace posecast::replay {
namespace {

// A TICK record's tick check (docs/recording-format.md, "TICK"): u8 sum_count, the state
// total (u64) and the low byte of each per-bit sum, varint palettes_checked, then when any the
// palette total's low 32 bits (u32) and the low byte of each per-bit sum.
void write_sums(ByteWriter& w, const sim::CheckSums& sums, uint8_t count, bool total32) {
  static_assert(sim::kLocatorBits == 8, "one byte per per-bit sum");
  std::array<uint8_t, sim::kMaxCheckSums> locators;
  for (uint8_t i = 1; i < count; ++i) locators[i - 1u] = static_cast<uint8_t>(sums.sums[i] & sim::kLocatorMask);
  if (total32) {
    w.u32(static_cast<uint32_t>(sums.sums[0] & sim::kPaletteTotalMask));
  } else {
    w.u64(sums.sums[0]);
  }
  w.bytes(std::span(locators).first(count - 1u));
}

void write_tick_check(ByteWriter& w, const sim::TickCheck& check) {
  w.u8(check.sum_count);
  write_sums(w, check.state, check.sum_count, false);
  w.varint(check.palettes_checked);
  if (check.palettes_checked > 0) write_sums(w, check.palettes, check.sum_count, true);
}

}  // namespace

Result<std::unique_ptr<Recorder>> Recorder::create(const std::string& path, const sim::World& world,
                                                   std::vector<std::string> model_sources,
                                                   RecorderConfig config) {
  if (model_sources.size() != world.model_count()) {
    return Error{"recorder: " + std::to_string(model_sources.size()) + " model sources for a world of " +
                 std::to_string(world.model_count()) + " models"};
  }
  if (!world.computes_tick_checks()) {
    return Error{"recorder: the world computes no tick checks, which every recorded tick holds "
                 "(turn on sim::WorldOptions::tick_checks, or server::ServerOptions::tick_checks)"};
  }
  const uint32_t rate = world.tick_rate_hz();
  if (config.checkpoint_interval_ticks == 0) config.checkpoint_interval_ticks = 5 * rate;
  if (config.flush_interval_ticks == 0) config.flush_interval_ticks = std::max(1u, rate / 2);

  std::unique_ptr<Recorder> rec(new Recorder());
  rec->config_ = config;
  rec->path_ = path;
  RecordingHeader& h = rec->header_;
  h.tick_rate_hz = rate;
  h.start_tick = world.tick_index();
  h.checkpoint_interval_ticks = config.checkpoint_interval_ticks;
  h.flush_interval_ticks = config.flush_interval_ticks;
  h.has_palettes = config.record_palettes;
  h.producer = config.producer;
  h.config = config.config;
  for (std::size_t i = 0; i < model_sources.size(); ++i) {
    h.models.push_back(RecordedModel{std::move(model_sources[i]),
                                     world.model(static_cast<sim::ModelId>(i))->content_hash});
  }
  rec->next_tick_ = h.start_tick;
  rec->batch_first_tick_ = h.start_tick;

  rec->fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (rec->fd_ < 0) return Error{"recorder: cannot create '" + path + "': " + std::strerror(errno)};
  rec->writer_ = std::make_unique<detail::ChunkWriter>(rec->fd_, path, config.fsync, config.compression_level);

  // Signature, header and first checkpoint go out in one write(), so the file is a usable
  // recording from its first byte on disk; create() returns once they are written.
  std::vector<uint8_t> prefix(std::begin(kRecordingSignature), std::end(kRecordingSignature));
  FrameCompressor compressor(config.compression_level);
  detail::append_header_chunk(prefix, h, compressor);
  rec->queue_checkpoint(world, std::move(prefix));
  if (Status s = rec->writer_->wait_idle(); !s) return s.error();
  ++rec->stats_.checkpoints;
  rec->last_checkpoint_tick_ = h.start_tick;
  return rec;
}

Recorder::~Recorder() { (void)close(); }

Status Recorder::fail_if_failed() const {
  if (fd_ < 0) return Error{"recorder: '" + path_ + "' is closed"};
  return writer_->error();
}

RecorderStats Recorder::stats() const {
  RecorderStats stats = stats_;
  stats.bytes = writer_ != nullptr ? writer_->bytes_written() : 0;
  return stats;
}

Status Recorder::append_tick(uint64_t tick, std::span<const sim::QueuedCommand> commands, uint64_t world_hash,
                             const sim::TickCheck& check,
                             std::span<const sim::AnimationEvent> events) {
  if (Status s = fail_if_failed(); !s) return s;
  if (tick != next_tick_) {
    return Error{"recorder: tick " + std::to_string(tick) + " recorded, expected tick " +
                 std::to_string(next_tick_) + " (call record_tick once after every World::tick)"};
  }
  if (batch_ticks_ == 0) batch_first_tick_ = tick;
  ByteWriter w(batch_);
  w.u64(world_hash);
  write_tick_check(w, check);
  w.varint(commands.size());
  for (const sim::QueuedCommand& q : commands) encode_command(w, q.submitter, q.command, tick);
  w.varint(events.size());
  for (const sim::AnimationEvent& e : events) {
    w.varint(e.entity);
    w.varint(e.clip);
    w.varint(e.marker);
    w.u8(e.layer);
    w.f32(e.weight);
    w.f32(e.x);
    w.f32(e.z);
  }
  stats_.events += events.size();
  ++batch_ticks_;
  ++next_tick_;
  ++stats_.ticks;
  stats_.commands += commands.size();
  stats_.buffered_ticks = batch_ticks_;
  recorded_a_tick_ = true;
  return {};
}

uint64_t Recorder::entity_palette_hash(const sim::World& world, std::size_t index) {
  return palettes_hashed_by_world_ ? world.palette_hash_at(index) : hash_palette(world.palette_at(index));
}

Status Recorder::record_tick(const sim::World& world) {
  if (world.tick_index() == 0) return Error{"recorder: record_tick before the world's first tick"};
  // A World that does not hash every palette (WorldOptions::hash_palettes off, as the server
  // runs) reports world hash 0, and the tick check alone verifies the tick; any hashing World
  // reports a non-zero value even with no entity (the hash of nothing).
  if (Status s = append_tick(world.tick_index() - 1, world.last_tick_commands(), world.world_hash(), world.tick_check(),
                                 world.last_tick_events());
      !s) {
    return s;
  }
  if (world.tick_index() % config_.checkpoint_interval_ticks == 0) return append_checkpoint(world);
  if (batch_ticks_ >= config_.flush_interval_ticks) hand_off_ticks();
  return {};
}

void Recorder::hand_off_ticks() {
  if (batch_ticks_ == 0) return;
  detail::ChunkWriter::Job job = writer_->take_job();
  job.kind = detail::ChunkWriter::Job::Kind::kTicks;
  job.tick = batch_first_tick_;
  job.tick_count = batch_ticks_;
  std::swap(job.data, batch_);  // batch_ takes the job's emptied buffer: no allocation
  writer_->submit(std::move(job));
  ++stats_.flushes;
  batch_ticks_ = 0;
  stats_.buffered_ticks = 0;
}

Status Recorder::flush() {
  if (Status s = fail_if_failed(); !s) return s;
  hand_off_ticks();
  return writer_->wait_idle();
}

Status Recorder::append_checkpoint(const sim::World& world) {
  if (Status s = fail_if_failed(); !s) return s;
  hand_off_ticks();
  if (world.tick_index() != next_tick_) {
    return Error{"recorder: checkpoint of a world at tick " + std::to_string(world.tick_index()) +
                 ", the recording is at tick " + std::to_string(next_tick_)};
  }
  if (stats_.checkpoints > 0 && last_checkpoint_tick_ == next_tick_) return {};  // one per tick
  queue_checkpoint(world);
  ++stats_.checkpoints;
  last_checkpoint_tick_ = next_tick_;
  return {};
}

void Recorder::queue_checkpoint(const sim::World& world, std::vector<uint8_t> prefix) {
  detail::ChunkWriter::Job job = writer_->take_job();
  job.kind = detail::ChunkWriter::Job::Kind::kCheckpoint;
  job.prefix = std::move(prefix);
  job.tick = world.tick_index();
  job.data = world.snapshot();
  // The palette hashes of the tick just run (none in the first checkpoint: the recording has
  // no tick before it).
  const std::size_t entities = recorded_a_tick_ ? world.entity_count() : 0;
  if (recorded_a_tick_) palettes_hashed_by_world_ = world.world_hash() != 0;
  ByteWriter w(job.hashes);
  w.varint(entities);
  for (std::size_t i = 0; i < entities; ++i) {
    w.varint(world.entity_id_at(i));
    w.u64(entity_palette_hash(world, i));
  }
  if (config_.record_palettes && recorded_a_tick_) {
    ByteWriter p(job.palettes);
    p.u64(world.tick_index() - 1);
    p.varint(world.entity_count());
    for (std::size_t i = 0; i < world.entity_count(); ++i) {
      const std::span<const glm::mat4> palette = world.palette_at(i);
      p.varint(world.entity_id_at(i));
      p.varint(palette.size());
      for (const glm::mat4& m : palette) {
        for (int c = 0; c < 4; ++c) {
          for (int r = 0; r < 4; ++r) p.f32(m[c][r]);
        }
      }
    }
  }
  writer_->submit(std::move(job));
}

Status Recorder::close() {
  if (fd_ < 0) return {};
  hand_off_ticks();
  detail::ChunkWriter::Job end = writer_->take_job();
  end.kind = detail::ChunkWriter::Job::Kind::kBytes;
  std::vector<uint8_t> content;
  ByteWriter(content).u64(next_tick_);
  FrameCompressor compressor(config_.compression_level);
  detail::append_chunk(end.data, kChunkEnd, content, compressor);
  writer_->submit(std::move(end));
  writer_->finish();  // writes everything queued (nothing after a failure), then stops
  Status result = writer_->error();
  if (::close(fd_) != 0 && result) result = Error{"recorder: closing '" + path_ + "': " + std::strerror(errno)};
  fd_ = -1;
  return result;
}

}  // namespace posecast::replay
