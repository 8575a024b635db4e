// bench_client: the network client's CPU per frame and entity (target: decode +
// present + palette <= 2 us per 24-joint entity per frame; docs/performance.md).
//
// A real posecast Server and one NetClient on 127.0.0.1 (real UDP), driven in simulated time:
// 60 Hz ticks, 20 Hz snapshots, client frames at 60 Hz. N generated 24-joint rigs (or Fox)
// walk and run at different phases, with a crossfade every second on a rotating tenth of
// them. Each benchmark iteration is one client frame: NetClient::update (receive, decode the
// snapshots that arrived, advance the playout clock, interpolate every entity and build its
// palette); the server's tick between frames is excluded (PauseTiming). One frame in three
// decodes a snapshot, so the figure is the average over decode and non-decode frames.
// Timing starts once the snapshot buffer is full (steady state; see setup()).
// Counters: ns_per_entity (CPU time per frame / N), entities presented at the end, and the
// share of them shown from render-time recipes at the last frame (recipe_share; the entities
// crossfading show interpolated poses). The *Interp variants turn render-time recipes off
// (PresentSettings::evaluate_recipes): pose interpolation alone.
// The palette upload to the GPU is a glBufferSubData of the same bytes; the viewer's --stats
// frame time includes it (docs/viewer.md).

#include <benchmark/benchmark.h>

#include <asio/io_context.hpp>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "posecast/client/net_client.h"
#include "posecast/client/pose_track.h"
#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"

namespace {

using namespace posecast;

constexpr int64_t kTickUs = 16'667;

struct ClientBench {
  asio::io_context io;
  std::shared_ptr<const Model> model;
  std::unique_ptr<server::Server> server;
  std::unique_ptr<client::NetClient> client;
  std::vector<sim::EntityId> ids;
  int64_t now = 0;
  uint64_t ticks = 0;

  Status setup(const std::string& source, uint32_t entities, bool evaluate_recipes) {
    Result<Model> loaded = rig::load_model_source(source);
    if (!loaded) return loaded.error();
    model = std::make_shared<const Model>(std::move(loaded).value());
    server::ServerOptions options;
    options.listen = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    options.threads = 1;
    options.max_clients = 4;
    Result<std::unique_ptr<server::Server>> created = server::Server::create(io, options, {model});
    if (!created) return created.error();
    server = std::move(created).value();
    const std::size_t clips = model->rigs[0].clips.size();
    for (uint32_t i = 0; i < entities; ++i) {
      const sim::EntityId id = server->spawn(0, 0, server::Vec3{static_cast<float>(i % 32), 0, static_cast<float>(i / 32)});
      sim::MotionSpec motion;
      motion.clips[0].clip = static_cast<uint16_t>((1 + i % 2) % clips);
      motion.start_offset_us = static_cast<int64_t>(i) * 37'000;
      server->play(id, 0, motion);
      ids.push_back(id);
    }
    client::NetClientOptions o;
    o.server = server->local_endpoint();
    o.local = net::Endpoint(asio::ip::make_address_v4("127.0.0.1"), 0);
    o.assets = std::make_shared<client::AssetLibrary>();
    if (Status s = o.assets->add(model); !s) return s;
    o.load_missing_assets = false;
    o.nonce = 7;
    o.channel_arrival_times = false;  // simulated time over a plain socket
    o.present.evaluate_recipes = evaluate_recipes;
    client = std::make_unique<client::NetClient>(io, std::move(o));
    if (Status s = client->connect(now); !s) return s;
    // Warm-up, untimed: connected, every entity spawned, and the snapshot buffer full (its
    // capacity in views: 96 = 4.8 s at 20 Hz), so the pose pool has reached its steady size.
    // Until then every decoded pose takes a fresh pool slot (heap allocation and first-touch
    // page faults): a one-off cost of a session's first seconds, not of a frame. Without this
    // wait, a 1000-entity run (about 125 frames in its one second) measured only that growth.
    const std::size_t full = client::SnapshotBufferSettings{}.capacity;
    while (now < 2'000'000 || client->buffer().size() < full) {
      step(nullptr);
      if (now > 30'000'000) return Error{"the snapshot buffer did not fill in 30 s"};
    }
    if (!client->connected()) return Error{"client did not connect: " + client->error()};
    return {};
  }

  // Advances one client frame (1/60 s): the server tick due, a crossfade now and then, then the
  // client's update, timed when `state` is given.
  void step(benchmark::State* state) {
    now += kTickUs;
    if (state) state->PauseTiming();
    if (ticks % 60 == 0 && !ids.empty()) {
      const std::size_t clips = model->rigs[0].clips.size();
      for (std::size_t i = (ticks / 60) % 10; i < ids.size(); i += 10) {
        sim::MotionSpec motion;
        motion.clips[0].clip = static_cast<uint16_t>((1 + (ticks / 60 + i) % 2) % clips);
        server->crossfade(ids[i], 0, motion, 250'000, false);
      }
    }
    server->tick(now);
    ++ticks;
    if (state) state->ResumeTiming();
    client->update(now);
  }
};

void BM_ClientFrame(benchmark::State& state, const std::string& source, bool evaluate_recipes) {
  const auto entities = static_cast<uint32_t>(state.range(0));
  ClientBench bench;
  if (Status s = bench.setup(source, entities, evaluate_recipes); !s) {
    state.SkipWithError(s.error().message.c_str());
    return;
  }
  for (auto _ : state) bench.step(&state);
  const std::size_t shown = bench.client->entities().size();
  state.counters["entities_presented"] = static_cast<double>(shown);
  state.counters["ns_per_entity"] = benchmark::Counter(
      static_cast<double>(entities), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  const client::ClientStats stats = bench.client->stats(bench.now);
  state.counters["decode_errors"] = static_cast<double>(stats.decode_errors);
  state.counters["recipe_share"] = shown > 0 ? static_cast<double>(stats.from_recipes) / static_cast<double>(shown) : 0.0;
  state.counters["pooled_poses"] = static_cast<double>(bench.client->buffer().pooled_poses());
  if (shown != entities) state.SkipWithError("not every entity was presented");
}

// PoseTrack::present alone for one entity between two decoded records of the "run" clip
// carrying recipes, 20 Hz apart, render times stepping 1/60 s (as in a client frame): the
// presentation part of the frame above, with (evaluate the clip at the render time) and
// without (interpolate the two poses) render-time recipes. Includes LocalToModel and the
// palette, the same in both.
void BM_PresentEntity(benchmark::State& state, const std::string& source, bool evaluate_recipes) {
  auto library = std::make_shared<client::AssetLibrary>();
  if (Status s = library->load(source); !s) {
    state.SkipWithError(s.error().message.c_str());
    return;
  }
  const client::ClientModel& model = library->at(0);
  const Rig& rig = model.model->rigs[0];
  const protocol::PoseFormat& format = *model.formats[0];
  protocol::ClipDictionary& dictionary = *model.dictionaries[0];
  const uint16_t clip = static_cast<uint16_t>(rig.clips.size() > 2 ? 2 : 0);
  client::PoseSample samples[2];
  for (int i = 0; i < 2; ++i) {
    protocol::PoseRecipe recipe;
    recipe.count = 1;
    recipe.inputs[0] = protocol::PoseRecipe::Input{clip, 100'000 + i * 50'000, 1.0f};
    std::vector<Transform> exact(rig.skeleton.node_count());
    samples[i].quantized.reset(format);
    protocol::PoseQuantizer quantizer(format);
    if (!dictionary.evaluate(recipe, exact) || !quantizer.quantize(exact, nullptr, samples[i].quantized)) {
      state.SkipWithError("could not build the samples");
      return;
    }
    samples[i].quantized.recipe = recipe;
    samples[i].locals.resize(rig.skeleton.node_count());
    protocol::dequantize_pose(format, samples[i].quantized, samples[i].locals);
    samples[i].skeleton = &rig.skeleton;
    samples[i].recipe_verified = true;
  }
  const client::SampleWindow window{client::SampleRef{&samples[0], 3, 50'000, true},
                                    client::SampleRef{&samples[1], 6, 100'000, true}, {}};
  client::RecipeSource recipes{rig.clips, format.clip_durations_us, true};
  client::PresentSettings settings;
  settings.evaluate_recipes = evaluate_recipes;
  client::PoseTrack track;
  track.reset(rig.skeleton.node_count(), rig.skeleton.joint_count(), true, sim::max_clip_tracks(rig.clips));
  int64_t r = 50'001;
  for (auto _ : state) {
    benchmark::DoNotOptimize(track.present(rig.skeleton, window, r, settings, recipes));
    r = r + 16'667 < 100'000 ? r + 16'667 : 50'001 + (r + 16'667) % 50'000;
  }
  if (track.recipe() != evaluate_recipes) state.SkipWithError("the recipe path was not taken as configured");
}

BENCHMARK_CAPTURE(BM_PresentEntity, GenRig24Recipe, std::string("gen-rig:24"), true);
BENCHMARK_CAPTURE(BM_PresentEntity, GenRig24Interp, std::string("gen-rig:24"), false);
BENCHMARK_CAPTURE(BM_PresentEntity, FoxRecipe, std::string(POSECAST_ASSETS_DIR "/Fox.glb"), true);
BENCHMARK_CAPTURE(BM_PresentEntity, FoxInterp, std::string(POSECAST_ASSETS_DIR "/Fox.glb"), false);

BENCHMARK_CAPTURE(BM_ClientFrame, GenRig24, std::string("gen-rig:24"), true)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ClientFrame, Fox, std::string(POSECAST_ASSETS_DIR "/Fox.glb"), true)->Arg(100)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ClientFrame, GenRig24Interp, std::string("gen-rig:24"), false)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ClientFrame, FoxInterp, std::string(POSECAST_ASSETS_DIR "/Fox.glb"), false)->Arg(100)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  // The server logs each connection at "info" to stdout, which would break
  // --benchmark_format=json (stdout must carry only the report).
  spdlog::set_level(spdlog::level::warn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
