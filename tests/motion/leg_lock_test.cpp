// Leg locking (lock_planted_legs, docs/movement.md "Foot locking"): on Fox's foot-locked Walk
// and Run, each planted hind foot holds its contact point while the character advances at the
// ground speed, its height and path in the air stay the clip's, and only the legs' rotation
// tracks change. Prints the drift of the planted feet with the hips alone locked and with the
// legs too:
//   build/tests/motion/motion_tests --gtest_filter='LegLock.*'

#include <cmath>
#include <cstdio>

#include "motion_test_support.h"
#include "posecast/hash.h"
#include "posecast/root_motion_extraction.h"

namespace posecast {
namespace {

using motion_test::asset_path;
using motion_test::load;

// Model-space positions of one foot at the loop's kFootSamplesPerLoop + 1 sample times.
std::vector<glm::vec3> foot_path(const Rig& rig, int clip, int foot) {
  std::vector<glm::vec3> path;
  const int64_t duration = rig.clips[static_cast<std::size_t>(clip)].duration_us;
  for (int i = 0; i <= kFootSamplesPerLoop; ++i)
    path.emplace_back(motion_test::model_matrix(rig, clip, duration * i / kFootSamplesPerLoop, foot)[3]);
  return path;
}

struct PathComparison {
  double planted_drift = 0.0;   // largest horizontal drift of a planted step, over the step
  double height_change = 0.0;   // largest |height difference| from `reference`, over the step
  double step_change = 0.0;     // largest change of a step's motion from `reference`'s, over the step
};

// `path` against the hips-only `reference` path; planted by `reference`'s heights (the band
// of kFootContactBand); `step`: the character's advance per sample (+Z).
PathComparison compare(const std::vector<glm::vec3>& path, const std::vector<glm::vec3>& reference, double step) {
  float low = reference[0].y, high = reference[0].y;
  for (const glm::vec3& p : reference) low = std::fmin(low, p.y), high = std::fmax(high, p.y);
  const float contact = low + kFootContactBand * (high - low);
  PathComparison out;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    out.height_change = std::fmax(out.height_change, std::fabs(static_cast<double>(path[i].y - reference[i].y)) / step);
    const glm::dvec3 moved = glm::dvec3(path[i + 1]) - glm::dvec3(path[i]);
    const glm::dvec3 moved_before = glm::dvec3(reference[i + 1]) - glm::dvec3(reference[i]);
    out.step_change = std::fmax(out.step_change, glm::length(moved - moved_before) / step);
    if (reference[i].y <= contact && reference[i + 1].y <= contact)
      out.planted_drift = std::fmax(out.planted_drift, std::hypot(moved.x, moved.z + step) / step);
  }
  return out;
}

TEST(LegLock, FoxPlantedFeetHoldWhileTheCharacterAdvances) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model locked = motion_test::load_foot_locked_fox();
  const Rig& legs = locked.rigs.front();
  const Model authored = load(asset_path("Fox.glb"));
  for (const char* name : {"Walk", "Run"}) {
    const int clip = locked.find_clip(name);
    const std::size_t c = static_cast<std::size_t>(clip);
    // The same clip with the hips alone locked: what the legs start from.
    Rig hips = authored.rigs.front();
    const FootStride stride = foot_stride(hips, c);
    ASSERT_TRUE(lock_planted_feet(hips, c, stride, 0.0f)) << name;
    hips.clips[c].derive_slerp_terms();
    hips.clips[c].derive_rotation_blocks();
    hips.clips[c].derive_field_keys();
    const float ground = legs.root_motion[c].ground_speed;
    const double step = static_cast<double>(ground) * static_cast<double>(legs.clips[c].duration_us) / 1e6 /
                        kFootSamplesPerLoop;
    for (uint16_t foot : legs.motion_config.foot_nodes) {
      const PathComparison before = compare(foot_path(hips, clip, foot), foot_path(hips, clip, foot), step);
      const PathComparison after = compare(foot_path(legs, clip, foot), foot_path(hips, clip, foot), step);
      std::printf("Fox %s %s: planted drift per step %.4f of the step with the hips locked, %.4f with the legs; "
                  "height change %.4f, largest change of a step %.3f (of the step)\n",
                  name, legs.skeleton.names[foot].c_str(), before.planted_drift, after.planted_drift,
                  after.height_change, after.step_change);
      EXPECT_LT(after.planted_drift, 0.02) << name << " foot " << foot;
      EXPECT_LT(after.planted_drift, before.planted_drift) << name << " foot " << foot;
      EXPECT_LT(after.height_change, 0.01) << name << " foot " << foot;  // the bend moves it sideways only
      EXPECT_LT(after.step_change, 0.6) << name << " foot " << foot;     // no snap: a release fades
    }
    // Only the three bending joints of each leg are rewritten.
    for (std::size_t t = 0; t < legs.clips[c].tracks.size(); ++t) {
      const Track& track = legs.clips[c].tracks[t];
      const bool leg_joint = track.target == TrackTarget::kRotation && track.key_count == kFootSamplesPerLoop + 1 &&
                             hips.clips[c].tracks[t].key_count != track.key_count;
      if (leg_joint) continue;
      const Track& same = hips.clips[c].tracks[t];
      ASSERT_EQ(track.key_count, same.key_count) << name << " track " << t;
      const std::size_t width = track.target == TrackTarget::kRotation ? 4 : 3;
      for (std::size_t v = 0; v < width * track.key_count; ++v)
        ASSERT_EQ(legs.clips[c].values[track.values_offset + v], hips.clips[c].values[same.values_offset + v])
            << name << " track " << t;
    }
  }
}

// The locked clips' keys are a deterministic function of the file: their bytes are pinned, so a
// build whose load-time math rounds differently (compiler, flags, machine) fails here. A change
// meant to alter them updates the pin, saying so in its commit.
TEST(LegLock, FoxLockedKeysKeepTheirBits) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model locked = motion_test::load_foot_locked_fox();
  std::vector<uint8_t> bytes;
  for (const Clip& clip : locked.rigs.front().clips) {
    const auto* times = reinterpret_cast<const uint8_t*>(clip.times.data());
    const auto* values = reinterpret_cast<const uint8_t*>(clip.values.data());
    bytes.insert(bytes.end(), times, times + clip.times.size() * sizeof(float));
    bytes.insert(bytes.end(), values, values + clip.values.size() * sizeof(float));
  }
  EXPECT_EQ(hash_hex(hash_bytes(bytes)), "9788789833daeec7");
}

// Legs are left alone without feet, speed or clip, and the clips of other roles untouched.
TEST(LegLock, LeavesWhatItCannotLock) {
  SKIP_WITHOUT_MOTION_ASSET("Fox.glb");
  const Model authored = load(asset_path("Fox.glb"));
  Rig rig = authored.rigs.front();
  const std::size_t walk = static_cast<std::size_t>(authored.find_clip("Walk"));
  EXPECT_FALSE(lock_planted_legs(rig, walk, 0.0f));
  EXPECT_FALSE(lock_planted_legs(rig, walk, std::nanf("")));
  EXPECT_FALSE(lock_planted_legs(rig, rig.clips.size(), 100.0f));
  Rig no_feet = rig;
  no_feet.motion_config.foot_nodes.clear();
  EXPECT_FALSE(lock_planted_legs(no_feet, walk, 100.0f));
  EXPECT_EQ(rig.clips[walk].values, authored.rigs.front().clips[walk].values);
  EXPECT_TRUE(lock_planted_legs(rig, walk, 100.0f));
  EXPECT_NE(rig.clips[walk].values, authored.rigs.front().clips[walk].values);
  rig.clips[walk].derive_slerp_terms();
  rig.clips[walk].derive_rotation_blocks();
  rig.clips[walk].derive_field_keys();
  EXPECT_TRUE(rig.clips[walk].validate(rig.skeleton));
}

}  // namespace
}  // namespace posecast
