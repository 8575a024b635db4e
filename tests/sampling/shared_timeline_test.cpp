// Tracks sharing one key timeline: the importer stores key times that equal the previous
// track's once (Track::times_offset shared), the sampler looks the key up once per shared
// timeline, and it slerps the LINEAR rotations of a timeline eight at a time from key-major
// lanes (Clip::rotation_blocks). None of these may change a sampled bit: each layout is
// compared with one copy of the times per track, and with no rotation blocks at all.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hand_rigs.h"
#include "posecast/gltf_import.h"
#include "posecast/rig/rig_generator.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

using test::axis_angle_xyzw;
using test::chain_skeleton;
using test::concat;

// The same clip with a private copy of the key times for every track (the layout before
// timelines were shared), its rotation blocks derived again (one track per block).
Clip with_private_timelines(const Clip& shared) {
  Clip out = shared;
  out.times.clear();
  for (Track& track : out.tracks) {
    const uint32_t offset = track.times_offset;
    track.times_offset = static_cast<uint32_t>(out.times.size());
    out.times.insert(out.times.end(), shared.times.begin() + offset,
                     shared.times.begin() + offset + track.key_count);
  }
  out.derive_rotation_blocks();
  return out;
}

// The same clip without rotation blocks: every track sampled from its own values.
Clip without_rotation_blocks(const Clip& clip) {
  Clip out = clip;
  out.rotation_blocks.clear();
  out.rotation_lanes.clear();
  out.loose_tracks.clear();
  return out;
}

std::size_t distinct_timelines(const Clip& clip) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < clip.tracks.size(); ++i) {
    if (i == 0 || clip.tracks[i].times_offset != clip.tracks[i - 1].times_offset) ++count;
  }
  return count;
}

// Samples the three layouts (shared timelines, private ones, no rotation blocks) at `steps`
// times through and past the clip (forward playback, then jumps), each with its own cursor,
// and expects the same bits and the same cursors.
void expect_same_samples(const Skeleton& skeleton, const Clip& shared, int steps) {
  const Clip private_copy = with_private_timelines(shared);
  const Clip unblocked = without_rotation_blocks(shared);
  ASSERT_TRUE(private_copy.validate(skeleton).ok());
  ASSERT_TRUE(unblocked.validate(skeleton).ok());
  SamplingCursor cursor_shared;
  SamplingCursor cursor_private;
  SamplingCursor cursor_unblocked;
  cursor_shared.reset(shared);
  cursor_private.reset(private_copy);
  cursor_unblocked.reset(unblocked);
  std::vector<Transform> a(skeleton.node_count());
  std::vector<Transform> b(skeleton.node_count());
  std::vector<Transform> c(skeleton.node_count());
  const int64_t span = shared.duration_us + shared.duration_us / 4 + 1;
  for (int step = 0; step <= steps; ++step) {
    // Forward for the first half, then a scattered order (seeks, backwards).
    const int64_t time_us = step <= steps / 2 ? span * step / (steps / 2)
                                              : (span * (step * 7919 % steps)) / steps;
    SampleJob job_a{&skeleton, &shared, time_us, cursor_shared.keys, a};
    SampleJob job_b{&skeleton, &private_copy, time_us, cursor_private.keys, b};
    SampleJob job_c{&skeleton, &unblocked, time_us, cursor_unblocked.keys, c};
    ASSERT_TRUE(job_a.Run());
    ASSERT_TRUE(job_b.Run());
    ASSERT_TRUE(job_c.Run());
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)), 0)
        << shared.name << " at " << time_us << " us";
    ASSERT_EQ(std::memcmp(a.data(), c.data(), a.size() * sizeof(Transform)), 0)
        << shared.name << " at " << time_us << " us, without rotation blocks";
    ASSERT_EQ(cursor_shared.keys, cursor_private.keys) << shared.name << " at " << time_us;
    ASSERT_EQ(cursor_shared.keys, cursor_unblocked.keys) << shared.name << " at " << time_us;
  }
}

TEST(SharedTimeline, ImporterStoresTheGeneratedRigsKeyTimesOnceAndSamplingIsUnchanged) {
  rig::RigOptions options;
  options.joints = 24;
  Result<std::vector<uint8_t>> glb = rig::generate_rig_glb(options);
  ASSERT_TRUE(glb.ok());
  Result<Model> model = import_gltf_memory(glb.value(), "gen-rig:24");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model.value().rigs.at(0);
  ASSERT_FALSE(rig.clips.empty());
  for (const Clip& clip : rig.clips) {
    EXPECT_LT(distinct_timelines(clip), clip.tracks.size()) << clip.name;
    expect_same_samples(rig.skeleton, clip, 400);
  }
}

TEST(SharedTimeline, FoxClipsShareOneTimelineAndSampleAsBefore) {
  const std::string path = std::string(POSECAST_ASSETS_DIR) + "/Fox.glb";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not available";
  Result<Model> model = import_gltf_file(path);
  ASSERT_TRUE(model.ok()) << model.error().message;
  const Rig& rig = model.value().rigs.at(0);
  for (const Clip& clip : rig.clips) {
    EXPECT_EQ(distinct_timelines(clip), 1u) << clip.name;  // every channel keyed alike
    // Its 20 LINEAR rotation tracks in blocks of 8, 8 and 4; the translation stays loose.
    ASSERT_EQ(clip.rotation_blocks.size(), 3u) << clip.name;
    EXPECT_EQ(clip.rotation_blocks[0].count + clip.rotation_blocks[1].count +
                  clip.rotation_blocks[2].count,
              20)
        << clip.name;
    EXPECT_EQ(clip.loose_tracks.size(), 1u) << clip.name;
    expect_same_samples(rig.skeleton, clip, 600);
  }
}

TEST(SharedTimeline, HandBuiltTracksSharingAnOffsetSampleLikeCopies) {
  // Five tracks on one timeline (CUBICSPLINE and STEP on node 0; LINEAR translation and
  // rotation on node 1, rotation on node 2), then one on a timeline of its own, with
  // hand-set shared offsets.
  const Skeleton skeleton = chain_skeleton(3);
  Clip clip;
  clip.name = "shared";
  clip.times = {0.0f, 0.5f, 1.25f, 2.0f, 0.0f, 1.0f};
  clip.duration_seconds = 2.0f;
  clip.duration_us = 2'000'000;
  const std::vector<float> translations = {0, 0, 0, 1, 2, 3, -1, 0.5f, 2, 4, 4, 4};
  const std::vector<float> rotations_a =
      concat({axis_angle_xyzw(0, 0, 1, 0), axis_angle_xyzw(0, 0, 1, 40),
              axis_angle_xyzw(0, 1, 0, 130), axis_angle_xyzw(1, 0, 0, -60)});
  const std::vector<float> rotations_b =
      concat({axis_angle_xyzw(1, 1, 0, 10), axis_angle_xyzw(0, 1, 1, 95),
              axis_angle_xyzw(1, 0, 1, 20), axis_angle_xyzw(0, 0, 1, 170)});
  const std::vector<float> scales = {1, 1, 1, 2, 0.5f, 3};
  auto add = [&](uint16_t node, TrackTarget target, uint32_t times_offset, uint32_t keys,
                 const std::vector<float>& values,
                 Interpolation interpolation = Interpolation::kLinear) {
    Track t;
    t.node = node;
    t.target = target;
    t.interpolation = interpolation;
    t.key_count = keys;
    t.times_offset = times_offset;
    t.values_offset = static_cast<uint32_t>(clip.values.size());
    clip.values.insert(clip.values.end(), values.begin(), values.end());
    clip.tracks.push_back(t);
  };
  // Node 0: a CUBICSPLINE translation (in-tangent, value, out-tangent per key) and a STEP
  // rotation on the same timeline.
  std::vector<float> cubic;
  for (int k = 0; k < 4; ++k) {
    const auto f = static_cast<float>(k);
    const std::vector<float> key = {0.5f * f, -1.0f, 2.0f, f, f * f, -f, 1.0f - f, 0.25f, 3.0f};
    cubic.insert(cubic.end(), key.begin(), key.end());
  }
  add(0, TrackTarget::kTranslation, 0, 4, cubic, Interpolation::kCubicSpline);
  add(0, TrackTarget::kRotation, 0, 4, rotations_b, Interpolation::kStep);
  add(1, TrackTarget::kTranslation, 0, 4, translations);
  add(1, TrackTarget::kRotation, 0, 4, rotations_a);
  add(2, TrackTarget::kRotation, 0, 4, rotations_b);
  add(2, TrackTarget::kScale, 4, 2, scales);
  clip.derive_slerp_terms();
  clip.derive_rotation_blocks();
  ASSERT_TRUE(clip.validate(skeleton).ok()) << clip.validate(skeleton).error().message;
  EXPECT_EQ(distinct_timelines(clip), 2u);
  // The two LINEAR rotations share a block; the STEP rotation and the rest stay loose.
  ASSERT_EQ(clip.rotation_blocks.size(), 1u);
  EXPECT_EQ(clip.rotation_blocks[0].count, 2u);
  EXPECT_EQ(clip.loose_tracks, (std::vector<uint32_t>{0, 1, 2, 5}));
  expect_same_samples(skeleton, clip, 300);
}

// Ten LINEAR rotations on one timeline, two of them turning by under a degree per key pair
// and eight by tens of degrees: the blocks take the tracks in track order (det_key_slerp does
// the same work for every lane, so nearness does not group them), eight and then two. The
// samples are those of the other layouts.
TEST(SharedTimeline, RotationTracksFillBlocksInTrackOrder) {
  const Skeleton skeleton = chain_skeleton(10);
  Clip clip;
  clip.name = "nearness";
  clip.times = {0.0f, 0.5f, 1.0f};
  clip.duration_seconds = 1.0f;
  clip.duration_us = 1'000'000;
  const std::vector<uint16_t> near_nodes = {1, 8};
  for (uint16_t node = 0; node < 10; ++node) {
    const bool near =
        std::find(near_nodes.begin(), near_nodes.end(), node) != near_nodes.end();
    const float step = near ? 0.5f : 35.0f;  // degrees per key pair
    Track t;
    t.node = node;
    t.target = TrackTarget::kRotation;
    t.interpolation = Interpolation::kLinear;
    t.key_count = 3;
    t.times_offset = 0;
    t.values_offset = static_cast<uint32_t>(clip.values.size());
    const std::vector<float> keys =
        concat({axis_angle_xyzw(0, 0, 1, 0), axis_angle_xyzw(0, 0, 1, step),
                axis_angle_xyzw(0, 0, 1, 2 * step)});
    clip.values.insert(clip.values.end(), keys.begin(), keys.end());
    clip.tracks.push_back(t);
  }
  clip.derive_slerp_terms();
  clip.derive_rotation_blocks();
  ASSERT_TRUE(clip.validate(skeleton).ok()) << clip.validate(skeleton).error().message;
  ASSERT_EQ(clip.rotation_blocks.size(), 2u);
  const RotationBlock& first = clip.rotation_blocks[0];
  const RotationBlock& second = clip.rotation_blocks[1];
  ASSERT_EQ(first.count, 8u);
  ASSERT_EQ(second.count, 2u);
  EXPECT_EQ(std::vector<uint16_t>(first.tracks.begin(), first.tracks.begin() + 8),
            (std::vector<uint16_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(std::vector<uint16_t>(second.tracks.begin(), second.tracks.begin() + 2),
            (std::vector<uint16_t>{8, 9}));
  for (uint8_t lane = 0; lane < second.count; ++lane) {
    EXPECT_EQ(second.nodes[lane], second.tracks[lane]);  // track i animates node i
  }
  expect_same_samples(skeleton, clip, 200);
}

}  // namespace
}  // namespace posecast
