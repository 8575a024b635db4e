#pragma once
// A fixed set of worker threads that all run one function and meet at a barrier: the world's
// evaluation pass, the server's snapshot pass. The function splits the work itself: fixed
// shares (partition_range below) or chunks claimed from a shared counter (World::tick). No
// task queue, no hidden globals; the owner (World, Server) owns its pool. With one thread
// everything runs inline on the caller.
//
// Waits spin briefly before they sleep (kSpinMicroseconds), when the pool has no more threads
// than the machine has hardware threads: the caller waiting for the last worker at the end of
// run(), a worker waiting for the next run(). A sleeping thread's wake-up takes tens of
// microseconds on a virtual machine (about 40 us measured), paid by the worker at the
// start of every pass of a few milliseconds and by the caller at its end. The cost: up to
// kSpinMicroseconds of a core per wait that the next event does not end (a server ticking at
// 60 Hz: at most 0.3 % of a core per worker). With more threads than cores a spinning thread
// would take the working threads' time, so such a pool only sleeps.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace posecast::sim {

class WorkerPool {
 public:
  using Task = void (*)(void* context, unsigned worker, unsigned workers);

  // threads >= 1 (0 counts as 1): threads - 1 std::threads are started; the caller of run()
  // is worker 0.
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const { return workers_; }

  // Calls task(context, w, size()) once for every worker w and returns when all have
  // returned. Never allocates. Call from one thread at a time; `task` must not throw.
  void run(Task task, void* context);

 private:
  void worker_loop(unsigned worker);

  static constexpr int kSpinMicroseconds = 50;

  unsigned workers_ = 1;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  // Written under mutex_; atomics so that the spinning waits can read them without it.
  std::atomic<uint64_t> generation_{0};  // bumped by run(); workers wait for a new value
  std::atomic<unsigned> remaining_{0};   // workers (other than the caller) still running
  std::atomic<bool> stopping_{false};
  bool spin_ = false;  // workers_ <= the hardware threads
  Task task_ = nullptr;
  void* context_ = nullptr;
};

// The entities [begin, end) worker `worker` of `workers` handles out of `count`: fixed
// contiguous ranges, so each entity is always computed by the same code on its own data.
struct IndexRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};
inline IndexRange partition_range(std::size_t count, unsigned worker, unsigned workers) {
  return {count * worker / workers, count * (worker + 1) / workers};
}

}  // namespace posecast::sim
