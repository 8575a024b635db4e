// LocalPlaybackSource: the viewer's --model pose source (no GL).

#include <gtest/gtest.h>

#include "local_playback_source.h"
#include "posecast/hash.h"
#include "posecast/rig/model_source.h"

namespace posecast::viewer {
namespace {

std::shared_ptr<const Model> generated_rig() {
  Result<Model> model = rig::load_model_source("gen-rig:24");
  EXPECT_TRUE(model.ok()) << model.error().message;
  return std::make_shared<const Model>(std::move(model.value()));
}

TEST(LocalPlayback, OneEntityPerCountWithTheRigsPalette) {
  auto model = generated_rig();
  const int walk = model->find_clip("walk");
  Result<std::unique_ptr<LocalPlaybackSource>> source = LocalPlaybackSource::create(model, walk, 7);
  ASSERT_TRUE(source.ok()) << source.error().message;
  ASSERT_EQ(source.value()->entities().size(), 7u);
  for (const render::RenderEntity& e : source.value()->entities()) {
    EXPECT_EQ(e.model, 0u);
    EXPECT_EQ(e.palette.size(), 24u);
  }
  EXPECT_EQ(source.value()->describe(), "gen-rig:24, clip 'walk', 7 entities x 24 joints");
}

TEST(LocalPlayback, EntitiesHaveDistinctPhasesAndPlaces) {
  auto model = generated_rig();
  Result<std::unique_ptr<LocalPlaybackSource>> source =
      LocalPlaybackSource::create(model, model->find_clip("walk"), 4);
  ASSERT_TRUE(source.ok());
  const auto entities = source.value()->entities();
  for (std::size_t a = 0; a < entities.size(); ++a) {
    for (std::size_t b = a + 1; b < entities.size(); ++b) {
      EXPECT_NE(hash_palette(entities[a].palette), hash_palette(entities[b].palette)) << a << b;
      EXPECT_NE(entities[a].world[3], entities[b].world[3]) << a << " " << b;
    }
  }
  EXPECT_EQ(LocalPlaybackSource::phase_fraction_q16(0), 0u);
}

TEST(LocalPlayback, TimeLoopsOverTheClipDuration) {
  auto model = generated_rig();
  const int walk = model->find_clip("walk");
  const int64_t duration = model->rigs[0].clips[static_cast<std::size_t>(walk)].duration_us;
  ASSERT_GT(duration, 0);
  Result<std::unique_ptr<LocalPlaybackSource>> source = LocalPlaybackSource::create(model, walk, 2);
  ASSERT_TRUE(source.ok());
  // update() moves the pose: half a cycle on, the palette is not the one at time 0 (else the
  // loop check below would hold for a source that never changes).
  ASSERT_TRUE(source.value()->update(0).ok());
  const uint64_t at_zero = hash_palette(source.value()->entities()[1].palette);
  ASSERT_TRUE(source.value()->update(duration / 2).ok());
  EXPECT_NE(hash_palette(source.value()->entities()[1].palette), at_zero);
  ASSERT_TRUE(source.value()->update(123456).ok());
  const uint64_t first = hash_palette(source.value()->entities()[1].palette);
  ASSERT_TRUE(source.value()->update(123456 + 3 * duration).ok());
  EXPECT_EQ(hash_palette(source.value()->entities()[1].palette), first);
}

TEST(LocalPlayback, RestPoseAndBadClip) {
  auto model = generated_rig();
  EXPECT_TRUE(LocalPlaybackSource::create(model, kRestPose, 1).ok());
  Result<std::unique_ptr<LocalPlaybackSource>> bad = LocalPlaybackSource::create(model, 99, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "gen-rig:24: no clip 99");
  EXPECT_FALSE(LocalPlaybackSource::create(model, kRestPose, 0).ok());
}

}  // namespace
}  // namespace posecast::viewer
