// count_body_residuals: the general pose body (pose_body.h) walked with a sink that counts.
// The codec's private parts are included here as in pose_codec.cpp (internal linkage: this
// file gets its own copy of what it uses).

#include "posecast/protocol/residual_counts.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "pose_prediction.h"
#include "pose_coding_streams.h"
#include "pose_body.h"

namespace posecast::protocol {
namespace {

// A sink for encode_body that counts the steps RangeSink::residual codes: the same
// binarisation (binarise_residual, pose_coding_streams.h). The symbols of a residual table
// are counted in its context (its place among detail::kResidualTables), the escape table's in
// escape_lengths.
struct CountingSink {
  ResidualCounts* counts;

  void residual(const codec::Expectation& e, int64_t r) {
    ++counts->residuals;
    codec::binarise_residual(
        residual_table(e.cls, e.bucket), codec::shift_for(e.bucket), r,
        [&](const SymbolTable& table, uint32_t symbol) {
          if (&table == &escape_length_table()) {
            ++counts->escape_lengths[symbol];
          } else {
            ++counts->symbols[static_cast<std::size_t>(&table - detail::kResidualTables.data())][symbol];
          }
        },
        [&](uint64_t, uint32_t bits) { counts->raw_bits += bits; });
  }
  void axis(int32_t, int32_t) {}  // adaptive bits, not a residual context
};

}  // namespace

void ResidualCounts::add(const ResidualCounts& other) {
  for (std::size_t c = 0; c < symbols.size(); ++c)
    for (std::size_t s = 0; s < symbols[c].size(); ++s) symbols[c][s] += other.symbols[c][s];
  for (std::size_t s = 0; s < escape_lengths.size(); ++s) escape_lengths[s] += other.escape_lengths[s];
  raw_bits += other.raw_bits;
  residuals += other.residuals;
}

ResidualFrequencies committed_residual_frequencies() {
  ResidualFrequencies f;
  std::memcpy(f.residual, detail::kResidualFrequencies, sizeof f.residual);
  std::memcpy(f.escape_length, detail::kEscapeLengthFrequencies, sizeof f.escape_length);
  return f;
}

double code_length_bits(const ResidualCounts& counts, const ResidualFrequencies& tables) {
  const auto cost = [](uint64_t n, uint16_t frequency) {
    if (n == 0) return 0.0;
    if (frequency == 0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(n) *
           std::log2(static_cast<double>(SymbolTable::kTotal) / static_cast<double>(frequency));
  };
  double bits = static_cast<double>(counts.raw_bits);
  for (uint32_t c = 0; c < kResidualClasses; ++c)
    for (uint32_t b = 0; b < kResidualBuckets; ++b)
      for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s)
        bits += cost(counts.symbols[c * kResidualBuckets + b][s], tables.residual[c][b][s]);
  for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s)
    bits += cost(counts.escape_lengths[s], tables.escape_length[s]);
  return bits;
}

bool count_body_residuals(const PoseFormat& format, const QuantizedPose& pose,
                          const PoseReference& reference, int references,
                          const QuantizedPose* dictionary_codes, ResidualCounts& counts) {
  const std::size_t size = format.node_count() * kValuesPerNode;
  if (pose.values.size() != size || references < 0 || references > 3) return false;
  if (dictionary_codes != nullptr && dictionary_codes->values.size() != size) return false;
  if (codec::reference_problem(format, reference, references) != nullptr) return false;
  const codec::Predictor predictor(format, reference, references, dictionary_codes);
  // Whether the axes are known changes only whether axes are coded, not the residuals.
  (void)codec::encode_body(format, pose, predictor, CountingSink{&counts}, false);
  return true;
}

}  // namespace posecast::protocol
