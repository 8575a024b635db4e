#pragma once
// Options of a Server (the posecast-server program fills them from its command line and config
// file: server_config.h).

#include <array>
#include <cstdint>
#include <optional>

#include "posecast/net/endpoint.h"
#include "posecast/net/network_simulator.h"

namespace posecast::server {

// Which clients may fire hit queries without an explicit Server::allow_hit_queries call (which
// overrides it for that client, either way).
enum class HitRight : uint8_t {
  kNone,    // none: only clients the embedder allows
  kOwners,  // clients that own at least one entity when they fire (a grant, --grant)
  kAll,     // every connected client
};

struct ServerOptions {
  net::Endpoint listen{asio::ip::make_address_v4("127.0.0.1"), 7777};  // port 0: any free port
  uint32_t tick_rate_hz = 60;     // 1..1000
  uint32_t send_rate_hz = 20;     // default per client, 1..tick_rate_hz
  uint32_t max_clients = 64;      // 1..65535
  // true (default): client k sends on phase k mod interval, spreading the snapshot work over
  // the interval, which bounds the peak tick (10,000 Fox, 64 clients at 20 Hz: tick p99 13 ms
  // spread, 22.6 ms shared; docs/server.md). false: every client of a send rate gets its
  // snapshot on the same ticks, so each pose is quantised once for all of them (less
  // quantisation when clients watch the same entities, a higher peak).
  bool spread_send_phases = true;
  // Attach a PoseRecipe (clips, times, weights; a crossfade's two motions and fade state) to the
  // poses of entities whose pose is layer 0's alone (one full-weight override layer, no mask;
  // a fade from a frozen pose when its chain is known, sim::FrozenStage): the codec then
  // predicts them from the shared clips (docs/codec.md, "Clip-dictionary prediction"): far
  // fewer bytes, about 2-3x the encoding time.
  bool attach_recipes = true;
  uint32_t bandwidth_kbit = 0;    // default budget per client including UDP/IP headers; 0 = none
  unsigned threads = 2;           // evaluation threads (the ticking thread is one of them)
  // true: the World also computes every entity's skinning palette each tick (world().palette()):
  // for an embedder that reads them, and for recording or serving a recording (their world
  // hashes are palette hashes; posecast-server's --record and --replay set it). false
  // (default): the server streams local poses and needs no palette, so the tick skips them.
  bool world_palettes = false;
  // true (needs world_palettes): the World also hashes every palette, in its parallel
  // evaluation pass (sim::WorldOptions::hash_palettes). A Recorder and a ReplayDriver read
  // those hashes instead of hashing every palette themselves on the ticking thread
  // (posecast-server's --record and --replay set it). About 41-44 ns of CPU per 24-joint
  // palette either way (bench_replay BM_PaletteHash).
  bool world_hashes = false;
  // true: the World computes a tick check each tick (sim::WorldOptions::tick_checks: every
  // entity's state hash and a rotating sixteenth of the palette hashes, in its parallel pass),
  // which a Recorder records and a ReplayDriver verifies (posecast-server's --record and
  // --replay set it). Implies world_palettes' palettes.
  bool tick_checks = false;
  int64_t timeout_us = 5'000'000;     // no datagram from a client for this long: dropped
  int64_t keepalive_us = 1'000'000;   // the server sends each client something at least this often
  int64_t challenge_window_us = 10'000'000;  // cookie lifetime: one to two windows
  int64_t baseline_max_age_us = 1'000'000;   // older acked snapshots are not used as baselines
  uint32_t max_datagrams_per_client_per_second = 2000;  // beyond: dropped (kRateLimited)
  // A predicting client stamps each command with the tick it applied it at (docs/client.md,
  // "Prediction"); one stamped further ahead of the server's tick than this is refused
  // (DropReason::kCommandTooEarly).
  int64_t command_lead_us = 1'000'000;
  uint32_t malformed_limit_per_second = 200;  // a connected client beyond it is disconnected
  // Cookie key; unset: a random key at creation (tests set it to get reproducible tokens).
  std::optional<std::array<uint8_t, 16>> cookie_key;
  // Lag-compensated hit queries (docs/hit-queries.md): how far back the per-entity history
  // reaches (0: no history, every query refused), the longest ray accepted, and how many
  // queries a second one client may fire (beyond: refused and counted), and which clients
  // have the right to fire before the embedder says otherwise.
  int64_t hit_history_us = 1'000'000;
  float hit_max_ray_length = 1000.0f;
  uint32_t hit_queries_per_second = 20;
  HitRight hit_right = HitRight::kNone;
  // When set, the server's socket sits behind a NetworkSimulator with these conditions.
  std::optional<net::SimulatorConfig> simulator;
};

}  // namespace posecast::server
