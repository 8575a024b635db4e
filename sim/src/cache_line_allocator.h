#pragma once
// Internal: an allocator whose blocks start on a 64-byte cache line, for the entities'
// palettes. A glm::mat4 is 64 bytes, so each palette matrix is then exactly one cache line:
// the evaluation pass writes whole lines (a palette store touches one line, not two), and its
// non-temporal stores (PaletteBatchJob::streaming_stores) fill whole lines, which is what makes
// them pay (streaming into 16-byte-aligned palettes took 1.5x the time). bench_animator
// Fox/10000, one thread, both together: 0.90-0.92x the time.

#include <cstddef>
#include <new>

namespace posecast::sim {

inline constexpr std::size_t kCacheLineBytes = 64;

template <class T>
struct CacheLineAllocator {
  using value_type = T;

  CacheLineAllocator() = default;
  template <class U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>&) {}

  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLineBytes}));
  }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, std::align_val_t{kCacheLineBytes}); }

  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

}  // namespace posecast::sim
