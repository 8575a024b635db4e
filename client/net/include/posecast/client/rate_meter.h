#pragma once
// RateMeter: bytes per second over the last full second, in 125 ms buckets (time passed in).

#include <array>
#include <cstdint>

namespace posecast::client {

class RateMeter {
 public:
  static constexpr int64_t kBucketUs = 125'000;
  static constexpr std::size_t kBuckets = 8;  // one second

  void add(int64_t now_us, uint64_t bytes);
  // Bytes per second over the 8 full buckets before the one `now_us` falls in.
  double per_second(int64_t now_us) const;
  uint64_t total() const { return total_; }

 private:
  void roll(int64_t now_us);

  std::array<uint64_t, kBuckets + 1> buckets_{};  // ring; includes the current bucket
  int64_t current_ = -1;                          // index (now / kBucketUs) of the current bucket
  uint64_t total_ = 0;
};

}  // namespace posecast::client
