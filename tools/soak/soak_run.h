#pragma once
// One soak run: an in-process Server on 127.0.0.1 and `clients` NetClient slots behind
// seeded NetworkSimulators, in simulated time. With churn, each slot joins, stays 1.5..6 s,
// then leaves cleanly (60 %) or vanishes without a word (40 %: the server must time it out),
// and rejoins 0.2..1.5 s later; every 2 s one entity is despawned and its id respawned (a new
// generation). Every record a client decodes is compared with the server's quantised palette
// of that tick and entity.
//
// Determinism: time is simulated, the server runs on the soak's thread (threads = 1), and every
// draw (the soak's churn, each client's NetworkSimulator) is seeded and made in call order, so
// the same seed gives the same churn: joins, leaves, vanishes and which sessions must time out
// depend on nothing else. Two things come from the kernel: ephemeral ports (random; no count
// depends on them, since a retired client keeps its port while the server holds a session
// for it: session_ledger.h), and the moment a loopback datagram reaches its receiver's
// queue, normally within the sending call but one read later when the kernel defers the work
// (softirq processing handed to ksoftirqd on a busy machine). Such a datagram is read a frame
// or a tick later in simulated time, which can shift the timing-dependent counts (palettes
// compared, bytes, delays) of a run. Every invariant is per event with a margin of many
// ticks, so it holds either way.

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/result.h"
#include "posecast/server/server_types.h"
#include "soak_options.h"

namespace posecast::soak {

struct SoakReport {
  // Churn, as the clients saw it.
  uint64_t joins = 0, connects = 0, failed_connects = 0, leaves = 0, vanishes = 0;
  uint64_t vanishes_timeout_due = 0;    // sessions of vanished clients whose timeout fell before the end
  uint64_t vanishes_timed_out = 0;      // of those, timed out by the server in time (all, or a violation)
  uint64_t vanishes_before_session = 0; // vanished before the server opened a session for them
  uint64_t dropped_by_server = 0;     // live clients the server disconnected (kicked, timed out)
  uint64_t pending_welcomes = 0;      // retired after answering the challenge, before the Welcome
  uint64_t respawns = 0;
  // Client totals (every client that ever ran).
  uint64_t datagrams_in = 0, datagrams_out = 0, bytes_in = 0, bytes_out = 0;
  uint64_t snapshots_complete = 0, records_decoded = 0, decode_errors = 0, missing_reference = 0;
  uint64_t unknown_entity = 0, stale_records = 0, dropped_malformed = 0, dropped_unexpected = 0;
  uint64_t corrections = 0;
  double connected_seconds = 0;       // summed over clients
  double kbit_in_per_client = 0;      // wire kbit/s received per connected client
  double kbit_out_per_client = 0;
  double max_delay_ms = 0, mean_delay_ms = 0;
  // Palette check.
  uint64_t palettes_compared = 0, palette_mismatches = 0;
  double max_palette_error = 0;       // largest |client - server| matrix element
  // Server.
  server::ServerMetrics server;
  std::vector<std::string> violations;
};

// Runs the soak. Errors only for a setup failure (model, socket); invariant violations are in
// the report.
Result<SoakReport> run_soak(const SoakOptions& options);

}  // namespace posecast::soak
