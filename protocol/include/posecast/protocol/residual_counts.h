#pragma once
// The pose codec's residuals counted instead of coded: which symbol each context
// (residual_tables.h) would code, and how many raw bits go to the side stream. For measuring
// the static residual tables: training them, and estimating what a record would cost with
// other tables (bench/codec_tables.cpp; docs/codec.md, "The tables out of sample").
// Not on any hot path.

#include <array>
#include <cstdint>

#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/range_coder.h"
#include "posecast/protocol/residual_tables.h"

namespace posecast::protocol {

struct ResidualCounts {
  static constexpr uint32_t kContexts = kResidualClasses * kResidualBuckets;
  // symbols[cls * kResidualBuckets + bucket][symbol]: how often a context coded a symbol
  // (buckets past the last share the last, as residual_table() does).
  std::array<std::array<uint64_t, SymbolTable::kSymbols>, kContexts> symbols{};
  // How often the escape table coded each symbol (an escape's length, 15: "15 or more").
  std::array<uint64_t, SymbolTable::kSymbols> escape_lengths{};
  uint64_t raw_bits = 0;   // side-stream bits: residuals' low bits and escapes' bits
  uint64_t residuals = 0;  // residuals counted

  void add(const ResidualCounts& other);
};

// A set of static tables as frequencies (in 1/4096, each >= 1, summing to 4096 per context):
// the committed ones (residual_tables.h) or others to compare them with.
struct ResidualFrequencies {
  uint16_t residual[kResidualClasses][kResidualBuckets][SymbolTable::kSymbols] = {};
  uint16_t escape_length[SymbolTable::kSymbols] = {};
};

// The tables the codec codes with (a copy of residual_tables.h's frequencies).
ResidualFrequencies committed_residual_frequencies();

// The ideal code length of `counts` under `tables`, in bits: every symbol costs
// log2(4096 / frequency) and every raw bit one. The range coder's output is within a few
// bytes per record of this plus the record header (residual_counts_test). Infinity when a
// counted symbol has frequency 0 in `tables`.
double code_length_bits(const ResidualCounts& counts, const ResidualFrequencies& tables);

// Adds to `counts` the residuals of the body of `pose` as PoseEncoder's range coder codes it
// against the first `references` (0..3) of `reference`, predicted from `dictionary_codes`
// instead when it is not null (ClipDictionary::predict's output for the pose's recipe). The
// record header, the rotation axes and the recipe's fields are adaptive or raw, not residual
// contexts, and are not counted. False, counting nothing, when the pose or a reference used
// does not fit `format`, or a used reference's age is 0.
bool count_body_residuals(const PoseFormat& format, const QuantizedPose& pose,
                          const PoseReference& reference, int references,
                          const QuantizedPose* dictionary_codes, ResidualCounts& counts);

}  // namespace posecast::protocol
