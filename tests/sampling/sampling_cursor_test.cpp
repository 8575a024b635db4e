// The cursor is only a hint: forward, backward, random and wrapped playback must give the same
// bits as a fresh binary search, and a garbage cursor must be harmless.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "hand_rigs.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

// Three nodes, one track of each mode and target, 40 keys at uneven times in [0.25, 6.0].
Clip many_key_clip() {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> times;
  float t = 0.25f;
  for (int k = 0; k < 40; ++k) {
    times.push_back(t);
    t += 0.05f + 0.2f * (unit(rng) + 1.0f);
  }
  auto vec3s = [&](int per_key) {
    std::vector<float> v;
    for (int i = 0; i < 40 * per_key * 3; ++i) v.push_back(unit(rng) * 5.0f);
    return v;
  };
  auto quats = [&](int per_key) {
    std::vector<float> v;
    for (int k = 0; k < 40; ++k) {
      for (int e = 0; e < per_key; ++e) {
        float q[4] = {unit(rng), unit(rng), unit(rng), unit(rng)};
        const float len = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (float c : q) v.push_back(c / len);
      }
    }
    return v;
  };
  return test::ClipBuilder()
      .track(0, TrackTarget::kTranslation, Interpolation::kLinear, times, vec3s(1))
      .track(0, TrackTarget::kRotation, Interpolation::kLinear, times, quats(1))
      .track(0, TrackTarget::kScale, Interpolation::kStep, times, vec3s(1))
      .track(1, TrackTarget::kRotation, Interpolation::kCubicSpline, times, quats(3))
      .track(1, TrackTarget::kTranslation, Interpolation::kCubicSpline, times, vec3s(3))
      .track(2, TrackTarget::kRotation, Interpolation::kStep, times, quats(1))
      .build();
}

bool same_bits(const std::vector<Transform>& a, const std::vector<Transform>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)) == 0;
}

// Plays `times` with one persistent cursor and compares every pose, and the cursor itself,
// with a fresh cursor's (pure binary search).
void expect_cursor_reuse_matches_fresh_search(const std::vector<int64_t>& times) {
  const Skeleton skeleton = test::chain_skeleton(3);
  const Clip clip = many_key_clip();
  std::vector<uint32_t> reused(clip.tracks.size(), 0u);
  for (int64_t t : times) {
    std::vector<uint32_t> fresh(clip.tracks.size(), 0u);
    const std::vector<Transform> with_reuse = test::sample(skeleton, clip, t, reused);
    const std::vector<Transform> with_fresh = test::sample(skeleton, clip, t, fresh);
    ASSERT_FALSE(with_reuse.empty());
    ASSERT_TRUE(same_bits(with_reuse, with_fresh)) << "t=" << t;
    ASSERT_EQ(reused, fresh) << "t=" << t;
  }
}

TEST(SampleJobCursor, ForwardPlaybackMatchesFreshSearch) {
  std::vector<int64_t> times;
  for (int64_t t = -100'000; t < 6'500'000; t += 16'667) times.push_back(t);
  expect_cursor_reuse_matches_fresh_search(times);
}

TEST(SampleJobCursor, FastForwardSkippingKeysMatchesFreshSearch) {
  std::vector<int64_t> times;
  for (int64_t t = 0; t < 6'500'000; t += 333'333) times.push_back(t);
  expect_cursor_reuse_matches_fresh_search(times);
}

TEST(SampleJobCursor, BackwardPlaybackMatchesFreshSearch) {
  std::vector<int64_t> times;
  for (int64_t t = 6'500'000; t > -100'000; t -= 16'667) times.push_back(t);
  expect_cursor_reuse_matches_fresh_search(times);
}

TEST(SampleJobCursor, RandomTimesMatchFreshSearch) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<int64_t> dist(-1'000'000, 7'000'000);
  std::vector<int64_t> times;
  for (int i = 0; i < 2000; ++i) times.push_back(dist(rng));
  expect_cursor_reuse_matches_fresh_search(times);
}

TEST(SampleJobCursor, ExactKeyTimesMatchFreshSearch) {
  const Clip clip = many_key_clip();
  std::vector<int64_t> times;
  // Microsecond times nearest each key, and one either side.
  for (uint32_t k = 0; k < clip.tracks[0].key_count; ++k) {
    const auto us = static_cast<int64_t>(std::llround(static_cast<double>(clip.times[k]) * 1e6));
    times.insert(times.end(), {us - 1, us, us + 1});
  }
  expect_cursor_reuse_matches_fresh_search(times);
}

TEST(SampleJobCursor, GarbageCursorIsHarmlessAndCorrected) {
  const Skeleton skeleton = test::chain_skeleton(3);
  const Clip clip = many_key_clip();
  for (uint32_t garbage : {1u, 39u, 40u, 41u, 1000u, 0xFFFFFFFFu, 0xFFFFFFFEu}) {
    std::vector<uint32_t> cursor(clip.tracks.size(), garbage);
    std::vector<uint32_t> fresh(clip.tracks.size(), 0u);
    const std::vector<Transform> a = test::sample(skeleton, clip, 2'345'678, cursor);
    const std::vector<Transform> b = test::sample(skeleton, clip, 2'345'678, fresh);
    EXPECT_TRUE(same_bits(a, b)) << "cursor value " << garbage;
    EXPECT_EQ(cursor, fresh);
  }
}

TEST(SamplingCursor, ResetSizesOneKeyPerTrack) {
  const Clip clip = many_key_clip();
  SamplingCursor cursor;
  cursor.reset(clip);
  EXPECT_EQ(cursor.keys.size(), clip.tracks.size());
  EXPECT_EQ(cursor.keys, std::vector<uint32_t>(clip.tracks.size(), 0u));
}

}  // namespace
}  // namespace posecast
