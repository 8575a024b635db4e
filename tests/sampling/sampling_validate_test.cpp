// SampleJob::Validate rejects every invalid setup, and Run() then returns false writing
// nothing (neither the output nor the cursor), in the manner of ozz's sampling_job tests.

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "hand_rigs.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

class SampleJobValidate : public testing::Test {
 protected:
  SampleJobValidate()
      : skeleton_(test::chain_skeleton(2)),
        clip_(test::ClipBuilder()
                  .track(0, TrackTarget::kTranslation, Interpolation::kLinear, {0.0f, 1.0f},
                         {0, 0, 0, 1, 1, 1})
                  .track(1, TrackTarget::kRotation, Interpolation::kCubicSpline, {0.0f, 1.0f},
                         std::vector<float>(2 * 3 * 4, 0.5f))
                  .build()),
        cursor_(clip_.tracks.size(), 7u),
        output_(skeleton_.node_count()) {
    for (Transform& t : output_) t.translation = glm::vec3(-42.0f);
  }

  SampleJob valid_job() {
    SampleJob job;
    job.skeleton = &skeleton_;
    job.clip = &clip_;
    job.time_us = 500'000;
    job.cursor = cursor_;
    job.output = output_;
    return job;
  }

  // The job is rejected and Run() leaves output and cursor untouched.
  void expect_rejected(const SampleJob& job, const char* what) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(job.Validate());
    EXPECT_FALSE(job.Run());
    for (const Transform& t : output_) EXPECT_EQ(t.translation, glm::vec3(-42.0f));
    EXPECT_EQ(cursor_, std::vector<uint32_t>(clip_.tracks.size(), 7u));
  }

  Skeleton skeleton_;
  Clip clip_;
  std::vector<uint32_t> cursor_;
  std::vector<Transform> output_;
};

TEST_F(SampleJobValidate, AcceptsAValidSetup) {
  const SampleJob job = valid_job();
  EXPECT_TRUE(job.Validate());
  EXPECT_TRUE(job.Run());
  EXPECT_NE(output_[0].translation, glm::vec3(-42.0f));
}

TEST_F(SampleJobValidate, DefaultJobIsInvalid) { expect_rejected(SampleJob{}, "default"); }

TEST_F(SampleJobValidate, RejectsNullPointers) {
  SampleJob job = valid_job();
  job.skeleton = nullptr;
  expect_rejected(job, "null skeleton");
  job = valid_job();
  job.clip = nullptr;
  expect_rejected(job, "null clip");
}

TEST_F(SampleJobValidate, RejectsWrongSpanSizes) {
  SampleJob job = valid_job();
  job.cursor = std::span<uint32_t>(cursor_).first(1);
  expect_rejected(job, "cursor too small");
  std::vector<uint32_t> big_cursor(clip_.tracks.size() + 1, 7u);
  job.cursor = big_cursor;
  EXPECT_FALSE(job.Validate());
  job = valid_job();
  job.cursor = {};
  expect_rejected(job, "empty cursor");
  job = valid_job();
  job.output = std::span<Transform>(output_).first(1);
  expect_rejected(job, "output too small");
  job = valid_job();
  job.output = {};
  expect_rejected(job, "empty output");
  std::vector<Transform> big_output(skeleton_.node_count() + 1);
  job = valid_job();
  job.output = big_output;
  EXPECT_FALSE(job.Validate());
  EXPECT_FALSE(job.Run());
}

TEST_F(SampleJobValidate, RejectsSkeletonWithoutRestForEveryNode) {
  skeleton_.rest.pop_back();
  expect_rejected(valid_job(), "rest shorter than parents");
}

TEST_F(SampleJobValidate, RejectsTracksOutsideSkeletonOrClipData) {
  const Clip good = clip_;
  const std::vector<std::pair<const char*, std::function<void(Clip&)>>> breakages = {
      {"node out of range", [](Clip& c) { c.tracks[1].node = 2; }},
      {"zero keys", [](Clip& c) { c.tracks[0].key_count = 0; }},
      {"times past the end", [](Clip& c) { c.tracks[1].times_offset = 3; }},
      {"key count past the times", [](Clip& c) { c.tracks[0].key_count = 5; }},
      {"linear values past the end", [](Clip& c) { c.tracks[0].values_offset = 30; }},
      // The cubic track needs 2 keys * 3 elements * 4 floats = 24 floats from offset 6.
      {"cubic values past the end", [](Clip& c) { c.values.resize(6 + 23); }},
      // From offset 22 two plain rotation keys (8 floats) would fit, three elements per key not.
      {"cubic checked as three elements per key", [](Clip& c) { c.tracks[1].values_offset = 22; }},
      {"offset overflow", [](Clip& c) { c.tracks[0].values_offset = 0xFFFFFFFFu; }},
      {"bad target", [](Clip& c) { c.tracks[0].target = static_cast<TrackTarget>(3); }},
      {"bad interpolation",
       [](Clip& c) { c.tracks[0].interpolation = static_cast<Interpolation>(7); }},
  };
  for (const auto& [what, breakage] : breakages) {
    clip_ = good;
    breakage(clip_);
    expect_rejected(valid_job(), what);
  }
}

TEST_F(SampleJobValidate, AcceptsEmptySkeletonAndClip) {
  const Skeleton empty_skeleton;
  const Clip empty_clip;
  SampleJob job;
  job.skeleton = &empty_skeleton;
  job.clip = &empty_clip;
  EXPECT_TRUE(job.Validate());
  EXPECT_TRUE(job.Run());
}

}  // namespace
}  // namespace posecast
