// bench_animator: one World tick per iteration = for every entity, sample two clips (Walk and
// Run, each entity at its own times, speeds and weights), blend them, local-to-model and
// palette, then advance its integer time. Palette hashing is off (it is not part of the pose
// path being measured; `posecast run` reports a figure with hashing).
//
// Names: BM_Animator/<model>/<entities>/threads:<n>, e.g. BM_Animator/Fox/10000/threads:2.
// Counters:
//   ns_per_entity             wall-clock nanoseconds per entity-tick
//   state_bytes_per_entity    animation state per entity, heap included (EntityState::byte_size)
//   palette_bytes_per_entity  the palette each entity outputs (joints x 64 bytes)
// Fox needs the public sample assets (../shared/assets beside the checkout); without them its
// benchmarks report an error and the generated rig still runs.

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>

#include "posecast/rig/model_source.h"
#include "posecast/sim/world.h"

namespace {

using namespace posecast;       // NOLINT: benchmark shorthand
using namespace posecast::sim;  // NOLINT

struct BenchModel {
  std::string label;
  std::string source;
  std::string walk, run;
};

std::shared_ptr<const Model> load(const std::string& source) {
  Result<Model> model = rig::load_model_source(source);
  if (!model) return nullptr;
  return std::make_shared<const Model>(std::move(model.value()));
}

uint16_t clip_index(const Model& model, const std::string& name) {
  const int i = model.find_clip(name);
  return static_cast<uint16_t>(i < 0 ? 0 : i);
}

void BM_Animator(benchmark::State& state, const BenchModel& spec, std::shared_ptr<const Model> model,
                 EntityId entities, unsigned threads) {
  if (!model) {
    state.SkipWithError((spec.source + " could not be loaded (sample assets absent?)").c_str());
    return;
  }
  World world(WorldOptions{60, threads, false});
  Result<ModelId> id = world.add_model(model);
  if (!id) {
    state.SkipWithError(id.error().message.c_str());
    return;
  }
  const uint16_t walk = clip_index(*model, spec.walk);
  const uint16_t run = clip_index(*model, spec.run);
  for (EntityId e = 0; e < entities; ++e) {
    world.submit(0, Command{0, e, SpawnCommand{id.value(), 0, {}}});
    MotionSpec motion;
    motion.count = 2;
    // Distinct per entity: both weights > 0 (both clips sampled), speeds 0.8x..1.4x, offsets.
    const float f = 0.05f + 0.9f * static_cast<float>((e * 37u) % 101u) / 100.0f;
    motion.clips[0] = ClipWeight{walk, 1.0f - f};
    motion.clips[1] = ClipWeight{run, f};
    motion.speed = kSpeedOne * 4 / 5 + static_cast<SpeedQ16>((e % 13u) * 3000u);
    motion.start_offset_us = static_cast<int64_t>(e) * 7919;
    world.submit(0, Command{0, e, PlayCommand{0, motion}});
  }
  world.tick();  // applies the commands; later ticks are the steady state
  std::size_t state_bytes = 0;
  for (std::size_t i = 0; i < world.entity_count(); ++i) {
    state_bytes += world.find_entity(world.entity_id_at(i))->byte_size();
  }

  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    world.tick();
    benchmark::DoNotOptimize(world.palette_at(0).data());
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  const double entity_ticks = static_cast<double>(state.iterations()) * entities;
  state.counters["ns_per_entity"] = ns / entity_ticks;
  state.counters["state_bytes_per_entity"] = static_cast<double>(state_bytes) / entities;
  state.counters["palette_bytes_per_entity"] =
      static_cast<double>(model->rigs[0].skeleton.joint_count() * sizeof(glm::mat4));
  state.SetItemsProcessed(static_cast<int64_t>(entity_ticks));
  if (world.stats().evaluation_failures != 0) state.SkipWithError("evaluation failures");
}

}  // namespace

int main(int argc, char** argv) {
  static const BenchModel kModels[] = {
      {"Fox", std::string(POSECAST_ASSETS_DIR) + "/Fox.glb", "Walk", "Run"},
      {"GenRig128", "gen-rig:128", "walk", "run"},
  };
  for (const BenchModel& spec : kModels) {
    std::shared_ptr<const Model> model = load(spec.source);
    for (EntityId n : {1u, 100u, 1000u, 10000u}) {
      for (unsigned threads : {1u, 2u}) {
        const std::string name = "BM_Animator/" + spec.label + "/" + std::to_string(n) +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Animator, spec, model, n, threads)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
