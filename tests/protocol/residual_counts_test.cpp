// count_body_residuals and code_length_bits (the tools that measure the static residual
// tables) against the real encoder: what they count is what the range coder codes.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/protocol/residual_counts.h"
#include "posecast/sampling.h"
#include "protocol_rigs.h"

// A named namespace: the test files share unity batches, and their anonymous namespaces merge.
namespace posecast::protocol::residual_counts_test {
namespace {

constexpr int64_t kTickUs = 1000000 / 60;

struct Stream {
  Model model;
  PoseFormat format;
  std::vector<QuantizedPose> poses;  // the generated rig's "run" at 20 Hz, quantised in a chain
};

Stream run_stream(const std::string& source, int updates) {
  bool absent = false;
  Result<Model> loaded = test::load_test_model(source, &absent);
  EXPECT_TRUE(loaded.ok());
  Stream s{std::move(loaded.value()), {}, {}};
  const posecast::Rig& rig = s.model.rigs.at(0);
  s.format = build_pose_format(rig.skeleton, rig.clips).value();
  const int run = s.model.find_clip("run");
  EXPECT_GE(run, 0);
  const Clip& clip = rig.clips.at(static_cast<std::size_t>(run));
  PoseQuantizer quantizer(s.format);
  SamplingCursor cursor;
  cursor.reset(clip);
  std::vector<Transform> pose(rig.skeleton.node_count());
  for (int u = 0; u < updates; ++u) {
    SampleJob job{&rig.skeleton, &clip, (u * 3 * kTickUs) % clip.duration_us, cursor.keys, pose};
    EXPECT_TRUE(job.Run());
    QuantizedPose q;
    EXPECT_TRUE(quantizer.quantize(pose, s.poses.empty() ? nullptr : &s.poses.back(), q));
    s.poses.push_back(std::move(q));
  }
  return s;
}

PoseReference references_before(const std::vector<QuantizedPose>& poses, std::size_t u) {
  PoseReference r;
  if (u >= 1) r.baseline = &poses[u - 1], r.baseline_age = 3;
  if (u >= 2) r.prior = &poses[u - 2], r.prior_age = 3;
  if (u >= 3) r.older = &poses[u - 3], r.older_age = 3;
  return r;
}

std::size_t coded_values(const PoseFormat& format) {
  std::size_t n = 0;
  for (uint8_t c : format.channels) n += 3 * static_cast<std::size_t>(std::popcount(c));
  return n;
}

// Every record of a delta stream (and of the same poses coded absolute): the counted
// residuals' ideal length under the committed tables is within a few bytes of the record the
// encoder writes. What the record has besides: the header's adaptive flags, rotation axes
// when one is not the likely one, the range coder's flush (up to about two bytes) and the side
// stream's last byte. A coder never beats the ideal length by more than its rounding.
TEST(ResidualCounts, CodeLengthUnderTheCommittedTablesMatchesTheEncodedBytes) {
  const Stream s = run_stream("gen-rig:24", 60);
  const ResidualFrequencies committed = committed_residual_frequencies();
  PoseEncoder encoder(s.format);
  for (bool delta : {true, false}) {
    double total_bits = 0.0, total_estimate = 0.0;
    for (std::size_t u = 0; u < s.poses.size(); ++u) {
      const PoseReference ref = delta ? references_before(s.poses, u) : PoseReference{};
      std::vector<uint8_t> bytes;
      ASSERT_TRUE(encoder.encode(s.poses[u], ref, bytes));
      ResidualCounts counts;
      ASSERT_TRUE(count_body_residuals(s.format, s.poses[u], ref, reference_count(ref), nullptr,
                                       counts));
      EXPECT_EQ(counts.residuals, coded_values(s.format));
      const double estimate = code_length_bits(counts, committed);
      const double bits = 8.0 * static_cast<double>(bytes.size());
      EXPECT_GE(bits, estimate - 8.0) << (delta ? "delta" : "absolute") << " update " << u;
      EXPECT_LE(bits, estimate + 48.0) << (delta ? "delta" : "absolute") << " update " << u;
      total_bits += bits;
      total_estimate += estimate;
    }
    EXPECT_NEAR(total_bits / total_estimate, 1.0, 0.05) << (delta ? "delta" : "absolute");
  }
}

// A residual far beyond its context's expectation takes the escape: its length is counted
// in the escape table and its bits as raw bits, and the estimate still follows the encoder.
TEST(ResidualCounts, CountsEscapesWithTheirLengthsAndRawBits) {
  Stream s = run_stream("gen-rig:24", 4);
  QuantizedPose pose = s.poses[3];
  const PoseReference ref = references_before(s.poses, 3);
  std::size_t jumped = 0;
  for (std::size_t n = 0; n < s.format.node_count(); ++n) {
    if (s.format.channels[n] & kChannelTranslation) {
      pose.values[n * kValuesPerNode + kTranslationCode] += 1 << 20;  // far off the prediction
      ++jumped;
    }
  }
  ASSERT_GT(jumped, 0u);
  ResidualCounts plain, jumps;
  ASSERT_TRUE(count_body_residuals(s.format, s.poses[3], ref, 3, nullptr, plain));
  ASSERT_TRUE(count_body_residuals(s.format, pose, ref, 3, nullptr, jumps));
  uint64_t escapes = 0;
  for (uint64_t n : jumps.escape_lengths) escapes += n;
  uint64_t plain_escapes = 0;
  for (uint64_t n : plain.escape_lengths) plain_escapes += n;
  EXPECT_GE(escapes, plain_escapes + jumped);
  EXPECT_GT(jumps.raw_bits, plain.raw_bits + 10 * jumped);

  PoseEncoder encoder(s.format);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(encoder.encode(pose, ref, bytes));
  const double bits = 8.0 * static_cast<double>(bytes.size());
  const double estimate = code_length_bits(jumps, committed_residual_frequencies());
  EXPECT_GE(bits, estimate - 8.0);
  EXPECT_LE(bits, estimate + 48.0);
}

TEST(ResidualCounts, RefusesPosesAndReferencesThatDoNotFitTheFormat) {
  const Stream s = run_stream("gen-rig:24", 4);
  ResidualCounts counts;
  QuantizedPose short_pose = s.poses[3];
  short_pose.values.pop_back();
  EXPECT_FALSE(count_body_residuals(s.format, short_pose, {}, 0, nullptr, counts));
  PoseReference ref = references_before(s.poses, 3);
  EXPECT_FALSE(count_body_residuals(s.format, s.poses[3], ref, 4, nullptr, counts));
  ref.prior_age = 0;
  EXPECT_FALSE(count_body_residuals(s.format, s.poses[3], ref, 3, nullptr, counts));
  EXPECT_TRUE(count_body_residuals(s.format, s.poses[3], ref, 1, nullptr, counts));  // prior unused
  ref.baseline = &short_pose;
  EXPECT_FALSE(count_body_residuals(s.format, s.poses[3], ref, 1, nullptr, counts));
  EXPECT_FALSE(count_body_residuals(s.format, s.poses[3], {}, 0, &short_pose, counts));
  // Only the successful call counted: one pose's coded values.
  EXPECT_EQ(counts.residuals, coded_values(s.format));
}

// A table without a symbol the counts need has no finite code length.
TEST(ResidualCounts, CodeLengthIsInfiniteForASymbolTheTablesCannotCode) {
  const Stream s = run_stream("gen-rig:24", 1);
  ResidualCounts counts;
  ASSERT_TRUE(count_body_residuals(s.format, s.poses[0], {}, 0, nullptr, counts));
  ResidualFrequencies tables = committed_residual_frequencies();
  EXPECT_TRUE(std::isfinite(code_length_bits(counts, tables)));
  for (auto& cls : tables.residual)
    for (auto& bucket : cls) bucket[0] = 0;
  EXPECT_TRUE(std::isinf(code_length_bits(counts, tables)));
}

}  // namespace
}  // namespace posecast::protocol::residual_counts_test
