#include "server_exposition.h"

#include <array>

#include "prometheus_text.h"

namespace posecast::server::fleet {
namespace {

using Type = PrometheusText::Type;

void counter(PrometheusText& out, const char* name, const char* help, uint64_t value) {
  out.family(name, Type::kCounter, help);
  out.sample(name, {}, value);
}

void gauge(PrometheusText& out, const char* name, const char* help, double value) {
  out.family(name, Type::kGauge, help);
  out.sample(name, {}, value);
}

void tick_figures(PrometheusText& out, const ServerMetrics& m) {
  counter(out, "posecast_ticks_total", "Simulation ticks run.", m.ticks);
  out.family("posecast_tick_duration_seconds", Type::kHistogram,
             "Wall time of one server tick (network, world, snapshots), seconds.");
  std::array<double, kTickBucketBoundsUs.size()> bounds{};
  for (std::size_t i = 0; i < bounds.size(); ++i) bounds[i] = static_cast<double>(kTickBucketBoundsUs[i]) / 1e6;
  out.histogram("posecast_tick_duration_seconds", {}, bounds, m.tick_buckets,
                static_cast<double>(m.tick_duration_sum_us) / 1e6);
  gauge(out, "posecast_entities", "Entities in the world.", m.entities);
  gauge(out, "posecast_clients", "Connected clients.", m.clients);
  counter(out, "posecast_client_connections_total", "Clients accepted.", m.connections);
  out.family("posecast_client_disconnects_total", Type::kCounter, "Clients gone, by why (server shutdown not included).");
  out.sample("posecast_client_disconnects_total", {{"reason", "left"}}, m.disconnects_client);
  out.sample("posecast_client_disconnects_total", {{"reason", "timeout"}}, m.timeouts);
  out.sample("posecast_client_disconnects_total", {{"reason", "kicked"}}, m.kicks);
}

// Datagrams and payload bytes per message kind, one direction.
void traffic(PrometheusText& out, const char* datagrams, const char* bytes, const char* direction,
             const MessageCounts& counts) {
  out.family(datagrams, Type::kCounter, std::string("UDP datagrams ") + direction + ", by message kind.");
  for (std::size_t k = 0; k < kMessageKindCount; ++k) out.sample(datagrams, {{"kind", message_kind_name(k)}}, counts.datagrams[k]);
  out.family(bytes, Type::kCounter, std::string("UDP payload bytes ") + direction + ", by message kind.");
  for (std::size_t k = 0; k < kMessageKindCount; ++k) out.sample(bytes, {{"kind", message_kind_name(k)}}, counts.bytes[k]);
}

void traffic_figures(PrometheusText& out, const ServerMetrics& m) {
  traffic(out, "posecast_datagrams_received_total", "posecast_received_bytes_total", "received (decoded)", m.received);
  traffic(out, "posecast_datagrams_sent_total", "posecast_sent_bytes_total", "sent", m.sent);
  counter(out, "posecast_send_failures_total", "Datagrams the socket did not take.", m.send_failures);
  out.family("posecast_datagrams_dropped_total", Type::kCounter,
             "Inbound datagrams dropped (malformed, refused, rate-limited, ...), by reason.");
  for (std::size_t r = 0; r < kDropReasonCount; ++r) {
    out.sample("posecast_datagrams_dropped_total", {{"reason", to_string(static_cast<DropReason>(r))}}, m.drops[r]);
  }
  counter(out, "posecast_commands_accepted_total", "Client commands queued into the world.", m.commands_applied);
  counter(out, "posecast_commands_late_total", "Client commands that arrived after the tick they were stamped for.", m.commands_late);
  counter(out, "posecast_owner_states_sent_total", "OwnerState messages sent to owning clients.", m.owner_states_sent);
  out.family("posecast_commands_refused_total", Type::kCounter, "Client commands refused, by reason.");
  for (DropReason r : {DropReason::kUnownedCommand, DropReason::kStaleCommand, DropReason::kBadCommand,
                       DropReason::kCommandTooEarly}) {
    out.sample("posecast_commands_refused_total", {{"reason", to_string(r)}}, m.drops[static_cast<std::size_t>(r)]);
  }
  counter(out, "posecast_snapshots_sent_total", "Snapshots sent (all parts of one count once).", m.snapshots);
  counter(out, "posecast_snapshot_records_total", "Entity records sent in snapshots.", m.records);
  counter(out, "posecast_snapshot_records_deferred_total", "Entity records left out by bandwidth budgets.",
          m.records_deferred);
  counter(out, "posecast_events_queued_total", "Animation events queued for clients (one per client).",
          m.events_queued);
  counter(out, "posecast_events_dropped_total",
          "Animation events dropped: the client had 256 unacknowledged (it does not acknowledge).",
          m.events_dropped);
  counter(out, "posecast_events_sent_total", "Animation events sent, repeats until acknowledged included.",
          m.events_sent);
}

// Lag-compensated hit queries (docs/hit-queries.md).
void hit_figures(PrometheusText& out, const ServerMetrics& m) {
  counter(out, "posecast_hit_queries_total", "Hit queries answered (API calls and HitQuery messages).", m.hit_queries);
  counter(out, "posecast_hit_query_hits_total", "Hit queries whose ray hit an entity.", m.hit_hits);
  counter(out, "posecast_hit_query_view_clamped_total", "Hit queries whose view time was clamped into the history.",
          m.hit_view_clamped);
  out.family("posecast_hit_queries_refused_total", Type::kCounter, "Hit queries refused, by reason.");
  for (std::size_t r = 1; r < kHitRefusalCount; ++r) {
    out.sample("posecast_hit_queries_refused_total", {{"reason", to_string(static_cast<HitRefusal>(r))}},
               m.hit_refused[r]);
  }
  counter(out, "posecast_hit_query_unevaluable_total",
          "Entities a ray's broad phase passed whose pose had no recipe at the view time.", m.hit_unevaluable);
  gauge(out, "posecast_hit_history_bytes_per_entity", "Memory of the hit history per entity.",
        static_cast<double>(m.hit_history_bytes_per_entity));
}

void client_figures(PrometheusText& out, const std::vector<ClientInfo>& clients) {
  out.family("posecast_client_sent_bytes_total", Type::kCounter,
             "Wire bytes (payload + UDP/IP headers) sent to each connected client.");
  for (const ClientInfo& c : clients) out.sample("posecast_client_sent_bytes_total", {{"client", std::to_string(c.id)}}, c.bytes_sent);
  out.family("posecast_client_snapshots_total", Type::kCounter, "Snapshots sent to each connected client.");
  for (const ClientInfo& c : clients) {
    out.sample("posecast_client_snapshots_total", {{"client", std::to_string(c.id)}}, c.snapshots_sent);
  }
}

void lifecycle_figures(PrometheusText& out, const RecordingCounters& recording, const LifecycleFigures& lifecycle) {
  gauge(out, "posecast_ready", "1 when the server takes new clients (readyz).", lifecycle.ready && !lifecycle.draining ? 1 : 0);
  gauge(out, "posecast_draining", "1 after SIGTERM/SIGINT, while connected clients finish.", lifecycle.draining ? 1 : 0);
  if (recording.active.load(std::memory_order_relaxed)) {
    counter(out, "posecast_recorder_ticks_total", "Ticks recorded.", recording.ticks.load(std::memory_order_relaxed));
    counter(out, "posecast_recorder_bytes_total", "Bytes the recording's writer has written.",
            recording.bytes.load(std::memory_order_relaxed));
    counter(out, "posecast_recorder_flushes_total", "Tick batches handed to the recording's writer.",
            recording.flushes.load(std::memory_order_relaxed));
  }
  if (lifecycle.agones_calls != nullptr) {
    out.family("posecast_agones_requests_total", Type::kCounter, "Agones SDK REST calls, by call and result.");
    for (const auto& [key, value] : *lifecycle.agones_calls) {
      const std::size_t space = key.find(' ');
      out.sample("posecast_agones_requests_total", {{"call", key.substr(0, space)}, {"result", key.substr(space + 1)}},
                 value);
    }
    out.family("posecast_agones_gameserver_state", Type::kGauge, "1 for the GameServer's last read state.");
    if (!lifecycle.agones_state.empty()) {
      out.sample("posecast_agones_gameserver_state", {{"state", lifecycle.agones_state}}, uint64_t{1});
    }
  }
}

}  // namespace

std::string render_metrics(const ServerMetrics& metrics, const std::vector<ClientInfo>& clients,
                           const RecordingCounters& recording, const LifecycleFigures& lifecycle) {
  PrometheusText out;
  tick_figures(out, metrics);
  traffic_figures(out, metrics);
  hit_figures(out, metrics);
  client_figures(out, clients);
  lifecycle_figures(out, recording, lifecycle);
  return out.text();
}

}  // namespace posecast::server::fleet
