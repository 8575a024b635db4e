// codec_tables: how much of the pose codec's sizes is owed to residual tables trained on the
// data they are measured on.
//
// The static residual tables (protocol/include/posecast/protocol/residual_tables.h) were
// trained on bench_codec's own scenarios, so bench_codec's sizes are in-sample figures. This
// program trains tables by the procedure residual_tables.h documents (train() below) on every
// scenario, without each scenario in turn, and without both Fox scenarios, and estimates each
// scenario's delta stream under every set of tables:
//
//   estimate(record) = the bytes the encoder writes with the committed tables
//                      + (ideal length under the set - ideal length under the committed) / 8
//
// The ideal length (protocol::code_length_bits) covers the record's residual symbols and raw
// bits; the rest of a record (header flags, rotation axes, the coder's flush) does not depend
// on the tables. Per scenario and send rate it prints the median bytes per animated joint
// (bench_codec's bytes_per_joint) with the committed tables (measured) and estimated under
// each trained set. "without it" is the out-of-sample figure: tables that never saw the
// scenario. Training data per scenario: every send rate (60, 30, 20 Hz); delta with 3, 2 and 1
// references; absolute; dictionary (residuals of the prediction the encoder would keep, chosen
// here by the smaller ideal length). Each scenario weighs the same.
//
// Usage: codec_tables [--print-tables]
//   --print-tables  also print the tables trained on every scenario, laid out as
//                   residual_tables.h's initialisers: how to renew the committed tables (a
//                   wire-format change: bump kProtocolVersion and every wire-bytes golden).
// Needs the sample assets beside the checkout (../shared/assets) for Fox and CesiumMan; a
// scenario that cannot be built is reported and left out.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "codec_scenarios.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/residual_counts.h"

namespace {

using namespace posecast;
using namespace posecast::protocol;
using namespace posecast::codec_scenarios;

constexpr uint32_t kBodyClasses = 15;  // T, R, S x five prediction kinds; then the recipe's two
constexpr double kPseudoCounts = 20.0;  // weight of the bucket's distribution over all classes

// Probabilities -> frequencies in 1/4096, each >= 1, summing to 4096 (the largest takes the
// rounding difference).
void quantise(const std::array<double, SymbolTable::kSymbols>& p, uint16_t* out) {
  int sum = 0;
  for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s) {
    out[s] = static_cast<uint16_t>(std::max<long>(1, std::lround(p[s] * SymbolTable::kTotal)));
    sum += out[s];
  }
  while (sum != static_cast<int>(SymbolTable::kTotal)) {
    const auto largest = static_cast<std::size_t>(std::max_element(out, out + SymbolTable::kSymbols) - out);
    const int step = sum > static_cast<int>(SymbolTable::kTotal) ? -1 : 1;
    if (step < 0 && out[largest] <= 1) break;  // cannot happen: 16 symbols of >= 1 sum to 16
    out[largest] = static_cast<uint16_t>(out[largest] + step);
    sum += step;
  }
}

// Tables trained on `scenarios` (residual_tables.h's procedure): each scenario weighted to the
// same total; each context's counts mixed with kPseudoCounts of its bucket's distribution over
// all body classes; quantised. The recipe classes keep the committed tables (recipe fields are
// not counted); the escape table gets one pseudo-count per symbol.
ResidualFrequencies train(const std::vector<const ResidualCounts*>& scenarios,
                          const ResidualFrequencies& committed) {
  double total = 0.0;
  for (const ResidualCounts* c : scenarios) total += static_cast<double>(c->residuals);
  std::vector<std::array<double, SymbolTable::kSymbols>> pooled(ResidualCounts::kContexts);
  std::array<double, SymbolTable::kSymbols> escapes{};
  for (const ResidualCounts* c : scenarios) {
    if (c->residuals == 0) continue;
    const double w = total / static_cast<double>(scenarios.size()) / static_cast<double>(c->residuals);
    for (std::size_t x = 0; x < pooled.size(); ++x)
      for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s)
        pooled[x][s] += w * static_cast<double>(c->symbols[x][s]);
    for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s)
      escapes[s] += w * static_cast<double>(c->escape_lengths[s]);
  }
  ResidualFrequencies out = committed;
  for (uint32_t b = 0; b < kResidualBuckets; ++b) {
    std::array<double, SymbolTable::kSymbols> bucket{};
    double bucket_total = 0.0;
    for (uint32_t c = 0; c < kBodyClasses; ++c)
      for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s) {
        bucket[s] += pooled[c * kResidualBuckets + b][s];
        bucket_total += pooled[c * kResidualBuckets + b][s];
      }
    for (double& v : bucket) v = bucket_total > 0.0 ? v / bucket_total : 1.0 / SymbolTable::kSymbols;
    for (uint32_t c = 0; c < kBodyClasses; ++c) {
      const auto& n = pooled[c * kResidualBuckets + b];
      double count = 0.0;
      for (double v : n) count += v;
      std::array<double, SymbolTable::kSymbols> p{};
      for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s)
        p[s] = (n[s] + kPseudoCounts * bucket[s]) / (count + kPseudoCounts);
      quantise(p, out.residual[c][b]);
    }
  }
  double escape_total = 0.0;
  for (double& v : escapes) escape_total += (v += 1.0);
  for (double& v : escapes) v /= escape_total;
  quantise(escapes, out.escape_length);
  return out;
}

// One scenario at one send rate: the scenario (its format, poses and recipes), its quantised
// poses (without recipes: the delta streams), the reference age of its send rate in ticks, and
// while the training data is counted the poses a server sending recipes quantises.
struct Stream {
  Scenario scenario;
  std::vector<QuantizedPose> poses;
  int age = 1;
  // The same poses as a server sending recipes quantises them (without a reference, so a
  // dictionary prediction is exact: docs/codec.md), recipes attached; only while the
  // training data is counted.
  std::vector<QuantizedPose> recipe_poses;
};

// Adds to `counts` what every coding of `stream` that the tables were trained on would code.
void count_training_data(const Stream& st, ClipDictionary& dictionary, ResidualCounts& counts,
                         const ResidualFrequencies& committed) {
  const PoseFormat& f = *st.scenario.format;
  const auto& q = st.poses;
  QuantizedPose predicted;
  for (std::size_t u = 0; u < q.size(); ++u) {
    (void)count_body_residuals(f, q[u], {}, 0, nullptr, counts);  // absolute
    if (u == 0) continue;
    const PoseReference ref = reference_for(q, u, true, st.age);
    const int available = reference_count(ref);
    for (int max_references : {3, 2, 1}) {
      (void)count_body_residuals(f, q[u], ref, std::min(available, max_references), nullptr, counts);
    }
    // Dictionary: the encoder keeps the smaller of the two predictions; a pose equal to its
    // prediction (exact) sends no body at all.
    const QuantizedPose& with_recipe = st.recipe_poses[u];
    const PoseReference recipe_ref = reference_for(st.recipe_poses, u, true, st.age);
    ResidualCounts by_references, by_dictionary;
    (void)count_body_residuals(f, with_recipe, recipe_ref, available, nullptr, by_references);
    if (!dictionary.predict(with_recipe.recipe, predicted)) {
      counts.add(by_references);
    } else if (predicted.values == with_recipe.values) {
      continue;
    } else if (count_body_residuals(f, with_recipe, recipe_ref, available, &predicted, by_dictionary) &&
               code_length_bits(by_dictionary, committed) < code_length_bits(by_references, committed)) {
      counts.add(by_dictionary);
    } else {
      counts.add(by_references);
    }
  }
}

// `tables` as residual_tables.h's two initialisers.
void print_tables(const ResidualFrequencies& tables) {
  static const char* const kClassNames[kResidualClasses] = {
      "T accel", "T velocity", "T baseline", "T absolute", "T dictionary",
      "R accel", "R velocity", "R baseline", "R absolute", "R dictionary",
      "S accel", "S velocity", "S baseline", "S absolute", "S dictionary",
      "recipe times", "recipe weights"};
  const auto row = [](const uint16_t* f) {
    std::printf("{");
    for (uint32_t s = 0; s < SymbolTable::kSymbols; ++s) std::printf(s ? ", %u" : "%u", f[s]);
    std::printf("}");
  };
  std::printf("\nkResidualFrequencies = {\n");
  for (uint32_t c = 0; c < kResidualClasses; ++c) {
    std::printf("    {  // %s\n", kClassNames[c]);
    for (uint32_t b = 0; b < kResidualBuckets; ++b) {
      std::printf("        ");
      row(tables.residual[c][b]);
      std::printf(",\n");
    }
    std::printf("    },\n");
  }
  std::printf("};\nkEscapeLengthFrequencies = {\n    ");
  row(tables.escape_length);
  std::printf("};\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool print = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--print-tables") {
      print = true;
    } else {
      std::fprintf(stderr, "codec_tables: unknown argument '%s' (usage: codec_tables [--print-tables])\n", argv[i]);
      return 2;
    }
  }
  const ResidualFrequencies committed = committed_residual_frequencies();
  const std::size_t kScenarioCount = std::size(kScenarios);
  std::vector<std::vector<Stream>> streams(kScenarioCount);  // [scenario][rate]
  std::vector<ResidualCounts> counts(kScenarioCount);
  std::vector<bool> usable(kScenarioCount, false);
  for (std::size_t k = 0; k < kScenarioCount; ++k) {
    const ScenarioSpec& spec = kScenarios[k];
    for (int hz : kSendRates) {
      Stream st{build_scenario(spec.source, spec.clip_a, spec.clip_b, hz), {}, kServerTickHz / hz, {}};
      if (!st.scenario.error.empty()) {
        std::fprintf(stderr, "codec_tables: %s left out: %s\n", spec.name, st.scenario.error.c_str());
        break;
      }
      st.poses = quantize_all(st.scenario);
      st.recipe_poses = quantize_all(st.scenario, /*with_recipes=*/true);
      for (std::size_t i = 0; i < st.recipe_poses.size(); ++i) {
        st.recipe_poses[i].recipe = st.scenario.recipes[i];
      }
      ClipDictionary dictionary(st.scenario.rig->skeleton, st.scenario.rig->clips, *st.scenario.format);
      count_training_data(st, dictionary, counts[k], committed);
      st.recipe_poses.clear();  // the delta streams carry no recipes
      streams[k].push_back(std::move(st));
    }
    usable[k] = streams[k].size() == std::size(kSendRates);
  }

  // The sets: every scenario; without each; without both Fox scenarios.
  const auto trained_without = [&](auto&& left_out) {
    std::vector<const ResidualCounts*> in;
    for (std::size_t k = 0; k < kScenarioCount; ++k)
      if (usable[k] && !left_out(k)) in.push_back(&counts[k]);
    return train(in, committed);
  };
  const auto is_fox = [](std::size_t k) { return std::string(kScenarios[k].source) == "Fox.glb"; };
  const ResidualFrequencies all = trained_without([](std::size_t) { return false; });
  const ResidualFrequencies without_fox = trained_without(is_fox);

  std::printf("Median bytes per animated joint, delta against the last three updates "
              "(bench_codec's bytes_per_joint):\n");
  std::printf("  committed: the tables the codec codes with (measured)\n"
              "  retrained: this program's training on every scenario (estimated)\n"
              "  without it: trained on the other scenarios only: out of sample (estimated)\n"
              "  without Fox: trained on CesiumMan and the generated rig only (estimated)\n\n");
  std::printf("%-16s %5s %10s %10s %11s %12s\n", "scenario", "rate", "committed", "retrained",
              "without it", "without Fox");
  for (std::size_t k = 0; k < kScenarioCount; ++k) {
    if (!usable[k]) continue;
    const ResidualFrequencies without_it = trained_without([&](std::size_t j) { return j == k; });
    for (const Stream& st : streams[k]) {
      const PoseFormat& f = *st.scenario.format;
      const double joints = std::max<double>(1.0, f.animated_node_count);
      PoseEncoder encoder(f);
      std::vector<double> measured, retrained, left_out, no_fox;
      std::vector<uint8_t> bytes;
      for (std::size_t u = 1; u < st.poses.size(); ++u) {  // as bench_codec: from the first delta
        const PoseReference ref = reference_for(st.poses, u, true, st.age);
        bytes.clear();
        if (!encoder.encode(st.poses[u], ref, bytes)) continue;
        ResidualCounts c;
        (void)count_body_residuals(f, st.poses[u], ref, reference_count(ref), nullptr, c);
        const double base = code_length_bits(c, committed);
        const double size = static_cast<double>(bytes.size());
        measured.push_back(size);
        retrained.push_back(size + (code_length_bits(c, all) - base) / 8.0);
        left_out.push_back(size + (code_length_bits(c, without_it) - base) / 8.0);
        no_fox.push_back(size + (code_length_bits(c, without_fox) - base) / 8.0);
      }
      const std::string rate = std::to_string(kServerTickHz / st.age) + "Hz";
      std::printf("%-16s %5s %10.2f %10.2f %11.2f", kScenarios[k].name, rate.c_str(),
                  percentile(measured, 0.5) / joints, percentile(retrained, 0.5) / joints, percentile(left_out, 0.5) / joints);
      if (is_fox(k)) std::printf(" %12.2f\n", percentile(no_fox, 0.5) / joints);
      else std::printf(" %12s\n", "-");
    }
  }
  if (print) print_tables(all);
  return 0;
}
