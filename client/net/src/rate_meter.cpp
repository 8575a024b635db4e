#include "posecast/client/rate_meter.h"

namespace posecast::client {
namespace {
constexpr std::size_t kRing = RateMeter::kBuckets + 1;
std::size_t ring_index(int64_t bucket) { return static_cast<std::size_t>(bucket % static_cast<int64_t>(kRing)); }
}  // namespace

void RateMeter::roll(int64_t now_us) {
  const int64_t bucket = now_us / kBucketUs;
  if (current_ < 0 || bucket - current_ > static_cast<int64_t>(kRing)) {
    buckets_.fill(0);
    current_ = bucket;
    return;
  }
  while (current_ < bucket) {
    ++current_;
    buckets_[ring_index(current_)] = 0;
  }
}

void RateMeter::add(int64_t now_us, uint64_t bytes) {
  if (now_us < 0) now_us = 0;
  roll(now_us);
  buckets_[ring_index(current_)] += bytes;
  total_ += bytes;
}

double RateMeter::per_second(int64_t now_us) const {
  if (current_ < 0 || now_us < 0) return 0.0;
  const int64_t bucket = now_us / kBucketUs;
  uint64_t sum = 0;
  for (int64_t b = bucket - static_cast<int64_t>(kBuckets); b < bucket; ++b) {
    if (b < 0 || b > current_ || current_ - b >= static_cast<int64_t>(kRing)) continue;
    sum += buckets_[ring_index(b)];
  }
  return static_cast<double>(sum) * 1e6 / static_cast<double>(kBucketUs * static_cast<int64_t>(kBuckets));
}

}  // namespace posecast::client
