// Clip-dictionary prediction: poses that are blends of shared clips travel as a recipe and a
// residual of zeros, decode bit-identically, and fall back cleanly when the recipe is wrong.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "posecast/blending.h"
#include "posecast/hash.h"
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

// 2000 damaged copies of the record `bytes` decoded against `ref`: one bit flipped, or with
// `truncate` every fourth copy cut short instead. Each must fail cleanly or yield a recipe the
// dictionary accepts (checked here); returns how many failed and how many decoded.
struct DamageOutcome {
  int failed = 0;
  int decoded = 0;
};
DamageOutcome decode_damaged(const Rig& rig, ClipDictionary& dictionary,
                             const std::vector<uint8_t>& bytes, const PoseReference& ref,
                             uint64_t seed, bool truncate) {
  test::TestRng rng{seed};
  DamageOutcome outcome;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> mutated = bytes;
    if (truncate && round % 4 == 3) {
      mutated.resize(rng() % mutated.size());
    } else {
      mutated[rng() % mutated.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    QuantizedPose got;
    if (!decode_pose(rig.format, mutated, ref, got, PoseCoding::kRangeCoded, &dictionary).ok()) {
      ++outcome.failed;
      continue;
    }
    ++outcome.decoded;
    EXPECT_TRUE(dictionary.valid(got.recipe) || got.recipe.count == 0);
  }
  return outcome;
}

// A record carrying a valid recipe, and the check that variants of that recipe are refused.
struct RefusalCheck {
  Rig rig;
  ClipDictionary dictionary{rig.skeleton, rig.clips, rig.format};
  PoseEncoder encoder{rig.format, &dictionary};
  QuantizedPose q;

  explicit RefusalCheck(const PoseRecipe& valid) {
    q.reset(rig.format);
    q.recipe = valid;
  }
  // The valid recipe passes the dictionary's validation and the encoder.
  bool accepts_base() {
    std::vector<uint8_t> bytes;
    return dictionary.valid(q.recipe) && encoder.encode(q, PoseReference{}, bytes);
  }
  // `recipe`, put on the record instead, is refused by all three: the dictionary's
  // validation, the encoder and the dictionary's evaluation.
  bool refused(const PoseRecipe& recipe) {
    QuantizedPose bad = q;
    bad.recipe = recipe;
    std::vector<uint8_t> out;
    std::vector<Transform> pose(rig.skeleton.node_count());
    return !dictionary.valid(recipe) && !encoder.encode(bad, PoseReference{}, out) &&
           !dictionary.evaluate(recipe, pose);
  }
};

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
    ASSERT_TRUE(dictionary.predict(crossfade(t, 0.3f), predicted));
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

// Both ends of a link over one rig: the server's quantiser and encoders (with and without the
// clip dictionary) and the client's dictionary.
struct Link {
  Rig rig;
  ClipDictionary server_dictionary{rig.skeleton, rig.clips, rig.format};
  ClipDictionary client_dictionary{rig.skeleton, rig.clips, rig.format};
  PoseQuantizer quantizer{rig.format};
  PoseEncoder with_dictionary{rig.format, &server_dictionary};
  PoseEncoder without{rig.format};
};

TEST(ClipDictionary, CrossfadesTravelAsRecipesAndDecodeBitIdentically) {
  Link link;
  const Rig& rig = link.rig;
  ClipDictionary& client_dictionary = link.client_dictionary;
  PoseQuantizer& quantizer = link.quantizer;
  PoseEncoder& with_dictionary = link.with_dictionary;
  PoseEncoder& without = link.without;
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

// The wire bytes themselves, frozen: one hash over the records of 60 crossfading poses coded
// five ways each (from the clip dictionary, exact; from the clip dictionary with one code off
// the prediction, so a body follows; three references of equal ages, the steady state;
// three of unequal ages; absolute), and every record decoding back to its pose. The encoder
// and decoder have straight-line paths for the second and third (protocol/src/pose_body_fast.h)
// and a general one for the rest (pose_body.h): a change of any path that changes a byte, or
// makes the two sides disagree, fails here. The constant changes only with the protocol version
// (docs/protocol.md): a speed change never moves it.
TEST(ClipDictionary, WireBytesOfEveryRecordKindMatchTheGoldenHash) {
  Link link;
  const Rig& rig = link.rig;
  std::vector<QuantizedPose> sent;
  std::vector<uint8_t> all;
  for (int u = 0; u < 60; ++u) {
    const PoseRecipe recipe = crossfade(u * 50000, static_cast<float>(u % 20) / 19.0f);
    QuantizedPose q;
    ASSERT_TRUE(link.quantizer.quantize(rig.evaluate(recipe), sent.empty() ? nullptr : &sent.back(), q));
    QuantizedPose bare = q;
    q.recipe = recipe;
    // One rotation code off by one, on a node that moves with the update.
    QuantizedPose off = q;
    {
      const std::size_t n = 1 + static_cast<std::size_t>(u) % (rig.format.node_count() - 1);
      int32_t& code = off.values[n * kValuesPerNode + kRotationCode];
      code += code < rig.format.precision[n].rotation_limit ? 1 : -1;
    }
    PoseReference uneven;
    if (sent.size() >= 3) {
      uneven.baseline = &sent[sent.size() - 1], uneven.baseline_age = 1;
      uneven.prior = &sent[sent.size() - 2], uneven.prior_age = 4;
      uneven.older = &sent[sent.size() - 3], uneven.older_age = 7;
    }
    const struct {
      PoseEncoder* encoder;
      const QuantizedPose* pose;
      PoseReference ref;
      bool dictionary, exact;  // what the record must be
    } kinds[] = {{&link.with_dictionary, &q, history(sent, 3), true, true},
                 {&link.with_dictionary, &off, history(sent, 3), true, false},
                 {&link.without, &bare, history(sent, 3), false, false},
                 {&link.without, &bare, uneven, false, false},
                 {&link.without, &bare, PoseReference{}, false, false}};
    for (const auto& kind : kinds) {
      std::vector<uint8_t> bytes;
      ASSERT_TRUE(kind.encoder->encode(*kind.pose, kind.ref, bytes));
      QuantizedPose decoded;
      PoseDecodeInfo info;
      const Status st = decode_pose(rig.format, bytes, kind.ref, decoded, PoseCoding::kRangeCoded,
                                    &link.client_dictionary, nullptr, &info);
      ASSERT_TRUE(st.ok()) << st.error().message;
      ASSERT_EQ(decoded, *kind.pose) << "update " << u;
      EXPECT_EQ(info.from_dictionary, kind.dictionary) << "update " << u;
      EXPECT_EQ(info.exact, kind.exact) << "update " << u;
      all.push_back(static_cast<uint8_t>(bytes.size()));
      all.insert(all.end(), bytes.begin(), bytes.end());
    }
    sent.push_back(q);
  }
  EXPECT_EQ(hash_bytes(all), 0xd411be46070d7f2eull) << std::hex << hash_bytes(all) << std::dec << ", "
                                     << all.size() << " bytes";
}

// The server's shortcut (PoseEncodeOptions::recipe_reproduces_pose): a pose quantised
// without a reference, as the server quantises a pose with a recipe, is its recipe's
// prediction, so the encoder takes its own codes as the prediction without evaluating the
// clips: the bytes equal the full path's, the record is exact (no body), and it decodes to
// the pose, whatever the references (every third one goes into the history with a rotation
// axis changed).
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
  for (int u = 0; u < 120; ++u) {
    const int64_t t = u * 50000;
    const PoseRecipe recipe = crossfade(t, static_cast<float>(u % 20) / 19.0f);
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(rig.evaluate(recipe), nullptr, q));
    q.recipe = recipe;
    std::vector<uint8_t> expected, got;
    ASSERT_TRUE(full.encode(q, history(sent, 3), expected));
    ASSERT_TRUE(shortcut.encode(q, history(sent, 3), got, vouched));
    ASSERT_EQ(got, expected) << "update " << u;
    QuantizedPose decoded;
    PoseDecodeInfo info;
    const Status st = decode_pose(rig.format, got, history(sent, 3), decoded, PoseCoding::kRangeCoded,
                                  &client_dictionary, nullptr, &info);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(decoded, q) << "update " << u;
    EXPECT_TRUE(info.exact) << "update " << u;
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
  EXPECT_GT(decode_damaged(rig, dictionary, bytes, ref, 31, /*truncate=*/false).failed, 0);
}

// `pose` with the plain recipe `target` mixed over it at the fade weight of `fade`
// (elapsed / duration, rounded once from double as the animator does); alpha 0 keeps `pose`.
std::vector<Transform> mix_target_over(const Rig& rig, std::vector<Transform> pose,
                                       const PoseRecipe& target, const PoseRecipe& fade) {
  const float alpha = static_cast<float>(static_cast<double>(fade.fade_elapsed_us) /
                                         static_cast<double>(fade.fade_duration_us));
  if (alpha > 0.0f) {
    const std::vector<Transform> over = rig.evaluate(target);
    OverrideBlendJob mix;
    mix.pose = pose;
    mix.layer = over;
    mix.weight = alpha;
    EXPECT_TRUE(mix.Run());
  }
  return pose;
}

// A motion crossfade (the animator's crossfading layer 0): the source motion blended, the
// target motion blended, the target mixed over the source at elapsed / duration.
std::vector<Transform> evaluate_fade(const Rig& rig, const PoseRecipe& r) {
  if (!r.crossfade()) return rig.evaluate(r);
  PoseRecipe source, target;
  for (uint8_t i = 0; i < r.count; ++i) {
    PoseRecipe& side = i < r.source_count ? source : target;
    side.inputs[side.count++] = r.inputs[i];
  }
  return mix_target_over(rig, rig.evaluate(source), target, r);
}

// Update u of a clip-0 walk at 1.25x that crossfades (from update 10, over 400 ms) to a
// two-clip blend at 0.75x, then plays the blend alone: the recipe the server would attach.
PoseRecipe walk_to_blend(int u) {
  const int64_t t = u * 50'000, start = 500'000, duration = 400'000;
  PoseRecipe r;
  const auto source = [&] {
    r.inputs[r.count++] = {0, (t * 5 / 4) % 2'000'000, 1.0f};
    r.speed = 5 * 65536 / 4;
  };
  const auto target = [&] {
    const int64_t since = t - start;
    r.inputs[r.count++] = {0, (since * 3 / 4) % 2'000'000, 0.3f};
    r.inputs[r.count++] = {1, (since * 3 / 4) % 1'000'000, 0.7f};
    r.speed = 3 * 65536 / 4;
  };
  if (t < start) {
    source();
  } else if (t < start + duration) {
    source();
    r.source_count = r.count;
    r.source_speed = r.speed;
    target();
    r.fade_elapsed_us = t - start;
    r.fade_duration_us = duration;
    r.steady_us = t - start;
  } else {
    target();
    r.steady_us = t - start;
  }
  return r;
}

TEST(ClipDictionary, MotionCrossfadeRecipesEvaluateLikeTheAnimatorAndRoundTripWithTheirFadeState) {
  Rig rig;
  ClipDictionary server_dictionary(rig.skeleton, rig.clips, rig.format);
  ClipDictionary client_dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder encoder(rig.format, &server_dictionary);
  std::vector<QuantizedPose> sent, received;
  std::vector<Transform> evaluated(rig.skeleton.node_count());
  std::size_t fade_bytes = 0, fades = 0;
  for (int u = 0; u < 24; ++u) {
    const PoseRecipe recipe = walk_to_blend(u);
    ASSERT_TRUE(server_dictionary.valid(recipe)) << "update " << u;
    const std::vector<Transform> pose = evaluate_fade(rig, recipe);
    ASSERT_TRUE(client_dictionary.evaluate(recipe, evaluated));
    ASSERT_EQ(std::memcmp(evaluated.data(), pose.data(), pose.size() * sizeof(Transform)), 0)
        << "update " << u;
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(pose, sent.empty() ? nullptr : &sent.back(), q));
    q.recipe = recipe;
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encoder.encode(q, history(sent, 3), bytes));
    QuantizedPose got;
    PoseDecodeInfo info;
    const Status st = decode_pose(rig.format, bytes, history(received, 3), got,
                                  PoseCoding::kRangeCoded, &client_dictionary, nullptr, &info);
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_EQ(got, q) << "update " << u;  // codes and the whole recipe, fade state included
    EXPECT_TRUE(info.from_dictionary) << "update " << u;
    if (recipe.crossfade() && u > 10) {
      fade_bytes += bytes.size();
      ++fades;
    }
    sent.push_back(q);
    received.push_back(got);
  }
  ASSERT_EQ(fades, 7u);
  // Predicted from the baseline recipe (times at the motions' speeds, elapsed by the age):
  // a few bytes per record, not the ~20 bytes of raw times, weights and fade state.
  EXPECT_LT(static_cast<double>(fade_bytes) / static_cast<double>(fades), 12.0);
}

TEST(ClipDictionary, MalformedCrossfadeRecipesAreRefused) {
  RefusalCheck check(walk_to_blend(12));
  ASSERT_TRUE(check.accepts_base());
  const auto refused = [&](const PoseRecipe& r) { return check.refused(r); };
  PoseRecipe r = check.q.recipe;
  r.fade_elapsed_us = r.fade_duration_us;  // a finished fade is plain
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.fade_elapsed_us = -1;
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.source_count = r.count;  // no target
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.wrap = 3;
  EXPECT_TRUE(refused(r));
  r = walk_to_blend(0);
  r.fade_duration_us = 10;  // fade state on a plain recipe
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;  // five source inputs (a motion has at most four)
  for (int i = 0; i < 4; ++i) r.inputs[r.count++] = r.inputs[0];
  r.source_count = 5;
  EXPECT_TRUE(refused(r));
}

TEST(ClipDictionary, MutatedCrossfadeRecipeStreamsDecodeOrFailCleanly) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder encoder(rig.format, &dictionary);
  std::vector<QuantizedPose> held;
  for (int u : {11, 12}) {
    QuantizedPose q;
    ASSERT_TRUE(quantizer.quantize(evaluate_fade(rig, walk_to_blend(u)), held.empty() ? nullptr : &held.back(), q));
    q.recipe = walk_to_blend(u);
    held.push_back(q);
  }
  const std::vector<QuantizedPose> base = {held[0]};
  for (const PoseReference& ref : {history(base, 3), PoseReference{}}) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(encoder.encode(held[1], ref, bytes));
    EXPECT_GT(decode_damaged(rig, dictionary, bytes, ref, 47, /*truncate=*/true).failed, 0);
  }
}

// A fade from a frozen pose (docs/codec.md): walk_to_blend's crossfade interrupted at update
// `interrupt_u` (its state then: both motions' clip times and its fade progress, fixed) and
// faded over 300 ms to clip 1 at 1x; the recipe the server attaches at update u.
PoseRecipe frozen_fade(int u, int interrupt_u = 13) {
  const PoseRecipe interrupted = walk_to_blend(interrupt_u);
  const int64_t since = (u - interrupt_u) * int64_t{50'000};
  PoseRecipe r;
  for (uint8_t i = 0; i < interrupted.count; ++i) r.inputs[r.count++] = interrupted.inputs[i];
  r.frozen_source_count = interrupted.source_count;
  r.source_count = r.count;
  r.source_speed = 0;
  r.frozen_mix_count = 1;
  r.frozen_mixes[0] = {interrupted.fade_elapsed_us, interrupted.fade_duration_us, r.count};
  r.inputs[r.count++] = {1, (walk_to_blend(interrupt_u).inputs[2].time_us + since) % 1'000'000, 1.0f};
  r.fade_elapsed_us = since;
  r.fade_duration_us = 300'000;
  r.steady_us = since;
  return r;
}

// The animator's evaluation of a fade from a frozen pose (sim/src/evaluator.cpp): the frozen
// pose is what the interrupted crossfade showed (evaluate_fade of it), then the new target
// mixed over it at the new fade's alpha.
std::vector<Transform> evaluate_frozen_fade(const Rig& rig, const PoseRecipe& r) {
  PoseRecipe interrupted, target;
  for (uint8_t i = 0; i < r.source_count; ++i) interrupted.inputs[interrupted.count++] = r.inputs[i];
  interrupted.source_count = r.frozen_source_count;
  interrupted.fade_elapsed_us = r.frozen_mixes[0].elapsed_us;
  interrupted.fade_duration_us = r.frozen_mixes[0].duration_us;
  for (uint8_t i = r.source_count; i < r.count; ++i) target.inputs[target.count++] = r.inputs[i];
  return mix_target_over(rig, evaluate_fade(rig, interrupted), target, r);  // over the frozen pose
}

// Poses with their recipes sent as the server and a client do: the client's dictionary must
// evaluate the recipe to the animator's pose bit for bit; each pose is quantised against the
// previous one, encoded against the last three sent and decoded against the last three
// received, and must come back as the quantised pose and recipe, predicted from the dictionary.
struct DictionaryLink {
  explicit DictionaryLink(const Rig& r)
      : rig(r),
        server_dictionary(r.skeleton, r.clips, r.format),
        client_dictionary(r.skeleton, r.clips, r.format),
        quantizer(r.format),
        encoder(r.format, &server_dictionary),
        evaluated(r.skeleton.node_count()) {}

  // Sends `pose` (the animator's) with `recipe`; the record's size, or 0 after a test failure.
  std::size_t send(const std::vector<Transform>& pose, const PoseRecipe& recipe, int u) {
    if (!server_dictionary.valid(recipe) || !client_dictionary.evaluate(recipe, evaluated) ||
        std::memcmp(evaluated.data(), pose.data(), pose.size() * sizeof(Transform)) != 0) {
      ADD_FAILURE() << "update " << u << ": the recipe does not evaluate to the animator's pose";
      return 0;
    }
    QuantizedPose q;
    std::vector<uint8_t> bytes;
    if (!quantizer.quantize(pose, sent.empty() ? nullptr : &sent.back(), q)) return 0;
    q.recipe = recipe;
    if (!encoder.encode(q, history(sent, 3), bytes)) return 0;
    QuantizedPose got;
    PoseDecodeInfo info;
    const Status st = decode_pose(rig.format, bytes, history(received, 3), got,
                                  PoseCoding::kRangeCoded, &client_dictionary, nullptr, &info);
    EXPECT_TRUE(st.ok()) << "update " << u << ": " << (st.ok() ? "" : st.error().message);
    EXPECT_EQ(got, q) << "update " << u;  // codes and the whole recipe, frozen state included
    EXPECT_TRUE(info.from_dictionary) << "update " << u;
    sent.push_back(q);
    received.push_back(got);
    return st.ok() && got == q ? bytes.size() : 0;
  }

  const Rig& rig;
  ClipDictionary server_dictionary, client_dictionary;
  PoseQuantizer quantizer;
  PoseEncoder encoder;
  std::vector<QuantizedPose> sent, received;
  std::vector<Transform> evaluated;
};

TEST(ClipDictionary, FrozenCrossfadeRecipesEvaluateLikeTheAnimatorAndRoundTripCompactly) {
  Rig rig;
  DictionaryLink link(rig);
  std::size_t motion_first_bytes = 0, first_bytes = 0, frozen_bytes = 0, frozen_records = 0;
  // The motion crossfade until update 13, its interruption at 13 (alpha 0: the frozen pose
  // itself), the fade from the frozen pose until 18, its target alone from 19 on.
  for (int u = 8; u < 22; ++u) {
    PoseRecipe recipe = u < 13 ? walk_to_blend(u) : frozen_fade(u);
    if (recipe.frozen() && recipe.fade_elapsed_us >= recipe.fade_duration_us) {
      PoseRecipe plain;  // the fade has ended: its target alone
      plain.inputs[plain.count++] = recipe.inputs[recipe.source_count];
      plain.steady_us = recipe.steady_us;
      recipe = plain;
    }
    const std::size_t bytes =
        link.send(recipe.frozen() ? evaluate_frozen_fade(rig, recipe) : evaluate_fade(rig, recipe), recipe, u);
    ASSERT_GT(bytes, 0u);
    if (u == 10) motion_first_bytes = bytes;
    if (u == 13) first_bytes = bytes;
    if (recipe.frozen() && u > 13) {
      frozen_bytes += bytes;
      ++frozen_records;
    }
  }
  ASSERT_EQ(frozen_records, 5u);
  std::printf("fade from a frozen pose: first record %zu bytes (a motion crossfade's first: %zu), then %.1f bytes per record\n",
              first_bytes, motion_first_bytes, static_cast<double>(frozen_bytes) / static_cast<double>(frozen_records));
  // The first record predicts the frozen times and fade state from the interrupted fade (its
  // clips advanced to the interrupt): with up to twice the inputs, it costs no more than a
  // motion crossfade's first record (new duration, speed, steady time, weights). The next
  // ones predict them from the frozen baseline (constant).
  EXPECT_LE(first_bytes, motion_first_bytes);
  EXPECT_LT(static_cast<double>(frozen_bytes) / static_cast<double>(frozen_records), 12.0);
}

// frozen_fade (interrupted at update 13) interrupted again at update `again`: a chain of two
// frozen mixes (the first fade's, then frozen_fade's target at its progress then), fading over
// 200 ms to clip 0 at 1x; the recipe the server attaches at update u.
PoseRecipe chained_fade(int u, int again = 16) {
  const PoseRecipe interrupted = frozen_fade(again);
  const int64_t since = (u - again) * int64_t{50'000};
  PoseRecipe r = interrupted;
  r.frozen_mixes[r.frozen_mix_count++] = {interrupted.fade_elapsed_us, interrupted.fade_duration_us, r.count};
  r.source_count = r.count;
  r.inputs[r.count++] = {0, (700'000 + since) % 2'000'000, 1.0f};
  r.speed = 1 << 16;
  r.fade_elapsed_us = since;
  r.fade_duration_us = 200'000;
  r.steady_us = since;
  return r;
}

TEST(ClipDictionary, ChainedFrozenRecipesEvaluateLikeTheAnimatorAndPredictTheNewMixFromTheBaseline) {
  Rig rig;
  DictionaryLink link(rig);
  std::size_t frozen_first = 0, chained_first = 0, chained_bytes = 0, chained_records = 0;
  // The motion crossfade at 12, the fade from its frozen pose (updates 13-15), interrupted at
  // 16 (alpha 0: the chain's frozen pose itself), the fade from that chain until 19.
  ASSERT_GT(link.send(evaluate_fade(rig, walk_to_blend(12)), walk_to_blend(12), 12), 0u);
  for (int u = 13; u < 20; ++u) {
    const PoseRecipe recipe = u < 16 ? frozen_fade(u) : chained_fade(u);
    // The animator's pose: the frozen fade as it froze it, then the new target over it.
    std::vector<Transform> pose = evaluate_frozen_fade(rig, u < 16 ? recipe : frozen_fade(16));
    if (u >= 16) {
      PoseRecipe target;
      target.inputs[target.count++] = recipe.inputs[recipe.source_count];
      pose = mix_target_over(rig, pose, target, recipe);
    }
    const std::size_t bytes = link.send(pose, recipe, u);
    ASSERT_GT(bytes, 0u);
    if (u == 13) frozen_first = bytes;
    if (u == 16) chained_first = bytes;
    if (u > 16) {
      chained_bytes += bytes;
      ++chained_records;
    }
  }
  std::printf("fade from a chain of two frozen mixes: first record %zu bytes (a one-mix chain's first: "
              "%zu), then %.1f bytes per record\n",
              chained_first, frozen_first, static_cast<double>(chained_bytes) / static_cast<double>(chained_records));
  // The interrupt's record predicts the new mix (times and fade state) from the baseline, which
  // was the interrupted fade, and the older mix as the baseline's: no dearer than the first
  // interrupt's. The next ones predict everything frozen as constant (one input and one mix
  // state more than a one-mix chain's records, which take about 10 bytes).
  EXPECT_LE(chained_first, frozen_first);
  EXPECT_LT(static_cast<double>(chained_bytes) / static_cast<double>(chained_records), 14.0);
}

TEST(ClipDictionary, MalformedFrozenCrossfadeRecipesAreRefused) {
  RefusalCheck check(frozen_fade(15));
  ASSERT_TRUE(check.accepts_base());
  const auto refused = [&](const PoseRecipe& r) { return check.refused(r); };
  PoseRecipe r = check.q.recipe;
  r.frozen_source_count = r.source_count;  // no frozen target
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.frozen_mix_count = 0;  // a frozen base without a mix
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.frozen_mixes[0].end = static_cast<uint8_t>(r.source_count - 1);  // the chain ends early
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.frozen_mixes[1] = {0, 10, r.source_count};  // state past the mix count
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.frozen_mixes[0].elapsed_us = r.frozen_mixes[0].duration_us;  // a finished fade cannot have been interrupted
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.frozen_mixes[0].elapsed_us = -1;
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.source_speed = 1 << 16;  // a frozen pose does not move
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.source_wrap = 1;
  EXPECT_TRUE(refused(r));
  r = walk_to_blend(12);
  r.frozen_mix_count = 1;  // frozen state without a frozen source
  r.frozen_mixes[0] = {0, 10, r.source_count};
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;  // five frozen target inputs (a motion has at most four)
  for (int i = 0; i < 3; ++i) {
    for (uint8_t k = r.count; k > r.source_count; --k) r.inputs[k] = r.inputs[k - 1];
    r.inputs[r.source_count] = r.inputs[r.frozen_source_count];
    ++r.count;
    ++r.source_count;
  }
  r.frozen_mixes[0].end = r.source_count;
  ASSERT_EQ(r.source_count - r.frozen_source_count, 5);
  EXPECT_TRUE(refused(r));
  r = check.q.recipe;
  r.frozen_source_count = 0;  // then it is a motion crossfade with 3 source inputs at speed 0:
  r.frozen_mix_count = 0;     // valid, but another pose
  r.frozen_mixes[0] = {};
  EXPECT_TRUE(check.dictionary.valid(r));
}

TEST(ClipDictionary, MutatedFrozenCrossfadeRecipeStreamsDecodeOrFailCleanly) {
  Rig rig;
  ClipDictionary dictionary(rig.skeleton, rig.clips, rig.format);
  PoseQuantizer quantizer(rig.format);
  PoseEncoder encoder(rig.format, &dictionary);
  std::vector<QuantizedPose> held;
  for (int u : {12, 13, 14}) {  // the interrupted fade, the interrupt, the fade from it
    const PoseRecipe recipe = u < 13 ? walk_to_blend(u) : frozen_fade(u);
    QuantizedPose q;
    const std::vector<Transform> pose =
        recipe.frozen() ? evaluate_frozen_fade(rig, recipe) : evaluate_fade(rig, recipe);
    ASSERT_TRUE(quantizer.quantize(pose, held.empty() ? nullptr : &held.back(), q));
    q.recipe = recipe;
    held.push_back(q);
  }
  const std::vector<QuantizedPose> motion_base = {held[0]};
  const std::vector<QuantizedPose> frozen_base = {held[1]};
  int decoded = 0;
  for (const PoseReference& ref : {history(motion_base, 3), history(frozen_base, 3), PoseReference{}}) {
    std::vector<uint8_t> bytes;
    const QuantizedPose& pose = ref.baseline == &motion_base[0] ? held[1] : held[2];
    ASSERT_TRUE(encoder.encode(pose, ref, bytes));
    QuantizedPose clean;
    ASSERT_TRUE(decode_pose(rig.format, bytes, ref, clean, PoseCoding::kRangeCoded, &dictionary).ok());
    ASSERT_EQ(clean, pose);
    const DamageOutcome outcome = decode_damaged(rig, dictionary, bytes, ref, 53, /*truncate=*/true);
    EXPECT_GT(outcome.failed, 0);
    decoded += outcome.decoded;
  }
  EXPECT_GT(decoded, 0);
}

}  // namespace
}  // namespace posecast::protocol
