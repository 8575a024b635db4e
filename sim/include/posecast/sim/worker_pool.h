#pragma once
// A fixed set of worker threads that all run one function and meet at a barrier: the world's
// evaluation pass, the server's snapshot pass. The function splits the work itself: fixed
// shares (partition_range below) or chunks claimed from a shared counter (World::tick). No
// task queue, no hidden globals; the owner (World, Server) owns its pool. With one thread
// everything runs inline on the caller.

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

  unsigned workers_ = 1;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // bumped by run(); workers wait for a new value
  unsigned remaining_ = 0;   // workers (other than the caller) still running this generation
  bool stopping_ = false;
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
