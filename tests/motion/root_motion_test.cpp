// Root-motion extraction and root_motion_between: the pose keeps its root in place, an entity
// moved by the deltas draws the root where the authored clip has it, wraps are tail + head,
// one loop of deltas is the clip's displacement, in-place clips do not move.

#include <cmath>

#include "motion_test_support.h"
#include "posecast/det_math.h"

namespace posecast {
namespace {

using motion_test::authored_generated_rig;
using motion_test::load;
using motion_test::model_matrix;
using motion_test::Mover;
using motion_test::node_named;

glm::vec3 position(const glm::mat4& m) { return glm::vec3(m[3]); }

// The angle of the rotation about +Y in m's rotation (q = twist * swing).
float twist_about_y(const glm::mat4& m) {
  glm::quat q = glm::quat_cast(glm::mat3(m));
  if (q.w < 0.0f) q = -q;
  return 2.0f * det_atan2(q.y, q.w);
}

TEST(RootMotion, GeneratedWalkAndRunTravelAndTheRestStayInPlace) {
  const Model model = load("gen-rig:24:travel");
  const Rig& rig = model.rigs.front();
  ASSERT_EQ(rig.root_motion.size(), rig.clips.size());
  for (std::size_t c = 0; c < rig.clips.size(); ++c) {
    const bool gait = rig.clips[c].name == "walk" || rig.clips[c].name == "run";
    EXPECT_EQ(rig.root_motion[c].travels, gait) << rig.clips[c].name;
    EXPECT_EQ(rig.root_motion[c].duration_us, rig.clips[c].duration_us);
  }
  const RootMotionTrack& walk = rig.root_motion[static_cast<std::size_t>(model.find_clip("walk"))];
  const RootMotionTrack& run = rig.root_motion[static_cast<std::size_t>(model.find_clip("run"))];
  // Forwards (+Z), a plausible human pace.
  EXPECT_GT(walk.z.back(), 0.8f);
  EXPECT_GT(walk.ground_speed, 0.8f);
  EXPECT_LT(walk.ground_speed, 2.2f);
  EXPECT_GT(run.ground_speed, 1.5f * walk.ground_speed);
  EXPECT_NEAR(walk.x.back(), 0.0f, 0.01f);
}

TEST(RootMotion, ExtractedPoseKeepsTheRootInPlaceHorizontallyAndUnturned) {
  const Model model = load("gen-rig:24:travel");
  const Rig& rig = model.rigs.front();
  const int hips = node_named(rig.skeleton, "hips");
  for (const char* name : {"walk", "run"}) {
    const int clip = model.find_clip(name);
    const glm::mat4 start = model_matrix(rig, clip, 0, hips);
    float low_y = 1e9f, high_y = -1e9f;
    for (int64_t t = 0; t <= rig.clips[static_cast<std::size_t>(clip)].duration_us; t += 12345) {
      const glm::mat4 m = model_matrix(rig, clip, t, hips);
      EXPECT_NEAR(m[3].x, start[3].x, 1e-5f) << name << " t=" << t;
      EXPECT_NEAR(m[3].z, start[3].z, 1e-5f) << name << " t=" << t;
      low_y = std::min(low_y, m[3].y);
      high_y = std::max(high_y, m[3].y);
      // The hips keep their time-0 twist about +Y (swing-twist); the swing still moves.
      EXPECT_NEAR(twist_about_y(m), twist_about_y(start), 1e-4f) << name << " t=" << t;
    }
    EXPECT_GT(high_y - low_y, 0.02f) << name << ": the vertical bob stays in the pose";
  }
}

// An entity stepped by deltas through three loops draws every joint where the authored clip
// (with its travelling root) draws it, shifted by whole strides.
TEST(RootMotion, DeltasReproduceTheAuthoredRootPathAcrossWraps) {
  const Model extracted = load("gen-rig:24:travel");
  const Model authored = authored_generated_rig();
  const Rig& rig = extracted.rigs.front();
  const Rig& raw = authored.rigs.front();
  const int toe = node_named(rig.skeleton, "toe_l");
  const int hips = node_named(raw.skeleton, "hips");
  for (const char* name : {"walk", "run"}) {
    const int clip = extracted.find_clip(name);
    const RootMotionTrack& track = rig.root_motion[static_cast<std::size_t>(clip)];
    ASSERT_FALSE(raw.root_motion[static_cast<std::size_t>(clip)].travels);
    const int64_t duration = track.duration_us;
    const glm::vec3 stride = position(model_matrix(raw, clip, duration, hips)) - position(model_matrix(raw, clip, 0, hips));
    Mover mover;
    int64_t time = 0;
    const int64_t step = 16667;
    for (int64_t elapsed = step; elapsed <= 3 * duration; elapsed += step) {
      const int64_t next = elapsed % duration;
      mover.apply(root_motion_between(track, time, next, /*looping=*/true));
      time = next;
      const int64_t loops = elapsed / duration;
      const glm::vec3 want = position(model_matrix(raw, clip, time, toe)) + stride * static_cast<float>(loops);
      const glm::vec3 got = mover.place(position(model_matrix(rig, clip, time, toe)));
      ASSERT_NEAR(got.x, want.x, 2e-4f) << name << " at " << elapsed;
      ASSERT_NEAR(got.z, want.z, 2e-4f) << name << " at " << elapsed;
    }
  }
}

TEST(RootMotion, AWrapIsTheTailPlusTheHead) {
  const Model model = load("gen-rig:24:travel");
  const RootMotionTrack& walk = model.rigs.front().root_motion[static_cast<std::size_t>(model.find_clip("walk"))];
  const int64_t from = 812345, to = 187654;
  const RootMotionDelta whole = root_motion_between(walk, from, to, true);
  const RootMotionDelta tail = root_motion_between(walk, from, walk.duration_us, true);
  const RootMotionDelta head = root_motion_between(walk, 0, to, true);
  float hx, hz;
  rotate_by_yaw(tail.dyaw, head.dx, head.dz, hx, hz);
  EXPECT_EQ(whole.dx, tail.dx + hx);
  EXPECT_EQ(whole.dz, tail.dz + hz);
  EXPECT_EQ(whole.dyaw, tail.dyaw + head.dyaw);
  EXPECT_GT(whole.dz, 0.0f) << "never a jump back";
  // Without looping the same times play backwards.
  EXPECT_LT(root_motion_between(walk, from, to, false).dz, 0.0f);
}

TEST(RootMotion, OneLoopOfDeltasIsTheClipsDisplacementAndKeyTimesAreExact) {
  const Model model = load("gen-rig:24:travel");
  const Rig& rig = model.rigs.front();
  for (const char* name : {"walk", "run"}) {
    const RootMotionTrack& track = rig.root_motion[static_cast<std::size_t>(model.find_clip(name))];
    Mover mover;
    int64_t time = 0;
    for (int i = 1; i <= 37; ++i) {  // 37 uneven steps that end exactly on the loop's end
      const int64_t next = track.duration_us * i / 37;
      mover.apply(root_motion_between(track, time, next, true));
      time = next;
    }
    // The displacement of the model origin over one loop, in the frame at time 0.
    EXPECT_NEAR(mover.x, track.x.back(), 1e-5f) << name;
    EXPECT_NEAR(mover.z, track.z.back(), 1e-5f) << name;
    EXPECT_NEAR(mover.yaw, track.yaw.back(), 1e-6f) << name;
    // At a sample time the delta from 0 is the sample itself (in the frame at time 0).
    for (std::size_t k = 0; k < track.times_us.size(); ++k) {
      const RootMotionDelta d = root_motion_between(track, 0, track.times_us[k], false);
      EXPECT_EQ(d.dx, track.x[k]);
      EXPECT_EQ(d.dz, track.z[k]);
      EXPECT_EQ(d.dyaw, track.yaw[k]);
    }
  }
}

TEST(RootMotion, InPlaceClipsDoNotMoveAndKeepTheirKeys) {
  const Model extracted = load("gen-rig:24:travel");
  const Model authored = authored_generated_rig();
  for (const char* name : {"idle", "wave", "step_pose", "sway_cubic"}) {
    const std::size_t c = static_cast<std::size_t>(extracted.find_clip(name));
    const RootMotionTrack& track = extracted.rigs.front().root_motion[c];
    EXPECT_FALSE(track.travels) << name;
    const RootMotionDelta d = root_motion_between(track, 100000, 50000, true);
    EXPECT_EQ(d.dx, 0.0f);
    EXPECT_EQ(d.dz, 0.0f);
    EXPECT_EQ(d.dyaw, 0.0f);
    EXPECT_EQ(extracted.rigs.front().clips[c].values, authored.rigs.front().clips[c].values) << name;
  }
}

TEST(RootMotion, ExtractionIsTheSameOnEveryLoad) {
  const Model a = load("gen-rig:40:travel");
  const Model b = load("gen-rig:40:travel");
  for (std::size_t c = 0; c < a.rigs.front().clips.size(); ++c) {
    const RootMotionTrack& ta = a.rigs.front().root_motion[c];
    const RootMotionTrack& tb = b.rigs.front().root_motion[c];
    EXPECT_EQ(ta.times_us, tb.times_us);
    EXPECT_EQ(ta.x, tb.x);
    EXPECT_EQ(ta.z, tb.z);
    EXPECT_EQ(ta.yaw, tb.yaw);
    EXPECT_EQ(ta.ground_speed, tb.ground_speed);
  }
}

}  // namespace
}  // namespace posecast
