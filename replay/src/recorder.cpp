#include "posecast/replay/recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "chunks.h"
#include "posecast/hash.h"
#include "posecast/replay/lz_codec.h"

namespace posecast::replay {

Result<std::unique_ptr<Recorder>> Recorder::create(const std::string& path, const sim::World& world,
                                                   std::vector<std::string> model_sources,
                                                   RecorderConfig config) {
  if (model_sources.size() != world.model_count()) {
    return Error{"recorder: " + std::to_string(model_sources.size()) + " model sources for a world of " +
                 std::to_string(world.model_count()) + " models"};
  }
  if (!world.computes_palettes()) {
    return Error{"recorder: the world computes no palettes, and a recording's hashes are palette hashes "
                 "(turn on sim::WorldOptions::palettes, or server::ServerOptions::world_palettes)"};
  }
  const uint32_t rate = world.tick_rate_hz();
  if (config.checkpoint_interval_ticks == 0) config.checkpoint_interval_ticks = 5 * rate;
  if (config.flush_interval_ticks == 0) config.flush_interval_ticks = rate;

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

  // Signature, header and first checkpoint go out in one write(), so the file is a usable
  // recording from its first byte on disk.
  rec->chunk_.assign(std::begin(kRecordingSignature), std::end(kRecordingSignature));
  rec->payload_.clear();
  WireWriter w(rec->payload_);
  detail::write_header(w, h);
  detail::append_chunk(rec->chunk_, kChunkHeader, rec->payload_);
  rec->build_checkpoint(world, rec->chunk_);
  if (Status s = rec->write_bytes(rec->chunk_); !s) return s.error();
  ++rec->stats_.checkpoints;
  rec->last_checkpoint_tick_ = h.start_tick;
  return rec;
}

Recorder::~Recorder() { (void)close(); }

Status Recorder::fail_if_failed() const {
  if (!error_.empty()) return Error{error_};
  if (fd_ < 0) return Error{"recorder: '" + path_ + "' is closed"};
  return {};
}

Status Recorder::write_bytes(std::span<const uint8_t> bytes) {
  if (Status s = fail_if_failed(); !s) return s;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "recorder: writing '" + path_ + "' failed: " + (n < 0 ? std::strerror(errno) : "no progress") +
               " (the file is valid up to its last complete chunk)";
      return Error{error_};
    }
    done += static_cast<std::size_t>(n);
  }
  stats_.bytes += bytes.size();
  ++stats_.flushes;
  if (config_.fsync && ::fsync(fd_) != 0) {
    error_ = "recorder: fsync of '" + path_ + "' failed: " + std::strerror(errno);
    return Error{error_};
  }
  return {};
}

Status Recorder::append_tick(uint64_t tick, std::span<const sim::QueuedCommand> commands, uint64_t world_hash) {
  if (Status s = fail_if_failed(); !s) return s;
  if (tick != next_tick_) {
    return Error{"recorder: tick " + std::to_string(tick) + " recorded, expected tick " +
                 std::to_string(next_tick_) + " (call record_tick once after every World::tick)"};
  }
  if (batch_ticks_ == 0) batch_first_tick_ = tick;
  WireWriter w(batch_);
  w.u64(world_hash);
  w.varint(commands.size());
  for (const sim::QueuedCommand& q : commands) encode_command(w, q.submitter, q.command, tick);
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

uint64_t Recorder::tick_world_hash(const sim::World& world) {
  // A World that does not hash (WorldOptions::hash_palettes off, as the server runs) reports
  // 0; any hashing World reports a non-zero value even with no entity (the hash of nothing).
  palettes_hashed_by_world_ = world.world_hash() != 0;
  if (!palettes_hashed_by_world_) ++stats_.ticks_hashed_here;
  return world.world_hash_of_palettes();
}

Status Recorder::record_tick(const sim::World& world) {
  if (world.tick_index() == 0) return Error{"recorder: record_tick before the world's first tick"};
  if (Status s = append_tick(world.tick_index() - 1, world.last_tick_commands(), tick_world_hash(world)); !s) return s;
  if (world.tick_index() % config_.checkpoint_interval_ticks == 0) return append_checkpoint(world);
  if (batch_ticks_ >= config_.flush_interval_ticks) return flush();
  return {};
}

Status Recorder::flush() {
  if (Status s = fail_if_failed(); !s) return s;
  if (batch_ticks_ == 0) return {};
  // Command records repeat their layout from entity to entity: compressed they take about
  // a third less (bench_replay, tick_KB_per_minute).
  lz_compress(batch_, compressed_);
  const bool compress = compressed_.size() < batch_.size();
  payload_.clear();
  WireWriter w(payload_);
  w.u64(batch_first_tick_);
  w.varint(batch_ticks_);
  w.u8(compress ? 1 : 0);
  w.varint(batch_.size());
  w.bytes(compress ? std::span<const uint8_t>(compressed_) : std::span<const uint8_t>(batch_));
  chunk_.clear();
  detail::append_chunk(chunk_, kChunkTicks, payload_);
  if (Status s = write_bytes(chunk_); !s) return s;
  batch_.clear();
  batch_ticks_ = 0;
  stats_.buffered_ticks = 0;
  return {};
}

Status Recorder::append_checkpoint(const sim::World& world) {
  if (Status s = flush(); !s) return s;
  if (world.tick_index() != next_tick_) {
    return Error{"recorder: checkpoint of a world at tick " + std::to_string(world.tick_index()) +
                 ", the recording is at tick " + std::to_string(next_tick_)};
  }
  if (stats_.checkpoints > 0 && last_checkpoint_tick_ == next_tick_) return {};  // one per tick
  chunk_.clear();
  build_checkpoint(world, chunk_);
  if (Status s = write_bytes(chunk_); !s) return s;
  ++stats_.checkpoints;
  last_checkpoint_tick_ = next_tick_;
  return {};
}

void Recorder::build_checkpoint(const sim::World& world, std::vector<uint8_t>& out) {
  const std::vector<uint8_t> snapshot = world.snapshot();
  lz_compress(snapshot, compressed_);
  const bool compress = compressed_.size() < snapshot.size();
  payload_.clear();
  WireWriter w(payload_);
  w.u64(world.tick_index());
  w.u8(compress ? 1 : 0);
  w.varint(snapshot.size());
  const std::span<const uint8_t> stored = compress ? std::span<const uint8_t>(compressed_) : std::span<const uint8_t>(snapshot);
  w.varint(stored.size());
  w.bytes(stored);
  // The palette hashes of the tick just run (none in the first checkpoint: the recording has
  // no tick before it).
  const std::size_t entities = recorded_a_tick_ ? world.entity_count() : 0;
  if (recorded_a_tick_) palettes_hashed_by_world_ = world.world_hash() != 0;
  w.varint(entities);
  for (std::size_t i = 0; i < entities; ++i) {
    w.varint(world.entity_id_at(i));
    w.u64(entity_palette_hash(world, i));
  }
  detail::append_chunk(out, kChunkCheckpoint, payload_);
  if (!config_.record_palettes || !recorded_a_tick_) return;
  payload_.clear();
  WireWriter p(payload_);
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
  detail::append_chunk(out, kChunkPalettes, payload_);
}

Status Recorder::close() {
  if (fd_ < 0) return {};
  Status result = flush();
  if (result) {
    payload_.clear();
    WireWriter w(payload_);
    w.u64(next_tick_);
    chunk_.clear();
    detail::append_chunk(chunk_, kChunkEnd, payload_);
    result = write_bytes(chunk_);
  }
  if (::close(fd_) != 0 && result) result = Error{"recorder: closing '" + path_ + "': " + std::strerror(errno)};
  fd_ = -1;
  return result;
}

}  // namespace posecast::replay
