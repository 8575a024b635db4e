#pragma once
// SendWindow: the bytes sent to one client over the last second, for a bandwidth budget that
// is never exceeded in any one-second window (docs/server.md, "Bandwidth"). A fixed ring of
// (time, bytes) records; no allocation after construction.

#include <cstdint>
#include <vector>

namespace posecast::server {

class SendWindow {
 public:
  explicit SendWindow(std::size_t capacity = 512) : records_(capacity) {}

  // Bytes recorded in (now - window_us, now].
  uint64_t bytes_in_window(int64_t now_us, int64_t window_us = 1'000'000) {
    expire(now_us - window_us);
    return total_;
  }

  // Records `bytes` sent at `now_us` (times must not go backwards). When the ring is full the
  // record is merged into the newest one (the total stays exact; only expiry gets coarser,
  // which can only make the window look fuller: the budget stays safe).
  void record(int64_t now_us, uint64_t bytes) {
    total_ += bytes;
    if (count_ > 0) {
      Record& newest = records_[(head_ + count_ - 1) % records_.size()];
      if (newest.time_us == now_us || count_ == records_.size()) {
        newest.bytes += bytes;
        newest.time_us = now_us;
        return;
      }
    }
    records_[(head_ + count_) % records_.size()] = Record{now_us, bytes};
    ++count_;
  }

 private:
  struct Record {
    int64_t time_us = 0;
    uint64_t bytes = 0;
  };
  void expire(int64_t cutoff_us) {
    while (count_ > 0 && records_[head_].time_us <= cutoff_us) {
      total_ -= records_[head_].bytes;
      head_ = (head_ + 1) % records_.size();
      --count_;
    }
  }

  std::vector<Record> records_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  uint64_t total_ = 0;
};

}  // namespace posecast::server
