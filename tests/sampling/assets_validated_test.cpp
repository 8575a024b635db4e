// The jobs' assets_validated flag (set by the World, whose models are validated once when
// added): it skips only the per-track/node/joint loops of Validate(), never the pointer and
// buffer-size checks, and never changes a result bit.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/rig/model_source.h"
#include "posecast/sampling.h"

namespace posecast {
namespace {

struct Evaluated {
  std::vector<Transform> locals;
  std::vector<glm::mat4> models;
  std::vector<glm::mat4> palette;
};

Evaluated evaluate(const Rig& rig, const Clip& clip, int64_t time_us, bool assets_validated) {
  const Skeleton& skeleton = rig.skeleton;
  Evaluated out{std::vector<Transform>(skeleton.node_count()),
                std::vector<glm::mat4>(skeleton.node_count()),
                std::vector<glm::mat4>(skeleton.joint_count())};
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  SampleJob sample;
  sample.skeleton = &skeleton;
  sample.clip = &clip;
  sample.time_us = time_us;
  sample.cursor = cursor;
  sample.output = out.locals;
  sample.assets_validated = assets_validated;
  LocalToModelJob to_model;
  to_model.skeleton = &skeleton;
  to_model.locals = out.locals;
  to_model.models = out.models;
  to_model.assets_validated = assets_validated;
  PaletteJob palette;
  palette.skeleton = &skeleton;
  palette.models = out.models;
  palette.palette = out.palette;
  palette.assets_validated = assets_validated;
  EXPECT_TRUE(sample.Run());
  EXPECT_TRUE(to_model.Run());
  EXPECT_TRUE(palette.Run());
  return out;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

class AssetsValidated : public testing::Test {
 protected:
  void SetUp() override {
    Result<Model> loaded = rig::load_model_source("gen-rig:24");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    model_ = std::move(loaded).value();
    ASSERT_FALSE(model_.rigs.empty());
    ASSERT_FALSE(model_.rigs[0].clips.empty());
    ASSERT_TRUE(model_.rigs[0].skeleton.validate().ok());
    ASSERT_TRUE(model_.rigs[0].clips[0].validate(model_.rigs[0].skeleton).ok());
  }
  Model model_;
};

TEST_F(AssetsValidated, GivesTheSameBitsAsTheFullyCheckedJobs) {
  const Rig& rig = model_.rigs[0];
  const Clip& clip = rig.clips[0];
  for (int64_t t : {int64_t{0}, clip.duration_us / 3, clip.duration_us / 2, clip.duration_us}) {
    const Evaluated checked = evaluate(rig, clip, t, false);
    const Evaluated trusted = evaluate(rig, clip, t, true);
    EXPECT_TRUE(same_bits(checked.locals, trusted.locals)) << "t = " << t;
    EXPECT_TRUE(same_bits(checked.models, trusted.models)) << "t = " << t;
    EXPECT_TRUE(same_bits(checked.palette, trusted.palette)) << "t = " << t;
  }
}

TEST_F(AssetsValidated, StillRejectsMissingPointersAndWrongBufferSizes) {
  const Rig& rig = model_.rigs[0];
  const Skeleton& skeleton = rig.skeleton;
  const Clip& clip = rig.clips[0];
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  std::vector<uint32_t> short_cursor(clip.tracks.size() - 1, 0u);
  std::vector<Transform> locals(skeleton.node_count());
  std::vector<Transform> short_locals(skeleton.node_count() - 1);
  std::vector<glm::mat4> models(skeleton.node_count());
  std::vector<glm::mat4> palette(skeleton.joint_count());
  std::vector<glm::mat4> short_palette(skeleton.joint_count() - 1);

  SampleJob sample{&skeleton, &clip, 0, cursor, locals, true};
  EXPECT_TRUE(sample.Validate());
  sample.cursor = short_cursor;
  EXPECT_FALSE(sample.Validate());
  sample.cursor = cursor;
  sample.output = short_locals;
  EXPECT_FALSE(sample.Validate());
  sample.output = locals;
  sample.clip = nullptr;
  EXPECT_FALSE(sample.Validate());

  LocalToModelJob to_model{&skeleton, locals, models, true};
  EXPECT_TRUE(to_model.Validate());
  to_model.locals = short_locals;
  EXPECT_FALSE(to_model.Validate());
  to_model.locals = locals;
  to_model.skeleton = nullptr;
  EXPECT_FALSE(to_model.Validate());

  PaletteJob palette_job{&skeleton, models, palette, true};
  EXPECT_TRUE(palette_job.Validate());
  palette_job.palette = short_palette;
  EXPECT_FALSE(palette_job.Validate());
  palette_job.palette = palette;
  palette_job.skeleton = nullptr;
  EXPECT_FALSE(palette_job.Validate());
}

}  // namespace
}  // namespace posecast
