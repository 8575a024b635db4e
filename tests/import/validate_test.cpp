// Skeleton::validate and Clip::validate refuse each broken invariant (they guard every Model
// the importer returns, and the rig generator's too).

#include <cstring>

#include "import_test_util.h"
#include "posecast/det_math.h"

namespace posecast::testing {
namespace {

using ::testing::HasSubstr;

Model imported_triangle() {
  SkinnedTriangle t(true);
  t.b.add_animation({{0, "translation", {0.0f, 1.0f}, {0, 0, 0, 0, 1, 0}},
                     {1, "rotation", {0.0f, 0.5f}, {0, 0, 0, 1, 0, 0.6f, 0, 0.8f}}},
                    "clip");
  Result<Model> r = import_doc(t.b);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return std::move(r).value();
}

std::string skeleton_error(const Skeleton& s) {
  Status st = s.validate();
  EXPECT_FALSE(st.ok());
  return st.ok() ? std::string() : st.error().message;
}

std::string clip_error(const Clip& c, const Skeleton& s) {
  Status st = c.validate(s);
  EXPECT_FALSE(st.ok());
  return st.ok() ? std::string() : st.error().message;
}

TEST(SkeletonValidate, AcceptsTheImportedSkeleton) {
  EXPECT_TRUE(imported_triangle().rigs[0].skeleton.validate().ok());
}

TEST(SkeletonValidate, RefusesAParentAfterItsChild) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.parents[0] = 2;
  EXPECT_THAT(skeleton_error(s), HasSubstr("parents[0] = 2 does not come before the node"));
}

TEST(SkeletonValidate, RefusesArraysOfDifferentSizes) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.names.pop_back();
  EXPECT_THAT(skeleton_error(s), HasSubstr("per-node arrays differ in size"));
}

TEST(SkeletonValidate, RefusesANonFiniteRest) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.rest[1].translation.x = INFINITY;
  EXPECT_THAT(skeleton_error(s), HasSubstr("rest[1] is not finite"));
}

TEST(SkeletonValidate, RefusesAJointNodeOutOfRange) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.joint_nodes[1] = 40;
  EXPECT_THAT(skeleton_error(s), HasSubstr("joint_nodes[1] = 40 out of range"));
}

TEST(SkeletonValidate, RefusesAnInverseBindWhoseLastRowIsNotExact) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.inverse_bind[0][3].w = 1.00001f;
  EXPECT_THAT(skeleton_error(s), HasSubstr("inverse_bind[0] is not affine"));
}

TEST(SkeletonValidate, RefusesAMissingInverseBind) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.inverse_bind.pop_back();
  EXPECT_THAT(skeleton_error(s), HasSubstr("1 inverse bind matrices for 2 joints"));
}

TEST(SkeletonValidate, RefusesAMeshNodeOutOfRange) {
  Skeleton s = imported_triangle().rigs[0].skeleton;
  s.mesh_node = 3;
  EXPECT_THAT(skeleton_error(s), HasSubstr("mesh_node 3 out of range"));
}

TEST(ClipValidate, AcceptsTheImportedClip) {
  const Model m = imported_triangle();
  EXPECT_TRUE(m.rigs[0].clips[0].validate(m.rigs[0].skeleton).ok());
}

TEST(ClipValidate, RefusesTracksOutOfOrder) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  std::swap(c.tracks[0], c.tracks[1]);
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("tracks[1] is not after tracks[0]"));
}

TEST(ClipValidate, RefusesATrackNodeOutOfRange) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.tracks[0].node = 9;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("tracks[0].node 9 out of range"));
}

TEST(ClipValidate, RefusesKeysRunningPastTheArrays) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.tracks[1].key_count = 3;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("tracks[1] times run past Clip::times"));
}

TEST(ClipValidate, RefusesDecreasingTimes) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.times[1] = 0.0f;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("not strictly increasing at key 1"));
}

TEST(ClipValidate, RefusesAKeyAfterTheDuration) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.duration_seconds = 0.75f;
  c.duration_us = 750000;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("is after duration_seconds"));
}

TEST(ClipValidate, RefusesAMismatchedDurationInMicroseconds) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.duration_us += 1;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("duration_us does not match"));
}

TEST(ClipValidate, RefusesANonUnitLinearRotation) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  const Track& rot = c.tracks[0].target == TrackTarget::kRotation ? c.tracks[0] : c.tracks[1];
  c.values[rot.values_offset + 3] = 2.0f;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("rotation key 0 is not unit length"));
}

TEST(ClipValidate, RefusesANanValue) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.values[0] = NAN;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("value 0 is not finite"));
}

TEST(ClipValidate, TheImporterDerivesTheSlerpTermsOfEachLinearRotationKeyPair) {
  const Model m = imported_triangle();
  const Clip& c = m.rigs[0].clips[0];
  ASSERT_EQ(c.slerp_terms.size(), kSlerpTermsPerValue * c.values.size());
  const Track& rot = c.tracks[0].target == TrackTarget::kRotation ? c.tracks[0] : c.tracks[1];
  const float* k = &c.values[rot.values_offset];
  const KeySlerpTerms expected =
      det_key_slerp_terms(glm::quat(k[3], k[0], k[1], k[2]), glm::quat(k[7], k[4], k[5], k[6]));
  // Identity to (0, 0.6, 0, 0.8), 73.7 degrees about y: theta = acos(0.8) = 0.6435 rad (half
  // the rotation angle), c = (0, 1, 0, 0).
  EXPECT_NEAR(expected.theta, 0.6435011f, 1e-6f);
  EXPECT_NEAR(expected.c[1], 1.0f, 1e-6f);
  const float* slots = &c.slerp_terms[kSlerpTermsPerValue * rot.values_offset];
  EXPECT_EQ(std::memcmp(slots, expected.c, sizeof expected.c), 0);
  EXPECT_EQ(std::memcmp(slots + 4, &expected.theta, sizeof expected.theta), 0);
  EXPECT_EQ(slots[5], 0.0f);
}

TEST(ClipValidate, RefusesSlerpTermsThatNoLongerMatchTheKeys) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  const Track& rot = c.tracks[0].target == TrackTarget::kRotation ? c.tracks[0] : c.tracks[1];
  // A new second key (still unit length) without re-deriving: the sampler would slerp with
  // the old key pair's angle.
  c.values[rot.values_offset + 5] = 0.8f;
  c.values[rot.values_offset + 7] = 0.6f;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton),
              HasSubstr("slerp_terms of key pair 0 do not match its keys"));
  c.derive_slerp_terms();
  // The rotation blocks hold the old keys too.
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("rotation_blocks do not match"));
  c.derive_rotation_blocks();
  EXPECT_TRUE(c.validate(m.rigs[0].skeleton).ok());
}

TEST(ClipValidate, RefusesRotationBlocksThatDoNotMatchTheTracks) {
  const Model m = imported_triangle();
  const Clip& imported = m.rigs[0].clips[0];
  ASSERT_EQ(imported.rotation_blocks.size(), 1u);  // its one LINEAR rotation track
  Clip c = imported;
  c.rotation_lanes[24] = 0.5f;  // key 0, lane 0, w
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("rotation_blocks do not match"));
  c = imported;
  c.rotation_blocks[0].nodes[0] ^= 1u;
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("rotation_blocks do not match"));
  c = imported;
  c.loose_tracks.clear();
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("rotation_blocks do not match"));
  c.rotation_blocks.clear();
  c.rotation_lanes.clear();  // none derived: valid, the sampler reads every track's values
  EXPECT_TRUE(c.validate(m.rigs[0].skeleton).ok());
}

TEST(ClipValidate, RefusesSlerpTermsOfTheWrongLength) {
  const Model m = imported_triangle();
  Clip c = m.rigs[0].clips[0];
  c.slerp_terms.pop_back();
  EXPECT_THAT(clip_error(c, m.rigs[0].skeleton), HasSubstr("slerp_terms has"));
  c.slerp_terms.clear();  // not derived: valid, the sampler computes the terms itself
  EXPECT_TRUE(c.validate(m.rigs[0].skeleton).ok());
}

}  // namespace
}  // namespace posecast::testing
