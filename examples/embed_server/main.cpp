// A game server embedding posecast: ten characters walk, half of them crossfade into a run,
// viewers connect over UDP. Usage: embed_server [seconds] (default 10).
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "posecast/rig/model_source.h"
#include "posecast/server/server.h"

int main(int argc, char** argv) {
  using namespace posecast;
  Result<Model> rig = rig::load_model_source("gen-rig:24");  // or a .glb path
  if (!rig) return std::fprintf(stderr, "%s\n", rig.error().message.c_str()), 1;
  asio::io_context io;
  server::ServerOptions options;  // 127.0.0.1:7777, 60 Hz ticks, 20 Hz snapshots
  options.listen = net::Endpoint(asio::ip::make_address("127.0.0.1"), 0);
  auto created = server::Server::create(io, options, {std::make_shared<const Model>(std::move(rig).value())});
  if (!created) return std::fprintf(stderr, "%s\n", created.error().message.c_str()), 1;
  server::Server& server = *created.value();

  sim::MotionSpec walk, run;  // clip 1 = walk, 2 = run in the generated rig
  walk.clips[0] = {1, 1.0f};
  run.clips[0] = {2, 1.0f};
  for (int i = 0; i < 10; ++i) {
    const sim::EntityId id = server.spawn(0, 0, {2.0f * static_cast<float>(i), 0, 0});
    server.play(id, 0, walk);
    if (i % 2 == 1) server.crossfade(id, 0, run, 500'000);  // queued: applied at the next tick
  }
  server.on_client_connected([](const server::ClientInfo& c) { std::printf("viewer %u joined\n", c.id); });

  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  asio::steady_timer stop(io, std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  stop.async_wait([&](std::error_code) {
    server.shutdown(std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now().time_since_epoch()).count());
  });
  std::printf("listening %s\n", net::to_string(server.local_endpoint()).c_str());
  server.start_loop();  // fixed 60 Hz ticks on this io_context
  io.run();
  return 0;
}
