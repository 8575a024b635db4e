#include "posecast/sim/worker_pool.h"

#include <chrono>

namespace posecast::sim {
namespace {

// One step of a spinning wait: tells the CPU that this is a spin (and frees a hyperthread
// sibling's share of the core).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or `microseconds` have passed; returns done()'s last value.
template <class Done>
bool spin_until(Done&& done, int microseconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
  for (;;) {
    for (int i = 0; i < 64; ++i) {  // the clock read (~20 ns) once per 64 pauses
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads) : workers_(threads == 0 ? 1u : threads) {
  const unsigned hardware = std::thread::hardware_concurrency();  // 0: unknown
  spin_ = hardware != 0 && workers_ <= hardware;
  threads_.reserve(workers_ - 1);
  for (unsigned w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { worker_loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::run(Task task, void* context) {
  if (workers_ == 1) {
    task(context, 0, 1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task;
    context_ = context;
    remaining_.store(workers_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_.notify_all();
  task(context, 0, workers_);
  const auto all_done = [this] { return remaining_.load(std::memory_order_acquire) == 0; };
  if (spin_ && spin_until(all_done, kSpinMicroseconds)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, all_done);
}

void WorkerPool::worker_loop(unsigned worker) {
  uint64_t seen = 0;
  for (;;) {
    const auto started = [&] {
      return stopping_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    if (spin_) spin_until(started, kSpinMicroseconds);
    Task task = nullptr;
    void* context = nullptr;
    {
      // task_ and context_ are read under the mutex run() wrote them under.
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, started);
      if (stopping_.load(std::memory_order_relaxed)) return;
      seen = generation_.load(std::memory_order_relaxed);
      task = task_;
      context = context_;
    }
    task(context, worker, workers_);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Under the mutex: run() checks remaining_ under it before it sleeps, so this
      // notification cannot fall between its check and its wait.
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

}  // namespace posecast::sim
