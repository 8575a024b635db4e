#pragma once
// Internal: the Recorder's writer thread. The tick thread hands over what a chunk needs (a
// batch of tick records, a checkpoint's snapshot and hashes, or framed bytes); the writer
// compresses, frames and write()s each job in the order handed over. Compression and the
// system calls (one write() a flush interval, fsync when configured) then stay off the tick
// thread, where they would be most of the recorder's cost (bench_replay RecordingOverhead:
// flush_us and checkpoint_us).
//
// Ownership: the writer writes to `fd` but does not close it. Thread safety: one thread (the
// recorder's) calls everything; the writer thread only runs jobs.
// Errors: the first failed write() or fsync() stops all later writing; error() and
// wait_idle() report it, and the file stays valid up to its last complete chunk.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "posecast/replay/zstd_frame.h"
#include "posecast/result.h"

namespace posecast::replay::detail {

class ChunkWriter {
 public:
  struct Job {
    enum class Kind : uint8_t { kTicks, kCheckpoint, kBytes };
    Kind kind = Kind::kBytes;
    uint64_t tick = 0;        // kTicks: the first tick; kCheckpoint: the world's tick
    uint64_t tick_count = 0;  // kTicks
    // kTicks: the tick records; kCheckpoint: World::snapshot(); kBytes: framed chunks.
    std::vector<uint8_t> data;
    // kCheckpoint: what follows the snapshot in CKPT (varint entities { varint id, u64 hash }),
    // and the PALS payload (empty: no PALS chunk).
    std::vector<uint8_t> hashes;
    std::vector<uint8_t> palettes;
    // Framed bytes written before the job's chunk, in the same write() (the signature and
    // HEAD before a recording's first checkpoint).
    std::vector<uint8_t> prefix;
  };

  // Starts the thread. `fd` must stay open until finish() returns. `level`: the zstd level of
  // every chunk the writer frames.
  ChunkWriter(int fd, std::string path, bool fsync, int level);
  ~ChunkWriter();  // finish()
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // An empty job to fill, reusing the buffers of one already written (no allocation once the
  // buffers have grown).
  Job take_job();
  // Queues `job` behind the ones handed over before; the writer takes it within kPollInterval.
  // No system call: a mutex that the writer holds only to take a job.
  void submit(Job&& job);
  // Waits until every queued job is written. The first write error, if any.
  Status wait_idle();
  // The first write error so far, without waiting.
  Status error() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  uint64_t bytes_written() const { return bytes_.load(std::memory_order_relaxed); }
  // Writes what is queued and stops the thread (idempotent).
  void finish();

 private:
  // How often the writer looks for queued jobs: submit() does not wake it (wait_idle() and
  // finish() do). So a handed-over batch is written within about this long.
  static constexpr std::chrono::milliseconds kPollInterval{5};

  void run();
  // On the writer thread: frames `job` into chunk_ and writes it; false after a failure.
  bool write_job(Job& job);
  bool write_all(const std::vector<uint8_t>& bytes);

  const int fd_;
  const std::string path_;
  const bool fsync_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;  // stopping_, or a caller waits for the queue (wait_idle)
  std::condition_variable idle_;  // the queue emptied
  std::deque<Job> queued_;
  std::vector<Job> spare_;  // written jobs, for take_job
  bool writing_ = false;    // the writer holds a job outside the queue
  bool stopping_ = false;
  std::string error_;
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> bytes_{0};

  // The writer thread's compressor and scratch.
  FrameCompressor compressor_;
  std::vector<uint8_t> content_, chunk_;
  std::thread thread_;  // last: starts after everything above is built
};

}  // namespace posecast::replay::detail
