#pragma once
// How fast this host runs plain integer code right now, reported beside a benchmark's figures.
//
// Why: the development VM is a shared 2-core machine whose vCPUs are sometimes slowed by the
// host (another tenant on the same physical core, invisible to the guest: /proc/stat shows no
// steal). Over a session the same binary's CPU time moves by 25-40 % between a fast and a slow
// level, and a plain integer loop moves with it. A figure is only comparable with figures
// taken at a similar probe value; docs/performance.md gives the values of both levels.
//
// The probe: a dependent chain of 2^21 64-bit multiply-adds (no memory traffic, latency-bound,
// so it measures the core's speed, not caches), thread CPU time, the fastest of three runs
// (about 10 ms in all). Result: CPU nanoseconds per step.

#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

namespace posecast::bench {

inline double host_probe_ns() {
  constexpr uint64_t kSteps = uint64_t{1} << 21;
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    timespec start{}, end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    uint64_t x = 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(run);
    for (uint64_t i = 0; i < kSteps; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    benchmark::DoNotOptimize(x);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
    const double ns = static_cast<double>(end.tv_sec - start.tv_sec) * 1e9 +
                      static_cast<double>(end.tv_nsec - start.tv_nsec);
    best = std::min(best, ns / static_cast<double>(kSteps));
  }
  return best;
}

// Adds the counter "host_probe_ns" (see above) to a benchmark's results.
inline void report_host_probe(benchmark::State& state) { state.counters["host_probe_ns"] = host_probe_ns(); }

}  // namespace posecast::bench
