#include "posecast/sim/worker_pool.h"

namespace posecast::sim {

WorkerPool::WorkerPool(unsigned threads) : workers_(threads == 0 ? 1u : threads) {
  threads_.reserve(workers_ - 1);
  for (unsigned w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { worker_loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
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
    remaining_ = workers_ - 1;
    ++generation_;
  }
  start_.notify_all();
  task(context, 0, workers_);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return remaining_ == 0; });
}

void WorkerPool::worker_loop(unsigned worker) {
  uint64_t seen = 0;
  for (;;) {
    Task task = nullptr;
    void* context = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      task = task_;
      context = context_;
    }
    task(context, worker, workers_);
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --remaining_ == 0;
    }
    if (last) done_.notify_one();
  }
}

}  // namespace posecast::sim
