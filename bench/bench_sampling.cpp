// The hot path of one server tick for a crowd of entities: sample one clip, local-to-model,
// palette, the last two for eight entities at a time as the World runs them
// (BM_SampleLocalToModelPalette; BM_PerEntityJobs/Fox does one entity at a time, for
// comparison). Each entity owns its playback state (one cursor word per track and an integer
// time, started at distinct offsets through the clip); every benchmark iteration advances
// every entity by one 60 Hz tick (16667 us, wrapping by the clip duration) and evaluates it.
//
// Counters:
//   ns_per_entity           thread CPU nanoseconds per entity-tick (sample + local-to-model +
//                           palette), measured around the timed loop
//   state_bytes_per_entity  the per-entity playback state: cursor words + the int64 time
//
// The locals/palette buffers are per-thread scratch reused for every batch (a server hashes or
// encodes each palette right after evaluating it), so the figure measures the evaluation, not
// the memory bandwidth of storing N palettes.
//
// Models: Fox.glb from POSECAST_ASSETS_DIR (24 joints, 26 nodes; clip 0 "Survey", 21 LINEAR
// tracks; skipped with an error when absent) and the generated rig with 128 joints (130 nodes;
// clip "walk", 129 LINEAR tracks).
//
//   build/bench/bench_sampling --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "posecast/gltf_import.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/palette_batch.h"
#include "posecast/rig/rig_generator.h"
#include "posecast/sampling.h"

namespace {

using posecast::Clip;
using posecast::Model;
using posecast::Skeleton;

constexpr int64_t kTickUs = 16'667;  // one 60 Hz tick

// CPU time of the calling thread, in nanoseconds (the benchmark runs on one thread).
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A loaded model and the clip the benchmark plays, or why it could not be loaded.
struct BenchModel {
  std::shared_ptr<const Model> model;
  const Skeleton* skeleton = nullptr;
  const Clip* clip = nullptr;
  std::string error;
};

BenchModel from_result(posecast::Result<Model> loaded, const std::string& clip_name) {
  BenchModel out;
  if (!loaded.ok()) {
    out.error = loaded.error().message;
    return out;
  }
  out.model = std::make_shared<const Model>(std::move(loaded).value());
  if (out.model->rigs.empty() || out.model->rigs[0].clips.empty()) {
    out.error = out.model->source + ": no rig with a clip";
    return out;
  }
  const posecast::Rig& rig = out.model->rigs[0];
  std::size_t clip_index = 0;
  for (std::size_t i = 0; i < rig.clips.size(); ++i)
    if (rig.clips[i].name == clip_name) clip_index = i;
  out.skeleton = &rig.skeleton;
  out.clip = &rig.clips[clip_index];
  return out;
}

BenchModel load_fox() {
  const std::string path = std::string(POSECAST_ASSETS_DIR) + "/Fox.glb";
  if (!std::filesystem::exists(path)) return BenchModel{{}, nullptr, nullptr, path + " not found"};
  return from_result(posecast::import_gltf_file(path), "Survey");  // clip 0
}

BenchModel load_generated_rig(uint32_t joints) {
  posecast::rig::RigOptions options;
  options.joints = joints;
  auto glb = posecast::rig::generate_rig_glb(options);
  if (!glb.ok()) return BenchModel{{}, nullptr, nullptr, glb.error().message};
  return from_result(posecast::import_gltf_memory(glb.value(), "gen-rig:" + std::to_string(joints)),
                     "walk");
}

// Per-entity playback state for N entities, stored flat (cursor words then times).
struct Crowd {
  std::size_t tracks = 0;
  std::vector<uint32_t> cursors;  // entity e owns [e * tracks, (e + 1) * tracks)
  std::vector<int64_t> times_us;

  Crowd(const Clip& clip, std::size_t entities)
      : tracks(clip.tracks.size()), cursors(entities * clip.tracks.size(), 0u) {
    times_us.reserve(entities);
    // Distinct start offsets spread evenly over the clip.
    for (std::size_t e = 0; e < entities; ++e)
      times_us.push_back(clip.duration_us * static_cast<int64_t>(e) /
                         static_cast<int64_t>(entities));
  }
  static std::size_t state_bytes_per_entity(const Clip& clip) {
    return clip.tracks.size() * sizeof(uint32_t) + sizeof(int64_t);
  }
};

// Advances entity e's clip time by one tick (wrapping by the clip's duration) and returns it.
int64_t next_time(Crowd& crowd, std::size_t e, int64_t duration) {
  int64_t t = crowd.times_us[e] + kTickUs;
  if (duration > 0) {
    while (t >= duration) t -= duration;
  } else {
    t = 0;
  }
  crowd.times_us[e] = t;
  return t;
}

// False (the benchmark skipped with the reason) when the model could not be loaded.
bool loaded(benchmark::State& state, const BenchModel& bench_model) {
  if (bench_model.clip != nullptr) return true;
  state.SkipWithError(bench_model.error.c_str());
  return false;
}

void report(benchmark::State& state, const Clip& clip, std::size_t entities, int64_t cpu_ns, bool ok) {
  if (!ok) state.SkipWithError("a job failed to run");
  // A plain counter holding nanoseconds (benchmark's inverted-rate counters print as seconds).
  state.counters["ns_per_entity"] =
      static_cast<double>(cpu_ns) /
      (static_cast<double>(state.iterations()) * static_cast<double>(entities));
  state.counters["state_bytes_per_entity"] =
      static_cast<double>(Crowd::state_bytes_per_entity(clip));
}

// As the World evaluates: each entity sampled into its own local pose, then local-to-model and
// palette for up to eight entities at once (PaletteBatchJob, one entity per vector lane).
void BM_SampleLocalToModelPalette(benchmark::State& state, const BenchModel* bench_model) {
  if (!loaded(state, *bench_model)) return;
  const Skeleton& skeleton = *bench_model->skeleton;
  const Clip& clip = *bench_model->clip;
  const auto entities = static_cast<std::size_t>(state.range(0));
  Crowd crowd(clip, entities);
  constexpr std::size_t kBatch = posecast::kPaletteBatchSize;
  std::vector<std::vector<posecast::Transform>> locals(
      kBatch, std::vector<posecast::Transform>(skeleton.node_count()));
  std::vector<std::vector<glm::mat4>> palettes(kBatch,
                                               std::vector<glm::mat4>(skeleton.joint_count()));
  const std::vector<std::span<const posecast::Transform>> local_spans(locals.begin(), locals.end());
  const std::vector<std::span<glm::mat4>> palette_spans(palettes.begin(), palettes.end());
  std::vector<float> scratch(posecast::PaletteBatchJob::scratch_floats(skeleton));

  posecast::SampleJob sample;
  sample.skeleton = &skeleton;
  sample.clip = &clip;
  posecast::PaletteBatchJob batch;
  batch.skeleton = &skeleton;
  batch.scratch = scratch;
  // As the World runs them: the model was validated once when loaded (the importer and the rig
  // generator validate every skeleton and clip), so the jobs skip their per-track and per-joint
  // asset checks and keep only the pointer and size checks.
  sample.assets_validated = true;
  batch.assets_validated = true;

  const int64_t duration = clip.duration_us;
  bool ok = true;
  std::array<bool, kBatch> sampled{};  // locals[k] last written by sample.Run() of this clip
  const int64_t cpu_start_ns = thread_cpu_ns();
  for (auto _ : state) {
    for (std::size_t first = 0; first < entities; first += kBatch) {
      const std::size_t size = std::min(kBatch, entities - first);
      for (std::size_t k = 0; k < size; ++k) {
        const std::size_t e = first + k;
        sample.time_us = next_time(crowd, e, duration);
        sample.cursor = std::span<uint32_t>(crowd.cursors.data() + e * crowd.tracks, crowd.tracks);
        sample.output = locals[k];
        // As the World's evaluator does (EvalScratch's records): a lane buffer last written by
        // this clip's SampleJob already holds the rest pose where the clip has no track.
        sample.output_holds_base = sampled[k];
        sampled[k] = sample.Run();
        ok &= sampled[k];
      }
      batch.locals = std::span(local_spans).first(size);
      batch.palettes = std::span(palette_spans).first(size);
      ok &= batch.Run() == (1u << size) - 1u;
      benchmark::DoNotOptimize(palettes[0].data());
      benchmark::ClobberMemory();
    }
  }
  report(state, clip, entities, thread_cpu_ns() - cpu_start_ns, ok);
}

// The same work one entity at a time (LocalToModelJob then PaletteJob): the comparison for the
// batch above, measured in the same run.
void BM_PerEntityJobs(benchmark::State& state, const BenchModel* bench_model) {
  if (!loaded(state, *bench_model)) return;
  const Skeleton& skeleton = *bench_model->skeleton;
  const Clip& clip = *bench_model->clip;
  const auto entities = static_cast<std::size_t>(state.range(0));
  Crowd crowd(clip, entities);
  std::vector<posecast::Transform> locals(skeleton.node_count());
  std::vector<glm::mat4> models(skeleton.node_count());
  std::vector<glm::mat4> palette(skeleton.joint_count());
  posecast::SampleJob sample{&skeleton, &clip, 0, {}, locals, true};
  posecast::LocalToModelJob local_to_model{&skeleton, locals, models, true};
  posecast::PaletteJob palette_job{&skeleton, models, palette, true};
  const int64_t duration = clip.duration_us;
  bool ok = true;
  const int64_t cpu_start_ns = thread_cpu_ns();
  for (auto _ : state) {
    for (std::size_t e = 0; e < entities; ++e) {
      sample.time_us = next_time(crowd, e, duration);
      sample.cursor = std::span<uint32_t>(crowd.cursors.data() + e * crowd.tracks, crowd.tracks);
      const bool sampled = sample.Run();
      ok &= sampled;
      // As an embedding that samples this clip into one buffer would (and the batch above
      // does): after a successful Run the buffer holds the rest pose where the clip has no track.
      sample.output_holds_base = sampled;
      ok &= local_to_model.Run();
      ok &= palette_job.Run();
      benchmark::DoNotOptimize(palette.data());
      benchmark::ClobberMemory();
    }
  }
  report(state, clip, entities, thread_cpu_ns() - cpu_start_ns, ok);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Loaded once, before any benchmark runs, and kept alive until the end.
  static const BenchModel fox = load_fox();
  static const BenchModel rig128 = load_generated_rig(128);
  for (const auto& [name, bench_model] :
       {std::pair{"BM_SampleLocalToModelPalette/Fox", &fox},
        std::pair{"BM_SampleLocalToModelPalette/GenRig128", &rig128}}) {
    benchmark::RegisterBenchmark(name, BM_SampleLocalToModelPalette, bench_model)
        ->Arg(1)
        ->Arg(100)
        ->Arg(1000)
        ->Arg(10000);
  }
  benchmark::RegisterBenchmark("BM_PerEntityJobs/Fox", BM_PerEntityJobs, &fox)->Arg(100)->Arg(10000);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
