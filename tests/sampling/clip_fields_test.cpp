// Clip::field_keys and same_clip_fields: when a buffer another clip sampled into may take this
// clip without the rest-pose copy (SampleJob::output_holds_base), that sampling through such
// a buffer gives the bits of a fresh one, and that validate() refuses keys that do not match.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hand_rigs.h"
#include "posecast/sampling.h"

namespace posecast::test {
namespace {

// A clip with one LINEAR two-key track per (node, target) given, in that (sorted) order.
struct Field {
  uint16_t node;
  TrackTarget target;
};
Clip clip_of(std::initializer_list<Field> fields, float phase) {
  ClipBuilder b;
  for (const Field& f : fields) {
    if (f.target == TrackTarget::kRotation) {
      b.track(f.node, f.target, Interpolation::kLinear, {0.0f, 1.0f},
              concat({axis_angle_xyzw(1, 0, 0, 10.0 + double{phase}), axis_angle_xyzw(0, 1, 0, 80.0 + double{phase})}));
    } else {
      b.track(f.node, f.target, Interpolation::kLinear, {0.0f, 1.0f},
              {phase, 2.0f, 3.0f, 4.0f + phase, 5.0f, 6.0f});
    }
  }
  Clip clip = b.build();
  clip.derive_field_keys();
  return clip;
}

constexpr TrackTarget kT = TrackTarget::kTranslation;
constexpr TrackTarget kR = TrackTarget::kRotation;
constexpr TrackTarget kS = TrackTarget::kScale;

TEST(ClipFields, SameFieldsMeansEqualDerivedKeys) {
  const Clip a = clip_of({{0, kT}, {1, kR}, {3, kR}}, 0.0f);
  const Clip same = clip_of({{0, kT}, {1, kR}, {3, kR}}, 5.0f);
  const Clip more = clip_of({{0, kT}, {0, kR}, {1, kR}, {2, kS}, {3, kR}}, 1.0f);
  const Clip other_target = clip_of({{0, kT}, {1, kS}, {3, kR}}, 2.0f);
  const Clip fewer = clip_of({{0, kT}, {1, kR}}, 3.0f);
  EXPECT_TRUE(same_clip_fields(a, a));
  EXPECT_TRUE(same_clip_fields(same, a));
  EXPECT_TRUE(same_clip_fields(a, same));
  EXPECT_FALSE(same_clip_fields(more, a));  // a superset would do too; equality is what is used
  EXPECT_FALSE(same_clip_fields(a, more));
  EXPECT_FALSE(same_clip_fields(other_target, a));  // rotation of node 1 not written
  EXPECT_FALSE(same_clip_fields(fewer, a));
  EXPECT_FALSE(same_clip_fields(a, fewer));
  Clip underived = same;
  underived.field_keys.clear();
  EXPECT_FALSE(same_clip_fields(underived, a));
  EXPECT_FALSE(same_clip_fields(a, underived));
  EXPECT_FALSE(same_clip_fields(underived, underived));
}

TEST(ClipFields, ValidateRefusesKeysThatDoNotMatchTheTracks) {
  const Skeleton s = chain_skeleton(5);
  Clip clip = clip_of({{0, kT}, {1, kR}, {3, kR}}, 0.0f);
  EXPECT_TRUE(clip.validate(s).ok());
  clip.field_keys[1] ^= 1u;  // rotation -> scale of node 1
  const Status status = clip.validate(s);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("field_keys"), std::string::npos) << status.error().message;
  clip.field_keys.pop_back();
  EXPECT_FALSE(clip.validate(s).ok());
  clip.field_keys.clear();  // not derived: valid
  EXPECT_TRUE(clip.validate(s).ok());
}

// Sampling `next` into the buffer `previous` left, skipping the rest-pose copy.
std::vector<Transform> sample_after(const Skeleton& s, const Clip& previous, const Clip& next,
                                    int64_t time_us) {
  std::vector<Transform> buffer = sample(s, previous, 250000);
  std::vector<uint32_t> cursor(next.tracks.size(), 0u);
  EXPECT_TRUE(sample_into(s, next, time_us, cursor, buffer, /*holds_base=*/true));
  return buffer;
}

bool same_bits(const std::vector<Transform>& a, const std::vector<Transform>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Transform)) == 0;
}

TEST(ClipFields, ABufferOfAClipWithTheSameFieldsSamplesAsAFreshOne) {
  const Skeleton s = chain_skeleton(5);
  const Clip a = clip_of({{0, kT}, {1, kR}, {3, kR}}, 0.0f);
  const Clip same = clip_of({{0, kT}, {1, kR}, {3, kR}}, 7.0f);
  const Clip other_target = clip_of({{0, kT}, {1, kS}, {3, kR}}, 2.0f);
  for (int64_t t : {0, 300000, 999999}) {
    ASSERT_TRUE(same_clip_fields(same, a));
    EXPECT_TRUE(same_bits(sample_after(s, a, same, t), sample(s, same, t))) << t;
    // Where the fields differ the shortcut is wrong: node 1 keeps a's rotation, not the rest one.
    ASSERT_FALSE(same_clip_fields(other_target, a));
    EXPECT_FALSE(same_bits(sample_after(s, a, other_target, t), sample(s, other_target, t))) << t;
  }
}

}  // namespace
}  // namespace posecast::test
