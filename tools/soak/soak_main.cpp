// posecast-soak: see soak_run.h and docs/client.md ("Soak").

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "soak_options.h"
#include "soak_run.h"

namespace {

void print_text(const posecast::soak::SoakOptions& o, const posecast::soak::SoakReport& r) {
  const auto& m = r.server;
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("posecast-soak: %u clients, %.1f s, loss %.1f%%, latency %.1f ms, jitter %.1f ms, reorder %.1f%%, seed %llu, %u entities of %s\n",
              o.clients, o.duration_s, o.loss_percent, o.latency_ms, o.jitter_ms, o.reorder_percent,
              u(o.seed), o.entities, o.model.c_str());
  std::printf("churn: joins %llu, connected %llu, failed %llu, left %llu, vanished %llu, dropped by server %llu, entity respawns %llu\n",
              u(r.joins), u(r.connects), u(r.failed_connects), u(r.leaves), u(r.vanishes), u(r.dropped_by_server),
              u(r.respawns));
  std::printf("vanished: %llu timed out in time of %llu due before the end, %llu before the server opened a session\n",
              u(r.vanishes_timed_out), u(r.vanishes_timeout_due), u(r.vanishes_before_session));
  std::printf("server: connections %llu, clean disconnects %llu, timeouts %llu, snapshots %llu (%llu packets), records %llu, spawns %llu, despawns %llu, bytes out %llu, drops %llu\n",
              u(m.connections), u(m.disconnects_client), u(m.timeouts), u(m.snapshots), u(m.snapshot_packets),
              u(m.records), u(m.spawn_messages), u(m.despawn_messages), u(m.bytes_out), u(m.drops_total()));
  std::string drops;
  for (std::size_t i = 0; i < m.drops.size(); ++i) {
    if (m.drops[i] == 0) continue;
    drops += std::string(drops.empty() ? "" : ", ") +
             posecast::server::to_string(static_cast<posecast::server::DropReason>(i)) + " " +
             std::to_string(m.drops[i]);
  }
  std::printf("server drops: %s\n", drops.empty() ? "none" : drops.c_str());
  std::printf("clients: datagrams in %llu out %llu, bytes in %llu out %llu, %.1f kbit/s in and %.1f kbit/s out per connected client\n",
              u(r.datagrams_in), u(r.datagrams_out), u(r.bytes_in), u(r.bytes_out), r.kbit_in_per_client,
              r.kbit_out_per_client);
  std::printf("decoding: snapshots %llu, records %llu, decode errors %llu, missing references %llu, records before their spawn %llu, stale records %llu, corrections %llu\n",
              u(r.snapshots_complete), u(r.records_decoded), u(r.decode_errors), u(r.missing_reference),
              u(r.unknown_entity), u(r.stale_records), u(r.corrections));
  std::printf("palettes: compared %llu, mismatched %llu, max palette error vs server %g\n",
              u(r.palettes_compared), u(r.palette_mismatches), r.max_palette_error);
  std::printf("delay: mean %.1f ms, max %.1f ms (after 3 s connected)\n", r.mean_delay_ms, r.max_delay_ms);
  if (r.violations.empty()) {
    std::printf("result: OK\n");
  } else {
    std::printf("result: %zu invariant violation(s)\n", r.violations.size());
    for (const std::string& v : r.violations) std::printf("  - %s\n", v.c_str());
  }
}

void print_json(const posecast::soak::SoakOptions& o, const posecast::soak::SoakReport& r) {
  const auto& m = r.server;
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("{\"clients\":%u,\"duration_s\":%.3f,\"loss_percent\":%.3f,\"latency_ms\":%.3f,\"jitter_ms\":%.3f,"
              "\"seed\":%llu,\"entities\":%u,\"joins\":%llu,\"connections\":%llu,\"server_connections\":%llu,"
              "\"leaves\":%llu,\"vanishes\":%llu,\"vanishes_timeout_due\":%llu,\"vanishes_timed_out\":%llu,\"timeouts\":%llu,\"failed_connects\":%llu,\"decode_errors\":%llu,"
              "\"missing_references\":%llu,\"palettes_compared\":%llu,\"palette_mismatches\":%llu,"
              "\"max_palette_error\":%g,\"bytes_in\":%llu,\"bytes_out\":%llu,\"kbit_per_s_per_client\":%.3f,"
              "\"mean_delay_ms\":%.3f,\"max_delay_ms\":%.3f,\"violations\":%zu}\n",
              o.clients, o.duration_s, o.loss_percent, o.latency_ms, o.jitter_ms, u(o.seed), o.entities,
              u(r.joins), u(r.connects), u(m.connections), u(r.leaves), u(r.vanishes), u(r.vanishes_timeout_due),
              u(r.vanishes_timed_out), u(m.timeouts),
              u(r.failed_connects), u(r.decode_errors), u(r.missing_reference), u(r.palettes_compared),
              u(r.palette_mismatches), r.max_palette_error, u(r.bytes_in), u(r.bytes_out), r.kbit_in_per_client,
              r.mean_delay_ms, r.max_delay_ms, r.violations.size());
  for (const std::string& v : r.violations) std::fprintf(stderr, "violation: %s\n", v.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  posecast::soak::SoakOptions options;
  if (std::optional<int> exit = posecast::soak::parse_soak_options(args, options)) return *exit;
  posecast::Result<posecast::soak::SoakReport> report = posecast::soak::run_soak(options);
  if (!report) {
    std::fprintf(stderr, "posecast-soak: %s\n", report.error().message.c_str());
    return 2;
  }
  if (options.json) {
    print_json(options, report.value());
  } else {
    print_text(options, report.value());
  }
  return report->violations.empty() ? 0 : 1;
}
