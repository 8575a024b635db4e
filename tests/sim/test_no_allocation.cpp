// Steady-state ticks do not allocate: the per-tick path (evaluation on worker threads, fades
// ending, command queue checks, hashing) reuses per-worker scratch and per-entity buffers.
// This executable replaces the global operator new to count allocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "sim_test_support.h"

// GCC 12 pairs the inlined library new/delete with these replacements and warns that free()
// meets memory from "operator new": here both are ours (malloc/free), so that is intended.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace posecast::test {
namespace {

TEST(SteadyState, TicksAllocateNothingWithOneOrTwoThreads) {
  for (unsigned threads : {1u, 2u}) {
    TestWorld w(threads);
    for (EntityId id = 0; id < 32; ++id) {
      w.spawn(id);
      w.world.submit(0, at(0, id, PlayCommand{0, blend_motion(kWalk, 1.0f, kRun, 0.5f, id * 1000)}));
      w.world.submit(0, at(0, id, PlayCommand{1, clip_motion(kWave, -kSpeedOne)}));
      w.world.submit(0, at(0, id, SetLayerModeCommand{2, LayerMode::kAdditive, kIdle, 0}));
      w.world.submit(0, at(0, id, PlayCommand{2, clip_motion(kIdle)}));
      // Fades that end (and one interrupted, so a frozen pose is released) inside the window.
      w.world.submit(0, at(2, id, CrossfadeCommand{0, clip_motion(kRun), 100000, true}));
      w.world.submit(0, at(3, id, CrossfadeCommand{0, clip_motion(kWalk), 150000, false}));
    }
    const long at_start = g_allocations.load();
    w.run_to(4);  // commands applied (they may allocate)
    const long before = g_allocations.load();
    EXPECT_GT(before, at_start);  // the counter does see allocations
    w.run_to(64);
    EXPECT_EQ(g_allocations.load() - before, 0) << threads << " threads";
    EXPECT_EQ(w.world.find_entity(0)->layers[0].fade_source, FadeSource::kNone);
    EXPECT_EQ(w.world.stats().commands_rejected, 0u);
  }
}

}  // namespace
}  // namespace posecast::test
