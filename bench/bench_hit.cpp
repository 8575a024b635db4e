// bench_hit: Server::hit_query against a moving crowd of the generated 24-joint rig (each
// entity walking and turning, its own phase), at a view time 100 ms before the newest tick:
// rays from outside the crowd aimed at a random entity's body, so most pass the broad phase of
// a few entities and hit. Counters: median_ns and p99_ns per query (each query timed alone),
// hit_rate, broad-phase entities per query, the history's bytes per entity.
//   bench_hit --benchmark_filter=HitQuery

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"
#include "posecast/sim/playback_time.h"

namespace {

using namespace posecast;

void BM_HitQuery(benchmark::State& state) {
  const int entities = static_cast<int>(state.range(0));
  Result<Model> loaded = rig::load_model_source("gen-rig:24");
  if (!loaded.ok()) {
    state.SkipWithError(loaded.error().message.c_str());
    return;
  }
  auto model = std::make_shared<const Model>(std::move(loaded).value());
  asio::io_context io;
  server::ServerOptions options;
  options.listen = net::Endpoint(asio::ip::make_address("127.0.0.1"), 0);
  options.threads = 1;
  Result<std::unique_ptr<server::Server>> created = server::Server::create(io, options, {model});
  if (!created.ok()) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  server::Server& srv = *created.value();
  const uint16_t walk = static_cast<uint16_t>(model->find_clip("walk"));
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(entities))));
  std::vector<server::Vec3> places;
  for (int i = 0; i < entities; ++i) {
    const server::Vec3 at{3.0f * static_cast<float>(i % side), 0.0f, 3.0f * static_cast<float>(i / side)};
    const sim::EntityId id = srv.spawn(0, 0, at);
    places.push_back(at);
    sim::MotionSpec motion;
    motion.clips[0] = sim::ClipWeight{walk, 1.0f};
    motion.start_offset_us = 37'000 * i;
    srv.play(id, 0, motion);
    srv.submit(sim::Command{0, id, sim::MoveCommand{1.0f, 0.3f * static_cast<float>(i % 5 - 2)}});
  }
  int64_t now = 1'000'000;
  for (int t = 0; t < 90; ++t) srv.tick(now += 16'667);
  const uint32_t newest = static_cast<uint32_t>(srv.world().tick_index() - 1);
  const int64_t view = sim::tick_start_us(newest, options.tick_rate_hz) - 100'000;
  // Roots now (within 0.1 s of the view time's, at walking speed 1 unit/s).
  std::vector<server::Vec3> roots;
  for (std::size_t i = 0; i < srv.world().entity_count(); ++i) {
    const sim::RootTransform& r = srv.world().entity_at(i)->root;
    roots.push_back({r.x, r.y, r.z});
  }
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::size_t> pick(0, roots.size() - 1);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<double> times;
  uint64_t hits = 0, queries = 0;
  for (auto _ : state) {
    const server::Vec3 target = roots[pick(rng)];
    const glm::vec3 aim(target.x + 0.2f * unit(rng), 0.8f + 0.6f * unit(rng), target.z + 0.2f * unit(rng));
    const glm::vec3 from(aim.x + 40.0f * unit(rng), aim.y + 2.0f, aim.z - 60.0f);
    const HitRay ray{from, aim - from, 200.0f};
    const auto start = std::chrono::steady_clock::now();
    const server::HitResult result = srv.hit_query(ray, view);
    const auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(result);
    times.push_back(std::chrono::duration<double, std::nano>(end - start).count());
    hits += result.hit ? 1 : 0;
    ++queries;
  }
  std::sort(times.begin(), times.end());
  if (!times.empty()) {
    state.counters["median_ns"] = times[times.size() / 2];
    state.counters["p99_ns"] = times[std::min(times.size() - 1, times.size() * 99 / 100)];
  }
  srv.tick(now += 16'667);  // publishes the metrics
  const server::ServerMetrics m = srv.metrics();
  state.counters["hit_rate"] = queries ? static_cast<double>(hits) / static_cast<double>(queries) : 0.0;
  state.counters["unevaluable"] = static_cast<double>(m.hit_unevaluable);
  state.counters["history_bytes_per_entity"] = static_cast<double>(m.hit_history_bytes_per_entity);
  state.counters["entities"] = static_cast<double>(srv.world().entity_count());
  srv.shutdown(now);
}
BENCHMARK(BM_HitQuery)->Name("HitQuery/GenRig24")->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
