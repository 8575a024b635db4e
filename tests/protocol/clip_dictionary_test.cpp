// Clip-dictionary prediction: poses that are blends of shared clips travel as a recipe and a
// residual of zeros, decode bit-identically, and fall back cleanly when the recipe is wrong.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "posecast/blending.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/sampling.h"
#include "protocol_rigs.h"

namespace posecast::protocol {
namespace {

struct Rig {
  Skeleton skeleton = test::branching_skeleton();
  std::vector<Clip> clips;
  PoseFormat format;
  Rig() {
    clips.push_back(test::swing_clip(skeleton, "walk", 2.0, 0.8, 1.0));
    clips.push_back(test::swing_clip(skeleton, "run", 1.0, 1.4, 2.5));
    format = build_pose_format(skeleton, clips).value();
  }
  // The server's evaluation of a recipe: sample each input, BlendJob.
  std::vector<Transform> evaluate(const PoseRecipe& r) const {
    std::vector<std::vector<Transform>> samples(r.count, std::vector<Transform>(skeleton.node_count()));
    BlendInput inputs[kMaxRecipeInputs];
    for (uint8_t i = 0; i < r.count; ++i) {
      std::vector<uint32_t> cursor(clips[r.inputs[i].clip].tracks.size(), 0u);
      SampleJob job{&skeleton, &clips[r.inputs[i].clip], r.inputs[i].time_us, cursor, samples[i]};
      EXPECT_TRUE(job.Run());
      inputs[i] = {samples[i], r.inputs[i].weight};
    }
    std::vector<Transform> out(skeleton.node_count());
    BlendJob blend{std::span<const BlendInput>(inputs, r.count), skeleton.rest, out};
    EXPECT_TRUE(blend.Run());
    return out;
  }
};

PoseRecipe crossfade(int64_t t, float w) {
  PoseRecipe r;
  r.count = 2;
  r.inputs[0] = {0, t % 2000000, 1.0f - w};
  r.inputs[1] = {1, t % 1000000, w};
  return r;
}

PoseReference history(const std::vector<QuantizedPose>& h, uint32_t age) {
  PoseReference r;
  const std::size_t n = h.size();
  if (n >= 1) r.baseline = &h[n - 1], r.baseline_age = age;
  if (n >= 2) r.prior = &h[n - 2], r.prior_age = age;
  if (n >= 3) r.older = &h[n - 3], r.older_age = age;
  return r;
}

// The client reuses the prediction's dequantised rotations for nodes whose decoded codes equal
// the prediction's (dequantize_pose_reusing): the result must be dequantize_pose's, bit for
// bit, whether a node's codes match or not.
TEST(ClipDictionary, ReusingThePredictionsRotationsDequantisesBitIdentically) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  const std::size_t nodes = rig.format.node_count();
  int differing_nodes = 0;
  for (int64_t t = 0; t < 2'000'000; t += 97'000) {
    QuantizedPose predicted;
    ASSERT_TRUE(dictionary.predict(crossfade(t, 0.3f), nullptr, predicted));
    // The pose to dequantise: the prediction with every third node's rotation moved a code.
    QuantizedPose pose = predicted;
    for (std::size_t n = 0; n < nodes; n += 3) {
      int32_t& code = pose.values[n * kValuesPerNode + kRotationCode];
      code += code > 0 ? -1 : 1;
      ++differing_nodes;
    }
    for (const QuantizedPose* p : {&predicted, &pose}) {
      std::vector<Transform> expected(nodes), reused(nodes);
      dequantize_pose(rig.format, *p, expected);
      dequantize_pose_reusing(rig.format, *p, predicted, dictionary.predicted_rotations(), reused);
      EXPECT_EQ(std::memcmp(expected.data(), reused.data(), nodes * sizeof(Transform)), 0)
          << "t = " << t;
    }
  }
  EXPECT_GT(differing_nodes, 0);
}

TEST(ClipDictionary, CrossfadesTravelAsRecipesAndDecodeBitIdentically) {
  Rig rig;
  ClipDictionary server_dictionary(rig.skeleton, rig.clips, rig.format);
  ClipDictionary client_dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder with_dictionary(rig.format, &server_dictionary);
  PoseEncoder without(rig.format);
  std::vector<QuantizedPose> sent, received;
  std::size_t dictionary_bytes = 0, plain_bytes = 0;
  for (int u = 0; u < 60; ++u) {
    const int64_t t = u * 50000;  // 20 Hz on a 60 Hz tick: 3 ticks
    const PoseRecipe recipe = crossfade(t, static_cast<float>(u % 20) / 19.0f);
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(rig.evaluate(recipe), sent.empty() ? nullptr : &sent.back(), q));
    q.recipe = recipe;
    std::vector<uint8_t> bytes, plain;
    ASSERT_TRUE(with_dictionary.encode(q, history(sent, 3), bytes));
    QuantizedPose bare = q;
    bare.recipe = PoseRecipe{};
    ASSERT_TRUE(without.encode(bare, history(sent, 3), plain));
    QuantizedPose got;
    const Status st = decode_pose(rig.format, bytes, history(received, 3), got,
                                  PoseCoding::kRangeCoded, &client_dictionary);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(got, q) << "update " << u;
    if (u >= 3) {
      dictionary_bytes += bytes.size();
      plain_bytes += plain.size();
    }
    sent.push_back(q);
    received.push_back(got);
  }
  const double joints = static_cast<double>(rig.format.animated_node_count) * 57.0;
  EXPECT_LT(static_cast<double>(dictionary_bytes) / joints, 0.5);
  EXPECT_LT(dictionary_bytes * 3, plain_bytes);
}

// The server's shortcut (PoseEncodeOptions::recipe_reproduces_pose): when the baseline's
// rotation axes equal the pose's, the pose's own codes are the dictionary's prediction, so the
// bytes equal the full path's (which evaluates the clips) and decode to the pose; with other
// axes the encoder evaluates as usual. Each pose is quantised against the previous one, as the
// server does; some references get an axis changed, so both cases occur.
TEST(ClipDictionary, ReproducedRecipesSkipTheEvaluationWithTheSameBytes) {
  Rig rig;
  ClipDictionary full_dictionary(rig.skeleton, rig.clips, rig.format);
  ClipDictionary shortcut_dictionary(rig.skeleton, rig.clips, rig.format);
  ClipDictionary client_dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder full(rig.format, &full_dictionary);
  PoseEncoder shortcut(rig.format, &shortcut_dictionary);
  PoseEncodeOptions vouched;
  vouched.recipe_reproduces_pose = true;
  std::vector<QuantizedPose> sent;
  int same_axes = 0, other_axes = 0;
  for (int u = 0; u < 120; ++u) {
    const int64_t t = u * 50000;
    const PoseRecipe recipe = crossfade(t, static_cast<float>(u % 20) / 19.0f);
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(rig.evaluate(recipe), sent.empty() ? nullptr : &sent.back(), q));
    q.recipe = recipe;
    if (!sent.empty()) {
      const QuantizedPose& baseline = sent.back();
      bool equal_axes = true;
      for (std::size_t n = 0; n < rig.format.node_count(); ++n) {
        const std::size_t at = n * kValuesPerNode + kRotationAxis;
        equal_axes &= baseline.values[at] == q.values[at];
      }
      ++(equal_axes ? same_axes : other_axes);
    }
    std::vector<uint8_t> expected, got;
    ASSERT_TRUE(full.encode(q, history(sent, 3), expected));
    ASSERT_TRUE(shortcut.encode(q, history(sent, 3), got, vouched));
    ASSERT_EQ(got, expected) << "update " << u;
    QuantizedPose decoded;
    const Status st = decode_pose(rig.format, got, history(sent, 3), decoded, PoseCoding::kRangeCoded,
                                  &client_dictionary);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(decoded, q) << "update " << u;
    // Every third pose goes into the history with one rotation axis changed (a reference is
    // any pose of the format): the next update's baseline axes then differ from its own.
    QuantizedPose stored = q;
    if (u % 3 == 2) {
      for (std::size_t n = 0; n < rig.format.node_count(); ++n) {
        if (!(rig.format.channels[n] & kChannelRotation)) continue;
        int32_t& axis = stored.values[n * kValuesPerNode + kRotationAxis];
        axis = (axis + 1) % 4;
        break;
      }
    }
    sent.push_back(stored);
  }
  EXPECT_GT(same_axes, 50);
  EXPECT_GT(other_axes, 20);
  std::printf("baseline axes equal to the pose's: %d updates, different: %d\n", same_axes, other_axes);
}

TEST(ClipDictionary, RecipeThatMissesThePoseFallsBackToTheReferences) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder encoder(rig.format, &dictionary);
  QuantizedPose base, q;
  ASSERT_TRUE(quantizer.quantize(rig.evaluate(crossfade(0, 0.3f)), nullptr, base));
  auto pose = rig.evaluate(crossfade(50000, 0.3f));
  for (auto& t : pose) t.rotation = glm::normalize(t.rotation * glm::quat(0.99f, 0.1f, 0.0f, 0.0f));
  ASSERT_TRUE(quantizer.quantize(pose, &base, q));
  q.recipe = crossfade(50000, 0.3f);  // claims the recipe, but the pose was edited on top
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encoder.encode(q, history({base}, 3), bytes));
  QuantizedPose got;
  ASSERT_TRUE(decode_pose(rig.format, bytes, history({base}, 3), got, PoseCoding::kRangeCoded, &dictionary).ok());
  EXPECT_EQ(got, q);
}

TEST(ClipDictionary, DecoderWithoutTheDictionaryRefusesDictionaryRecords) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder encoder(rig.format, &dictionary);
  QuantizedPose q;
  ASSERT_TRUE(quantizer.quantize(rig.evaluate(crossfade(70000, 0.5f)), nullptr, q));
  q.recipe = crossfade(70000, 0.5f);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encoder.encode(q, PoseReference{}, bytes));
  QuantizedPose got;
  const Status st = decode_pose(rig.format, bytes, PoseReference{}, got);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("dictionary"), std::string::npos);
}

TEST(ClipDictionary, InvalidRecipesAreRefused) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  PoseEncoder encoder(rig.format, &dictionary);
  QuantizedPose q;
  q.reset(rig.format);
  std::vector<uint8_t> bytes;
  q.recipe.count = 1;
  q.recipe.inputs[0] = {7, 0, 1.0f};  // no clip 7
  EXPECT_FALSE(encoder.encode(q, PoseReference{}, bytes));
  q.recipe.inputs[0] = {0, -5, 1.0f};
  EXPECT_FALSE(encoder.encode(q, PoseReference{}, bytes));
  q.recipe.inputs[0] = {0, 0, -1.0f};
  EXPECT_FALSE(encoder.encode(q, PoseReference{}, bytes));
  EXPECT_FALSE(dictionary.valid(q.recipe));
  q.recipe.inputs[0] = {0, 0, 1.0f};
  PoseEncodeOptions packed;
  packed.coding = PoseCoding::kBitPacked;
  EXPECT_FALSE(encoder.encode(q, PoseReference{}, bytes, packed));  // no recipes there
  EXPECT_TRUE(encoder.encode(q, PoseReference{}, bytes));
}

TEST(ClipDictionary, MutatedRecipeStreamsDecodeOrFailCleanly) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder encoder(rig.format, &dictionary);
  QuantizedPose base, q;
  ASSERT_TRUE(quantizer.quantize(rig.evaluate(crossfade(0, 0.2f)), nullptr, base));
  base.recipe = crossfade(0, 0.2f);
  ASSERT_TRUE(quantizer.quantize(rig.evaluate(crossfade(50000, 0.25f)), &base, q));
  q.recipe = crossfade(50000, 0.25f);
  std::vector<uint8_t> bytes;
  const std::vector<QuantizedPose> held = {base};
  const PoseReference ref = history(held, 3);
  ASSERT_TRUE(encoder.encode(q, ref, bytes));
  test::TestRng rng{31};
  int failures = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> mutated = bytes;
    mutated[rng() % mutated.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    QuantizedPose got;
    if (!decode_pose(rig.format, mutated, ref, got, PoseCoding::kRangeCoded, &dictionary).ok()) {
      ++failures;
      continue;
    }
    EXPECT_TRUE(dictionary.valid(got.recipe) || got.recipe.count == 0);
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace posecast::protocol
