// Pose codec: bytes per entity-update and encode+decode time, with the error it costs.
//
// Benchmarks are named BM_Codec/<scenario>/<send rate>/<reference>:
//   scenarios   FoxRun (Fox.glb "Run" looping), FoxWalkRun (Fox "Walk" <-> "Run" crossfades:
//               0.5 s fades every 1.5 s, blended by BlendJob like the animator), CesiumManWalk
//               (cesium_man.gltf's only clip), GenRig128 (the generated 128-joint rig, "run")
//   send rates  60Hz, 30Hz, 20Hz of a 60 Hz server tick (baseline age 1, 2, 3 ticks)
//   reference   delta     each update against the previous three (the last acked snapshots
//                         when every update is acked in time): baseline, prior, older
//               absolute  every update against the rest pose (a late joiner, a lost baseline)
//               dictionary  as delta, with each pose's recipe (clips, times, weights) attached
//                         and a clip dictionary on both sides (the stretch goal: predicted from
//                         the shared clips; the encoder keeps the smaller of both predictions)
//               served    the dictionary records as the server and the network client handle
//                         them: the encoder vouches that each pose is its recipe's prediction
//                         (PoseEncodeOptions::recipe_reproduces_pose: no clip evaluation) and
//                         the decoder defers the exact records' codes (defer_exact), so
//                         ns_per_entity is the codec's cost per entity-update on that path; the
//                         client computes a deferred pose's codes only when it needs them
//                         (docs/client.md). Bytes as dictionary.
// 10 seconds of updates per scenario (200 at 20 Hz).
//
// Counters (per animated joint = node with at least one animated channel, PoseFormat):
//   bytes_per_joint            median over updates of pose bytes / animated joints
//   bytes_per_joint_p99        99th percentile of the same
//   bytes_per_entity           median pose bytes per update (the codec's output)
//   record_bytes_per_joint     median including the 8-byte snapshot record header
//   max_error_cm_scaled        worst virtual-vertex error of any joint in any update (3 cm shell,
//                              scaled cm; bound 0.01)
//   max_skinned_error_cm_scaled  worst real-vertex displacement (CPU skinning)
//   ns_per_entity              encode + decode CPU time per entity-update (per client)
//   ns_encode, ns_decode       the two halves of ns_per_entity timed apart (each over every
//                              update, a few passes; decode from bytes encoded beforehand)
//   ns_quantize, ns_dequantize quantising a pose (server, once per entity and tick, shared by
//                              every client) and dequantising it (client), CPU ns
//   raw_float_bytes_per_joint  reference: float TRS, 40 bytes per joint
//   smallest3_bytes_per_joint  reference: 32-bit smallest-three rotation (2+3x10 bits) per
//                              animated rotation, floats for animated translations/scales
//   smallest3_error_cm_scaled  the error that 32-bit smallest-three would have on this data
//   bitpacked_bytes_per_joint  median with the bit-packed (Exp-Golomb) stage instead of the range
//                              coder; baseline_only_ / two_references_bytes_per_joint: the
//                              range coder with only the baseline (no prediction) / without the
//                              third pose (no acceleration context). What each step buys.

#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "codec_scenarios.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/error_metric.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"

namespace {

using namespace posecast;
using namespace posecast::protocol;
using namespace posecast::codec_scenarios;

// ---------------------------------------------------------------- measurements

struct SizeStats {
  std::vector<double> per_joint;  // one per update
};

enum class Mode { kDelta, kAbsolute, kDictionary, kServed };
const char* to_string(Mode m) {
  switch (m) {
    case Mode::kDelta: return "delta";
    case Mode::kAbsolute: return "absolute";
    case Mode::kDictionary: return "dictionary";
    case Mode::kServed: return "served";
  }
  return "?";
}

std::vector<double> sizes(const Scenario& s, const std::vector<QuantizedPose>& q, bool delta, int age,
                          const PoseEncodeOptions& options, ClipDictionary* dictionary = nullptr) {
  PoseEncoder encoder(*s.format, dictionary);
  std::vector<double> out;
  std::vector<uint8_t> bytes;
  // The first update of a delta stream has no baseline; it is not a delta measurement.
  for (std::size_t u = delta ? 1 : 0; u < q.size(); ++u) {
    bytes.clear();
    (void)encoder.encode(q[u], reference_for(q, u, delta, age), bytes, options);
    out.push_back(static_cast<double>(bytes.size()));
  }
  return out;
}

// 32-bit smallest-three of a rotation (2-bit index, 3 x 10 bits over [-1/sqrt2, 1/sqrt2]).
glm::quat smallest_three_32(const glm::quat& q) {
  float c[4] = {q.x, q.y, q.z, q.w};
  int largest = 0;
  for (int i = 1; i < 4; ++i)
    if (std::fabs(c[i]) > std::fabs(c[largest])) largest = i;
  const float sign = c[largest] < 0.0f ? -1.0f : 1.0f;
  const float range = 0.70710678f;
  float sum = 0.0f;
  for (int i = 0; i < 4; ++i) {
    if (i == largest) continue;
    const float v = std::clamp(c[i] * sign, -range, range);
    const float code = std::floor((v + range) / (2.0f * range) * 1023.0f + 0.5f);
    c[i] = code / 1023.0f * 2.0f * range - range;
    sum += c[i] * c[i];
  }
  c[largest] = std::sqrt(std::max(0.0f, 1.0f - sum));
  return glm::quat(c[3], c[0], c[1], c[2]);
}

struct ErrorStats {
  float codec_cm = 0.0f;
  float skinned_cm = 0.0f;
  float smallest3_cm = 0.0f;
  std::string worst;
};

ErrorStats errors(const Scenario& s, const std::vector<QuantizedPose>& q) {
  const Skeleton& sk = s.rig->skeleton;
  TrackErrorReport codec(s.format->error_scale), smallest3(s.format->error_scale);
  std::vector<Transform> decoded(sk.node_count()), s3(sk.node_count());
  std::vector<glm::mat4> exact_m(sk.node_count()), test_m(sk.node_count());
  std::vector<glm::mat4> exact_p(sk.joint_count()), test_p(sk.joint_count());
  std::vector<glm::vec3> va, vb;
  const SkinnedMesh* mesh = s.rig->meshes.empty() ? nullptr : &s.rig->meshes[0];
  for (std::size_t u = 0; u < s.poses.size(); ++u) {
    LocalToModelJob{&sk, s.poses[u], exact_m}.Run();
    dequantize_pose(*s.format, q[u], decoded);
    LocalToModelJob{&sk, decoded, test_m}.Run();
    codec.add(static_cast<int64_t>(u), measure_pose_error(sk, s.format->error_scale, exact_m, test_m));
    if (mesh != nullptr && PaletteJob{&sk, exact_m, exact_p}.Run() && PaletteJob{&sk, test_m, test_p}.Run()) {
      float mesh_scale = 1.0f;
      if (sk.mesh_node >= 0) {
        const glm::mat4& m = exact_m[static_cast<std::size_t>(sk.mesh_node)];
        mesh_scale = std::max({glm::length(glm::vec3(m[0])), glm::length(glm::vec3(m[1])),
                               glm::length(glm::vec3(m[2]))});
      }
      codec.add_skinned(static_cast<int64_t>(u),
                        max_skinned_displacement(*mesh, exact_p, test_p, mesh_scale, va, vb));
    }
    for (std::size_t n = 0; n < sk.node_count(); ++n) {
      s3[n] = s.poses[u][n];
      if (s.format->channels[n] & kChannelRotation) s3[n].rotation = smallest_three_32(s3[n].rotation);
    }
    LocalToModelJob{&sk, s3, test_m}.Run();
    smallest3.add(static_cast<int64_t>(u), measure_pose_error(sk, s.format->error_scale, exact_m, test_m));
  }
  ErrorStats e;
  e.codec_cm = codec.worst_cm_scaled();
  e.skinned_cm = codec.worst_skinned_cm_scaled();
  e.smallest3_cm = smallest3.worst_cm_scaled();
  e.worst = codec.describe(sk);
  return e;
}

// CPU time of the calling thread, in nanoseconds.
double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Mean CPU ns of PoseQuantizer::quantize / dequantize_pose per pose over a few passes.
double time_quantize(const Scenario& s, const std::vector<QuantizedPose>& q) {
  PoseQuantizer quantizer(*s.format);
  QuantizedPose out;
  out.reset(*s.format);
  const int passes = 20;
  const double start = thread_cpu_ns();
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t u = 1; u < q.size(); ++u) quantizer.quantize(s.poses[u], &q[u - 1], out);
  benchmark::DoNotOptimize(out.values.data());
  return (thread_cpu_ns() - start) / (passes * static_cast<double>(q.size() - 1));
}

double time_dequantize(const Scenario& s, const std::vector<QuantizedPose>& q) {
  std::vector<Transform> out(s.format->node_count());
  const int passes = 20;
  const double start = thread_cpu_ns();
  for (int pass = 0; pass < passes; ++pass)
    for (const QuantizedPose& p : q) dequantize_pose(*s.format, p, out);
  benchmark::DoNotOptimize(out.data());
  return (thread_cpu_ns() - start) / (passes * static_cast<double>(q.size()));
}

// Mean CPU ns per update of the encoder alone and of the decoder alone, over every update
// from the fourth on (as the timed loop), a few passes each. The split tells which side a
// change moved; ns_per_entity (both, interleaved) stays the target's measure.
struct SplitTimes {
  double encode_ns = 0;
  double decode_ns = 0;
};

SplitTimes time_encode_decode(const PoseFormat& f, const std::vector<QuantizedPose>& q, bool delta,
                              int age, const PoseEncodeOptions& options,
                              ClipDictionary* server_dictionary,
                              ClipDictionary* client_dictionary, bool defer_exact) {
  PoseEncoder encoder(f, server_dictionary);
  std::vector<std::vector<uint8_t>> records(q.size());
  const int passes = 10;
  const std::size_t first = 3;
  const double encode_start = thread_cpu_ns();
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t u = first; u < q.size(); ++u) {
      records[u].clear();
      encoder.encode(q[u], reference_for(q, u, delta, age), records[u], options);
    }
  const double encode_end = thread_cpu_ns();
  QuantizedPose client_q, dictionary_scratch;
  client_q.reset(f);
  const double decode_start = thread_cpu_ns();
  for (int pass = 0; pass < passes; ++pass)
    for (std::size_t u = first; u < q.size(); ++u) {
      const Status st = decode_pose(f, records[u], reference_for(q, u, delta, age), client_q,
                                    PoseCoding::kRangeCoded, client_dictionary,
                                    &dictionary_scratch, nullptr, defer_exact);
      benchmark::DoNotOptimize(st);
      benchmark::DoNotOptimize(client_q.values.data());
    }
  const double decode_end = thread_cpu_ns();
  const double n = passes * static_cast<double>(q.size() - first);
  return {(encode_end - encode_start) / n, (decode_end - decode_start) / n};
}

// ---------------------------------------------------------------- the benchmark

void run_codec(benchmark::State& state, const std::string& source, const std::string& clip_a,
               const std::string& clip_b, int send_hz, Mode mode) {
  const Scenario s = build_scenario(source, clip_a, clip_b, send_hz);
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  const int age = kServerTickHz / send_hz;
  const bool delta = mode != Mode::kAbsolute;
  const bool recipes = mode == Mode::kDictionary || mode == Mode::kServed;
  std::vector<QuantizedPose> q = quantize_all(s, recipes);
  const PoseFormat& f = *s.format;
  const double joints = std::max<double>(1.0, f.animated_node_count);
  // Dictionary mode: the poses carry their recipes; both sides hold a clip dictionary.
  std::unique_ptr<ClipDictionary> server_dictionary, client_dictionary;
  if (recipes) {
    for (std::size_t i = 0; i < q.size(); ++i) q[i].recipe = s.recipes[i];
    server_dictionary = std::make_unique<ClipDictionary>(s.rig->skeleton, s.rig->clips, f);
    client_dictionary = std::make_unique<ClipDictionary>(s.rig->skeleton, s.rig->clips, f);
  }

  // Timed: the server's encode and the client's decode of one entity-update (quantising is
  // once per entity and tick, shared by every client; it and dequantising are timed below).
  PoseEncoder encoder(f, server_dictionary.get());
  QuantizedPose dictionary_scratch;
  std::vector<uint8_t> bytes;
  bytes.reserve(4096);
  QuantizedPose client_q;
  client_q.reset(f);
  std::size_t u = 3;
  int64_t updates = 0;
  PoseEncodeOptions encode_options;
  encode_options.recipe_reproduces_pose = mode == Mode::kServed;
  const bool defer_exact = mode == Mode::kServed;
  for (auto _ : state) {
    const PoseReference ref = reference_for(q, u, delta, age);
    bytes.clear();
    encoder.encode(q[u], ref, bytes, encode_options);
    const Status st = decode_pose(f, bytes, ref, client_q, PoseCoding::kRangeCoded,
                                  client_dictionary.get(), &dictionary_scratch, nullptr,
                                  defer_exact);
    benchmark::DoNotOptimize(st);
    benchmark::DoNotOptimize(client_q.values.data());
    if (++u == q.size()) u = 3;
    ++updates;
  }
  state.SetItemsProcessed(updates);
  const double quantize_ns = time_quantize(s, q);
  const double dequantize_ns = time_dequantize(s, q);
  const SplitTimes split = time_encode_decode(f, q, delta, age, encode_options, server_dictionary.get(),
                                              client_dictionary.get(), defer_exact);

  const std::vector<double> range_sizes = sizes(s, q, delta, age, {}, server_dictionary.get());
  // The reference stages below carry no recipes: measure them on the bare poses.
  for (QuantizedPose& p : q) p.recipe = PoseRecipe{};
  PoseEncodeOptions packed;
  packed.coding = PoseCoding::kBitPacked;
  const std::vector<double> packed_sizes = sizes(s, q, delta, age, packed);
  PoseEncodeOptions one_reference, two_references;
  one_reference.max_references = 1;
  two_references.max_references = 2;
  const std::vector<double> baseline_only_sizes = sizes(s, q, delta, age, one_reference);
  const std::vector<double> two_reference_sizes = sizes(s, q, delta, age, two_references);
  const ErrorStats e = errors(s, q);

  double rot = 0, trans = 0, scale = 0;
  for (uint8_t c : f.channels) {
    rot += (c & kChannelRotation) ? 1 : 0;
    trans += (c & kChannelTranslation) ? 1 : 0;
    scale += (c & kChannelScale) ? 1 : 0;
  }
  auto& k = state.counters;
  k["bytes_per_joint"] = percentile(range_sizes, 0.5) / joints;
  k["bytes_per_joint_p99"] = percentile(range_sizes, 0.99) / joints;
  k["bytes_per_entity"] = percentile(range_sizes, 0.5);
  k["bytes_per_entity_p99"] = percentile(range_sizes, 0.99);
  k["record_bytes_per_joint"] = (percentile(range_sizes, 0.5) + 8.0) / joints;
  k["bitpacked_bytes_per_joint"] = percentile(packed_sizes, 0.5) / joints;
  k["baseline_only_bytes_per_joint"] = percentile(baseline_only_sizes, 0.5) / joints;
  k["two_references_bytes_per_joint"] = percentile(two_reference_sizes, 0.5) / joints;
  k["max_error_cm_scaled"] = e.codec_cm;
  k["max_skinned_error_cm_scaled"] = e.skinned_cm;
  k["animated_joints"] = joints;
  k["ns_encode"] = split.encode_ns;
  k["ns_decode"] = split.decode_ns;
  k["ns_quantize"] = quantize_ns;
  k["ns_dequantize"] = dequantize_ns;
  k["raw_float_bytes_per_joint"] = 40.0;
  k["smallest3_bytes_per_joint"] = (4.0 * rot + 12.0 * trans + 12.0 * scale) / joints;
  k["smallest3_error_cm_scaled"] = e.smallest3_cm;
  // The rate counter is in seconds per item; scale to nanoseconds.
  k["ns_per_entity"] = benchmark::Counter(static_cast<double>(updates) / 1e9,
                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(e.worst);
}

}  // namespace

int main(int argc, char** argv) {
  for (const ScenarioSpec& sc : kScenarios) {
    for (int hz : kSendRates) {
      for (Mode mode : {Mode::kDelta, Mode::kAbsolute, Mode::kDictionary, Mode::kServed}) {
        const std::string name = std::string("BM_Codec/") + sc.name + "/" + std::to_string(hz) +
                                 "Hz/" + to_string(mode);
        const std::string source = sc.source, a = sc.clip_a, b = sc.clip_b;
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
          run_codec(st, source, a, b, hz, mode);
        });
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
