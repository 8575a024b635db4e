#include "chunk_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <utility>

#include "chunks.h"
#include "posecast/byte_io.h"

namespace posecast::replay::detail {

ChunkWriter::ChunkWriter(int fd, std::string path, bool fsync, int level)
    : fd_(fd), path_(std::move(path)), fsync_(fsync), compressor_(level), thread_([this] { run(); }) {}

ChunkWriter::~ChunkWriter() { finish(); }

ChunkWriter::Job ChunkWriter::take_job() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty()) return Job{};
  Job job = std::move(spare_.back());
  spare_.pop_back();
  job.data.clear();
  job.hashes.clear();
  job.palettes.clear();
  job.prefix.clear();
  return job;
}

void ChunkWriter::submit(Job&& job) {
  // No notify: waking the writer is a system call (futex) that wakes another core, which costs
  // the tick thread tens of microseconds a hand-over (bench_replay RecordingOverhead flush_us:
  // about 1 us per tick against 0.02 without); the writer looks for jobs every kPollInterval
  // instead.
  std::lock_guard<std::mutex> lock(mutex_);
  queued_.push_back(std::move(job));
}

Status ChunkWriter::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!queued_.empty()) wake_.notify_one();  // the caller waits anyway: no need to poll
  idle_.wait(lock, [this] { return queued_.empty() && !writing_; });
  if (!error_.empty()) return Error{error_};
  return {};
}

Status ChunkWriter::error() const {
  if (!failed()) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  return Error{error_};
}

void ChunkWriter::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void ChunkWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kPollInterval, [this] { return stopping_ || !queued_.empty(); });
    if (!stopping_ && queued_.empty()) continue;
    if (queued_.empty()) return;  // stopping, and everything is written
    Job job = std::move(queued_.front());
    queued_.pop_front();
    writing_ = true;
    const bool write = error_.empty();  // after a failure nothing more is written
    lock.unlock();
    if (write) write_job(job);
    lock.lock();
    writing_ = false;
    spare_.push_back(std::move(job));
    if (queued_.empty()) idle_.notify_all();
  }
}

bool ChunkWriter::write_job(Job& job) {
  chunk_ = job.prefix;
  content_.clear();
  ByteWriter w(content_);
  switch (job.kind) {
    case Job::Kind::kBytes:
      chunk_.insert(chunk_.end(), job.data.begin(), job.data.end());
      return write_all(chunk_);
    case Job::Kind::kTicks:
      // Command records repeat their layout from entity to entity: zstd stores them in about
      // a third of their size (bench_replay, tick_KB_per_minute).
      w.u64(job.tick);
      w.varint(job.tick_count);
      w.bytes(job.data);
      append_chunk(chunk_, kChunkTicks, content_, compressor_);
      return write_all(chunk_);
    case Job::Kind::kCheckpoint:
      w.u64(job.tick);
      w.bytes(job.hashes);
      w.bytes(job.data);
      append_chunk(chunk_, kChunkCheckpoint, content_, compressor_);
      if (!job.palettes.empty()) append_chunk(chunk_, kChunkPalettes, job.palettes, compressor_);
      return write_all(chunk_);
  }
  return false;
}

bool ChunkWriter::write_all(const std::vector<uint8_t>& bytes) {
  const auto fail = [this](const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) error_ = message;
    failed_.store(true, std::memory_order_release);
    return false;
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return fail("recorder: writing '" + path_ + "' failed: " + (n < 0 ? std::strerror(errno) : "no progress") +
                  " (the file is valid up to its last complete chunk)");
    }
    done += static_cast<std::size_t>(n);
  }
  bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
  if (fsync_ && ::fsync(fd_) != 0) return fail("recorder: fsync of '" + path_ + "' failed: " + std::strerror(errno));
  return true;
}

}  // namespace posecast::replay::detail
