// EvalScratch (sim/src/evaluator.h, internal): every buffer a worker writes lies on cache lines
// of its own, so two workers' scratch never share a line however the heap was used before.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "evaluator.h"

namespace posecast::sim {
namespace {

// [begin, end) of a buffer's bytes as addresses.
struct ByteRange {
  uintptr_t begin, end;
};

template <class T>
ByteRange range_of(std::span<T> buffer) {
  const auto begin = reinterpret_cast<uintptr_t>(buffer.data());
  return {begin, begin + buffer.size_bytes()};
}

std::vector<ByteRange> buffers_of(EvalScratch& scratch) {
  std::vector<ByteRange> ranges;
  for (std::span<Transform> b : scratch.slot_poses) ranges.push_back(range_of(b));
  ranges.push_back(range_of(scratch.motion));
  ranges.push_back(range_of(scratch.layer));
  for (std::span<Transform> b : scratch.poses) ranges.push_back(range_of(b));
  ranges.push_back(range_of(scratch.batch_models));
  return ranges;
}

TEST(EvalScratch, EveryBufferStartsAndEndsOnACacheLineAndHoldsTheNodes) {
  for (std::size_t nodes : {1u, 24u, 26u, 128u, 301u}) {
    EvalScratch scratch;
    scratch.ensure(nodes);
    for (std::span<Transform> b : scratch.slot_poses) EXPECT_GE(b.size(), nodes);
    EXPECT_GE(scratch.motion.size(), nodes);
    EXPECT_GE(scratch.layer.size(), nodes);
    for (std::span<Transform> b : scratch.poses) EXPECT_GE(b.size(), nodes);
    EXPECT_GE(scratch.batch_models.size(), PaletteBatchJob::scratch_floats(nodes));
    for (const ByteRange& r : buffers_of(scratch)) {
      EXPECT_EQ(r.begin % kCacheLineBytes, 0u) << nodes << " nodes";
      EXPECT_EQ(r.end % kCacheLineBytes, 0u) << nodes << " nodes";
    }
  }
}

TEST(EvalScratch, BuffersDoNotOverlapAndSurviveTheScratchBeingMoved) {
  std::vector<EvalScratch> workers(2);
  for (EvalScratch& s : workers) s.ensure(24);
  std::vector<ByteRange> all;
  for (EvalScratch& s : workers) {
    for (const ByteRange& r : buffers_of(s)) all.push_back(r);
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      EXPECT_TRUE(all[i].end <= all[j].begin || all[j].end <= all[i].begin) << i << " and " << j;
    }
  }
  // The World grows its vector of scratch when workers are added: the slices must follow.
  const Transform* motion = workers[0].motion.data();
  workers.reserve(64);
  EXPECT_EQ(workers[0].motion.data(), motion);
  workers[0].ensure(24);  // no growth: nothing moves
  EXPECT_EQ(workers[0].motion.data(), motion);
  workers[0].ensure(200);  // growth: a new arena, laid out the same way
  EXPECT_GE(workers[0].motion.size(), 200u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(workers[0].motion.data()) % kCacheLineBytes, 0u);
}

}  // namespace
}  // namespace posecast::sim
