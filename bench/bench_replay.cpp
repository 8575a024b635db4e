// bench_replay: the recording and replay figures of docs/recording-format.md ("Costs").
//
// Every benchmark drives 100 entities at 60 Hz with one command per entity per second (a mix
// of phase-synced crossfades, speed changes, blends and blend-weight changes, staggered so
// every tick has a few), on one thread. A recorded World runs as posecast-server's does when it
// records: palettes and tick checks (sim/tick_check.h: every entity's state hash, a rotating
// sixteenth of the palette hashes), no hash of every palette.
//
//   BM_RecordingSize/<model>     one minute recorded with the default config (checkpoint every
//                                5 s, flush every 1 s). Counters: KB_per_minute (whole file),
//                                tick_KB_per_minute (TICK chunks: commands + world hashes),
//                                checkpoint_KB_per_minute (CKPT chunks).
//   BM_RecordingOverhead/<model> one minute; each tick's World::tick() and Recorder::
//                                record_tick() timed apart in the same loop. Counters:
//                                tick_us, record_us (mean, on the tick thread; the recorder's
//                                writer thread compresses and writes on another core),
//                                overhead_pct = record / tick * 100, and record_us split by
//                                what the call did: checkpoint_us (calls that queued a
//                                checkpoint, with the batch before it), flush_us (calls that
//                                handed a tick batch over only), append_us (the others), each
//                                as microseconds per tick (they sum to record_us). Run it
//                                unpinned: under taskset the writer shares the tick's core.
//                                overhead_pct leaves out the tick checks a recording
//                                needs: the World computes them in its tick (as posecast-
//                                server's does when recording). A second World that hashes
//                                nothing and is not recorded (a server that does not record)
//                                ticks the same minute, in 10 s blocks alternating with the
//                                recorded World, which of the two first alternating too
//                                (POSECAST_BENCH_RECORDED_FIRST=1: always the recorded one):
//                                plain_tick_us, and
//                                recording_cost_pct =
//                                (tick + record - plain tick) / plain tick * 100, the whole
//                                cost of recording.
//   BM_ReplaySpeed/<model>       replays a recorded minute from its first checkpoint, hashing
//                                every tick. Counters: ticks_per_s, x_realtime.
//   BM_SeekLatency/<model>       a recording of POSECAST_BENCH_SEEK_MINUTES minutes (default
//                                60: 216000 ticks, generated once, which takes a while), then
//                                seeks to 200 random ticks (fixed seed). Counters: median_ms,
//                                p90_ms, max_ms (wall), median_cpu_ms, max_cpu_ms (thread CPU
//                                time: what the seek costs on an idle core), restore_cpu_ms
//                                (seeks that land on a checkpoint: restore only),
//                                max_resimulated_ticks (fast-forwarded, the last one
//                                evaluated: Replayer::seek), setup_s (the time to record the
//                                hour).
//
// POSECAST_BENCH_ZSTD_LEVEL sets the recorder's zstd level (default: the recorder's default).
//
//   BM_PaletteHash               hash_palette on 24-matrix palettes. Counter: ns_per_palette.
//
// Rates (ticks_per_s, x_realtime) use CPU time, Google Benchmark's default.
//
// Fox needs the public sample assets (../shared/assets beside the checkout); without them its
// benchmarks report an error and the generated rig still runs.

#include <benchmark/benchmark.h>

#include "posecast/hash.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <time.h>
#include <unistd.h>

#include "posecast/replay/recorder.h"
#include "posecast/replay/recording.h"
#include "posecast/replay/replayer.h"
#include "posecast/rig/model_source.h"
#include "posecast/sim/tick_check.h"
#include "posecast/sim/world.h"

namespace {

using namespace posecast;          // NOLINT: benchmark shorthand
using namespace posecast::sim;     // NOLINT
using namespace posecast::replay;  // NOLINT
using Clock = std::chrono::steady_clock;

constexpr uint32_t kEntities = 100;
constexpr uint32_t kRate = 60;

struct BenchModel {
  std::string label;
  std::string source;
  std::shared_ptr<const Model> model;
};

BenchModel& bench_model(const std::string& label) {
  static BenchModel fox{"Fox", std::string(POSECAST_ASSETS_DIR) + "/Fox.glb", nullptr};
  static BenchModel rig{"GenRig24", "gen-rig:24", nullptr};
  BenchModel& m = label == "Fox" ? fox : rig;
  if (!m.model) {
    Result<Model> loaded = rig::load_model_source(m.source);
    if (loaded) m.model = std::make_shared<const Model>(std::move(loaded.value()));
  }
  return m;
}

ModelLoader loader_for(const BenchModel& m) {
  return [&m](const std::string&) -> Result<std::shared_ptr<const Model>> { return m.model; };
}

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("posecast_bench_" + std::to_string(::getpid()) + "_" + name)).string();
}

MotionSpec one_clip(uint16_t clip, SpeedQ16 speed, int64_t offset_us) {
  MotionSpec m;
  m.count = 1;
  m.clips[0] = ClipWeight{clip, 1.0f};
  m.speed = speed;
  m.start_offset_us = offset_us;
  return m;
}

// Spawns the entities, each playing its own clip at its own offset and speed.
void populate(World& world, const Model& model) {
  const auto clips = static_cast<uint16_t>(model.rigs[0].clips.size());
  for (EntityId e = 0; e < kEntities; ++e) {
    world.submit(0, Command{0, e, SpawnCommand{0, 0, {}}});
    world.submit(0, Command{0, e, PlayCommand{0, one_clip(static_cast<uint16_t>(e % clips),
                                                          kSpeedOne - 20000 + static_cast<SpeedQ16>(e * 400),
                                                          static_cast<int64_t>(e) * 41000)}});
  }
}

// One command per entity per second, staggered over the ticks (submitter 1 + entity % 8).
void submit_commands(World& world, const Model& model, uint64_t tick) {
  const auto clips = static_cast<uint16_t>(model.rigs[0].clips.size());
  for (EntityId e = 0; e < kEntities; ++e) {
    if (tick == 0 || (tick + e * 13) % kRate != 0) continue;
    const uint64_t k = tick / kRate + e;
    const auto clip = static_cast<uint16_t>(k % clips);
    CommandBody body;
    switch (k % 4) {
      case 0: body = CrossfadeCommand{0, one_clip(clip, kSpeedOne, 0), 300000, true}; break;
      case 1: body = SetSpeedCommand{0, kSpeedOne - 15000 + static_cast<SpeedQ16>((k * 7919) % 30000)}; break;
      case 2: {
        MotionSpec m = one_clip(clip, kSpeedOne, 0);
        m.count = 2;
        m.clips[1] = ClipWeight{static_cast<uint16_t>((clip + 1) % clips), 0.5f};
        body = CrossfadeCommand{0, m, 250000, true};
        break;
      }
      default: body = SetBlendWeightsCommand{0, {0.3f, 0.7f, 0, 0}, 2}; break;
    }
    world.submit(1 + e % 8, Command{tick, e, body});
  }
}

// `recorded`: palettes and tick checks, as posecast-server's World when it records; false:
// palettes only (the server's World when not recording: it checks nothing).
std::unique_ptr<World> make_world(const BenchModel& m, bool recorded = true) {
  auto world = std::make_unique<World>(WorldOptions{kRate, 1, /*hash_palettes=*/false, true, /*tick_checks=*/recorded});
  if (!world->add_model(m.model).ok()) return nullptr;
  populate(*world, *m.model);
  return world;
}

// The recorder's configuration: the defaults, with the zstd level from
// POSECAST_BENCH_ZSTD_LEVEL when set (how the default level was chosen).
RecorderConfig bench_config() {
  RecorderConfig config;
  if (const char* env = std::getenv("POSECAST_BENCH_ZSTD_LEVEL")) config.compression_level = std::atoi(env);
  return config;
}

// Records `ticks` ticks to `path`; returns false on any error.
bool record(const BenchModel& m, const std::string& path, uint64_t ticks, RecorderConfig config = bench_config()) {
  std::unique_ptr<World> world = make_world(m);
  if (!world) return false;
  auto rec = Recorder::create(path, *world, {m.source}, config);
  if (!rec) return false;
  for (uint64_t t = 0; t < ticks; ++t) {
    submit_commands(*world, *m.model, t);
    world->tick();
    if (!rec.value()->record_tick(*world)) return false;
  }
  return rec.value()->close().ok();
}

void BM_RecordingSize(benchmark::State& state, const std::string& label) {
  BenchModel& m = bench_model(label);
  if (!m.model) {
    state.SkipWithError((m.source + " could not be loaded (sample assets absent?)").c_str());
    return;
  }
  const std::string path = temp_path("size.pcrec");
  for (auto _ : state) {
    if (!record(m, path, 60 * kRate)) state.SkipWithError("recording failed");
  }
  auto rec = read_recording_file(path);
  std::filesystem::remove(path);
  if (!rec) {
    state.SkipWithError(rec.error().message.c_str());
    return;
  }
  double checkpoint_bytes = 0;
  for (const Checkpoint& c : rec.value()->checkpoints) checkpoint_bytes += static_cast<double>(c.stored_size + kChunkOverhead);
  const double total = static_cast<double>(rec.value()->bytes.size());
  state.counters["KB_per_minute"] = total / 1000.0;
  state.counters["checkpoint_KB_per_minute"] = checkpoint_bytes / 1000.0;
  state.counters["tick_KB_per_minute"] = (total - checkpoint_bytes) / 1000.0;
  state.counters["commands"] = static_cast<double>(rec.value()->commands.size());
}

void BM_RecordingOverhead(benchmark::State& state, const std::string& label) {
  BenchModel& m = bench_model(label);
  if (!m.model) {
    state.SkipWithError((m.source + " could not be loaded (sample assets absent?)").c_str());
    return;
  }
  const std::string path = temp_path("overhead.pcrec");
  const char* order = std::getenv("POSECAST_BENCH_RECORDED_FIRST");
  const bool recorded_first = order != nullptr && std::string(order) == "1";
  double tick_s = 0, record_s = 0, checkpoint_s = 0, flush_s = 0, append_s = 0, plain_tick_s = 0;
  uint64_t ticks = 0;
  for (auto _ : state) {
    std::unique_ptr<World> world = make_world(m);
    // The same minute in a World that hashes nothing and is not recorded (a live server that
    // does not record), ticked in blocks of 10 s alternating with the recorded one: both see
    // the same machine (it drifts by tens of per cent within minutes), and a World is evicted
    // by the other only at block boundaries. (Alternating every tick raised record_us by half.)
    std::unique_ptr<World> plain = make_world(m, false);
    auto rec = Recorder::create(path, *world, {m.source}, bench_config());
    if (!rec) {
      state.SkipWithError(rec.error().message.c_str());
      break;
    }
    constexpr uint64_t kBlock = 10 * kRate;
    const auto run_recorded = [&](uint64_t block) {
      for (uint64_t t = block; t < block + kBlock; ++t) {
        submit_commands(*world, *m.model, t);
        const RecorderStats before = rec.value()->stats();
        const auto a = Clock::now();
        world->tick();
        const auto b = Clock::now();
        if (!rec.value()->record_tick(*world)) state.SkipWithError("record_tick failed");
        const auto c = Clock::now();
        const double recording = std::chrono::duration<double>(c - b).count();
        tick_s += std::chrono::duration<double>(b - a).count();
        record_s += recording;
        const RecorderStats& after = rec.value()->stats();
        if (after.checkpoints != before.checkpoints) {
          checkpoint_s += recording;
        } else if (after.flushes != before.flushes) {
          flush_s += recording;
        } else {
          append_s += recording;
        }
        ++ticks;
      }
    };
    const auto run_plain = [&](uint64_t block) {
      for (uint64_t t = block; t < block + kBlock; ++t) {
        submit_commands(*plain, *m.model, t);
        const auto a = Clock::now();
        plain->tick();
        plain_tick_s += std::chrono::duration<double>(Clock::now() - a).count();
      }
    };
    for (uint64_t block = 0; block < 60 * kRate; block += kBlock) {
      // Which World runs first alternates from block to block (ABBA), so that neither gains
      // from its place (POSECAST_BENCH_RECORDED_FIRST=1: the recorded one always first).
      if (recorded_first || (block / kBlock) % 2 == 0) {
        run_recorded(block);
        run_plain(block);
      } else {
        run_plain(block);
        run_recorded(block);
      }
    }
    (void)rec.value()->close();
  }
  std::filesystem::remove(path);
  state.counters["plain_tick_us"] = plain_tick_s * 1e6 / static_cast<double>(ticks);
  state.counters["recording_cost_pct"] = (tick_s + record_s - plain_tick_s) / plain_tick_s * 100.0;
  state.counters["tick_us"] = tick_s * 1e6 / static_cast<double>(ticks);
  state.counters["record_us"] = record_s * 1e6 / static_cast<double>(ticks);
  state.counters["overhead_pct"] = record_s / tick_s * 100.0;
  state.counters["checkpoint_us"] = checkpoint_s * 1e6 / static_cast<double>(ticks);
  state.counters["flush_us"] = flush_s * 1e6 / static_cast<double>(ticks);
  state.counters["append_us"] = append_s * 1e6 / static_cast<double>(ticks);
}

void BM_ReplaySpeed(benchmark::State& state, const std::string& label) {
  BenchModel& m = bench_model(label);
  if (!m.model) {
    state.SkipWithError((m.source + " could not be loaded (sample assets absent?)").c_str());
    return;
  }
  const std::string path = temp_path("speed.pcrec");
  if (!record(m, path, 60 * kRate)) {
    state.SkipWithError("recording failed");
    return;
  }
  auto rec = read_recording_file(path);
  std::filesystem::remove(path);
  auto replayer = Replayer::create(rec.value(), loader_for(m));
  if (!replayer) {
    state.SkipWithError(replayer.error().message.c_str());
    return;
  }
  uint64_t ticks = 0;
  for (auto _ : state) {
    if (!replayer.value()->seek(0)) state.SkipWithError("seek failed");
    while (!replayer.value()->at_end()) {
      benchmark::DoNotOptimize(replayer.value()->step());
      ++ticks;
    }
  }
  state.counters["ticks_per_s"] = benchmark::Counter(static_cast<double>(ticks), benchmark::Counter::kIsRate);
  state.counters["x_realtime"] = benchmark::Counter(static_cast<double>(ticks) / kRate, benchmark::Counter::kIsRate);
}

void BM_SeekLatency(benchmark::State& state, const std::string& label) {
  BenchModel& m = bench_model(label);
  if (!m.model) {
    state.SkipWithError((m.source + " could not be loaded (sample assets absent?)").c_str());
    return;
  }
  double minutes = 60;
  if (const char* env = std::getenv("POSECAST_BENCH_SEEK_MINUTES")) minutes = std::max(1.0, std::atof(env));
  const auto ticks = static_cast<uint64_t>(minutes * 60 * kRate);
  const std::string path = temp_path("hour.pcrec");
  const auto setup_start = Clock::now();
  if (!record(m, path, ticks)) {
    state.SkipWithError("recording failed");
    return;
  }
  const double setup_s = std::chrono::duration<double>(Clock::now() - setup_start).count();
  auto rec = read_recording_file(path);
  std::filesystem::remove(path);
  auto replayer = Replayer::create(rec.value(), loader_for(m));
  if (!replayer) {
    state.SkipWithError(replayer.error().message.c_str());
    return;
  }
  // Wall time suffers from whatever else the machine runs; thread CPU time is reported beside it.
  std::mt19937_64 rng(42);
  std::vector<double> ms, cpu_ms, resimulated;
  const Recording& recording = *rec.value();
  for (auto _ : state) {
    const uint64_t target = rng() % ticks;
    const auto a = Clock::now();
    const double c0 = thread_cpu_ms();
    if (!replayer.value()->seek(target)) state.SkipWithError("seek failed");
    cpu_ms.push_back(thread_cpu_ms() - c0);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    resimulated.push_back(static_cast<double>(target - recording.checkpoint_at_or_before(target)->tick));
  }
  // Seeking exactly to checkpoints: the restore alone, without re-simulation.
  std::vector<double> restore_ms;
  for (std::size_t i = 1; i < recording.checkpoints.size(); i += std::max<std::size_t>(1, recording.checkpoints.size() / 50)) {
    (void)replayer.value()->seek(0);
    const double c0 = thread_cpu_ms();
    (void)replayer.value()->seek(recording.checkpoints[i].tick);
    restore_ms.push_back(thread_cpu_ms() - c0);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::sort(ms.begin(), ms.end());
  std::sort(cpu_ms.begin(), cpu_ms.end());
  state.counters["median_ms"] = ms[ms.size() / 2];
  state.counters["p90_ms"] = ms[ms.size() * 9 / 10];
  state.counters["max_ms"] = ms.back();
  state.counters["median_cpu_ms"] = cpu_ms[cpu_ms.size() / 2];
  state.counters["max_cpu_ms"] = cpu_ms.back();
  state.counters["restore_cpu_ms"] = median(restore_ms);
  state.counters["max_resimulated_ticks"] = *std::max_element(resimulated.begin(), resimulated.end());
  state.counters["setup_s"] = setup_s;
  state.counters["recording_MB"] = static_cast<double>(rec.value()->bytes.size()) / 1e6;
}

// hash_entity_state alone on the 100 Fox entities of the bench's minute after 2 s of it (one
// layer, some crossfading): the state hash a tick check computes per entity and tick. Counter
// ns_per_entity.
void BM_StateHash(benchmark::State& state) {
  BenchModel& m = bench_model("Fox");
  if (!m.model) {
    state.SkipWithError((m.source + " could not be loaded (sample assets absent?)").c_str());
    return;
  }
  std::unique_ptr<World> world = make_world(m, false);
  for (uint64_t t = 0; t < 2 * kRate; ++t) {
    submit_commands(*world, *m.model, t);
    world->tick();
  }
  std::vector<EntityState> states;
  for (std::size_t i = 0; i < world->entity_count(); ++i) states.push_back(*world->entity_at(i));
  uint64_t sum = 0;
  const double cpu_start_ms = thread_cpu_ms();
  for (auto _ : state) {
    for (const EntityState& s : states) sum += hash_entity_state(s);
  }
  const double cpu_ms = thread_cpu_ms() - cpu_start_ms;
  benchmark::DoNotOptimize(sum);
  state.counters["ns_per_entity"] = cpu_ms * 1e6 / (static_cast<double>(state.iterations()) * static_cast<double>(states.size()));
}

// hash_palette alone on a 24-matrix palette (varied contents, so no two calls hash the same
// bytes): the per-entity hashing every replayed tick pays. Counter ns_per_palette.
void BM_PaletteHash(benchmark::State& state) {
  constexpr std::size_t kPalettes = 256;
  std::vector<std::vector<glm::mat4>> palettes(kPalettes, std::vector<glm::mat4>(24));
  for (std::size_t p = 0; p < kPalettes; ++p)
    for (std::size_t j = 0; j < 24; ++j)
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) palettes[p][j][c][r] = static_cast<float>(p * 97 + j * 5 + c * 4 + r) * 0.01f;
  uint64_t sum = 0;
  const double cpu_start_ms = thread_cpu_ms();
  for (auto _ : state) {
    for (const auto& palette : palettes) sum += posecast::hash_palette(palette);
  }
  const double cpu_ms = thread_cpu_ms() - cpu_start_ms;
  benchmark::DoNotOptimize(sum);
  state.counters["ns_per_palette"] = cpu_ms * 1e6 / (static_cast<double>(state.iterations()) * kPalettes);
}

}  // namespace

BENCHMARK(BM_PaletteHash);
BENCHMARK(BM_StateHash);
BENCHMARK_CAPTURE(BM_RecordingSize, GenRig24, std::string("GenRig24"))->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecordingSize, Fox, std::string("Fox"))->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecordingOverhead, GenRig24, std::string("GenRig24"))->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecordingOverhead, Fox, std::string("Fox"))->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplaySpeed, Fox, std::string("Fox"))->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplaySpeed, GenRig24, std::string("GenRig24"))->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SeekLatency, Fox, std::string("Fox"))->Iterations(200)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
