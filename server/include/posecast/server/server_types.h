#pragma once
// Plain types of the server's public API: positions, interest, client descriptions, drop
// reasons and metrics.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "posecast/net/endpoint.h"
#include "posecast/sim/animation_state.h"

namespace posecast::server {

// An entity's root position in world units, set by the embedding game (or the scenario driver).
// The server uses it only for interest and priority; it is not part of the pose.
struct Vec3 {
  float x = 0, y = 0, z = 0;
  bool operator==(const Vec3&) const = default;
};

// What one client wants to receive. Subscribed entities come first (highest priority); with a
// radius, every entity within `radius` of `center` is a candidate too, ordered by distance and
// by how long it has waited. With neither (the default), every entity is a candidate, ordered
// by distance to `center` and waiting time.
struct Interest {
  std::vector<sim::EntityId> subscribed;  // at most kMaxSubscribed; duplicates ignored
  bool use_radius = false;
  Vec3 center;
  float radius = 0;  // world units, >= 0
};
inline constexpr std::size_t kMaxSubscribed = 4096;

// Why an inbound datagram (or the command in it) was dropped. Every drop is counted under one.
enum class DropReason : uint8_t {
  kMalformed = 0,      // decode_message failed (random bytes, truncated, bad fields)
  kOversized,          // longer than kMaxPacketBytes
  kUnknownSource,      // a connected-only message (ack, command) from an unconnected address
  kUnexpected,         // a valid message the server never accepts (welcome, snapshot, ...)
  kHelloTooSmall,      // a hello smaller than the challenge it would get (anti-amplification)
  kBadChallenge,       // a challenge response whose token does not verify
  kProtocolMismatch,   // hello with another protocol version (answered with a Disconnect)
  kServerFull,         // hello or response while full (answered with a Disconnect)
  kUnownedCommand,     // a command for an entity the client does not own
  kStaleCommand,       // a command whose sequence is old or repeated
  kBadCommand,         // a command the animator cannot express (unknown op value, bad layer)
  kBadAck,             // an ack naming a tick the server never sent that client
  kRateLimited,        // more than the per-source datagram allowance per second
  kRefused,            // hello or response while new clients are refused (answered with a Disconnect)
  // A command stamped for a tick further ahead than ServerOptions::command_lead_ticks, or
  // more commands waiting for their ticks than kMaxWaitingCommands (docs/client.md, "Prediction").
  kCommandTooEarly,
};
inline constexpr std::size_t kDropReasonCount = 15;
const char* to_string(DropReason reason);

// Datagrams and UDP payload bytes per message kind: index = protocol::Message's alternative
// (message_kind_name() names it; server.cpp checks the count against the protocol).
inline constexpr std::size_t kMessageKindCount = 16;
struct MessageCounts {
  std::array<uint64_t, kMessageKindCount> datagrams{};
  std::array<uint64_t, kMessageKindCount> bytes{};
};
// "client_hello", "snapshot", ... (snake case of the schema's payload names); "?" out of range.
const char* message_kind_name(std::size_t kind);

// Upper bounds, in microseconds, of the tick-duration histogram's buckets (an implicit last
// bucket holds the rest): from a quarter of a millisecond to twice a 60 Hz tick and beyond.
inline constexpr std::array<int64_t, 10> kTickBucketBoundsUs{250,   500,   1'000,  2'000,  4'000,
                                                             8'000, 16'667, 33'333, 66'667, 133'333};
inline constexpr std::size_t kTickBucketCount = kTickBucketBoundsUs.size() + 1;

struct ClientInfo {
  uint32_t id = 0;  // 1, 2, ... in connection order; never reused by one server
  net::Endpoint endpoint;
  std::string name;
  uint32_t send_rate_hz = 0;
  uint32_t bandwidth_kbit = 0;  // 0 = unlimited
  uint64_t bytes_sent = 0;      // wire bytes (payload + 28 per datagram) sent to the client
  uint64_t snapshots_sent = 0;
  uint32_t newest_acked_tick = 0xFFFFFFFFu;
};

// Why a hit query was not answered (kNone: it was).
enum class HitRefusal : uint8_t {
  kNone = 0,
  kBadRay,       // NaN or infinite, zero length or direction, longer than hit_max_ray_length
  kNoRight,      // a client without the right (ServerOptions::hit_right, Server::allow_hit_queries)
  kRateLimited,  // a client firing more than hit_queries_per_second
  kDisabled,     // no history (hit_history_us 0) or no tick run yet
};
inline constexpr uint8_t kHitRefusalCount = 5;
const char* to_string(HitRefusal refusal);

// The answer to a hit query: the first capsule the ray enters, or none.
struct HitResult {
  HitRefusal refusal = HitRefusal::kNone;
  bool hit = false;
  sim::EntityId entity = 0;
  uint16_t joint = 0;     // skin joint index
  float distance = 0.0f;  // along the ray
  int64_t view_us = 0;    // the view time used, after clamping to the history
  bool clamped = false;   // the asked view time lay outside the history
};

struct ServerMetrics {
  uint64_t ticks = 0;
  uint32_t clients = 0;
  uint32_t entities = 0;
  uint64_t datagrams_in = 0;
  uint64_t bytes_in = 0;      // payload bytes
  uint64_t datagrams_out = 0;
  uint64_t bytes_out = 0;     // wire bytes (payload + 28 per datagram)
  uint64_t socket_datagrams_out = 0;  // datagrams the socket took (behind a simulator: delivered ones)
  uint64_t send_failures = 0;
  std::array<uint64_t, kDropReasonCount> drops{};
  uint64_t connections = 0;   // accepted since start
  uint64_t disconnects_client = 0;
  uint64_t timeouts = 0;
  uint64_t kicks = 0;
  uint64_t snapshots = 0;        // snapshots (all parts) sent
  uint64_t snapshot_packets = 0;
  uint64_t records = 0;          // entity records sent
  uint64_t records_from_rest = 0;  // of which coded against the rest pose (no usable baseline)
  uint64_t pose_encodes = 0;       // poses actually encoded (the rest were shared from a cache)
  uint64_t records_deferred = 0;   // candidates left out by the bandwidth budget
  uint64_t spawn_messages = 0;
  uint64_t despawn_messages = 0;
  // Animation events (docs/events.md): emitted by the World while a client was connected,
  // queued for clients (one per client whose interest holds the entity), dropped because a
  // client had kMaxPendingEvents unacknowledged, sent (repeats included) and their datagrams.
  uint64_t events_emitted = 0, events_queued = 0, events_dropped = 0, events_sent = 0, event_messages = 0;
  uint64_t commands_applied = 0;   // client commands queued into the world
  // Client commands stamped with a tick that had already run when they arrived (applied at
  // the arrival tick; docs/client.md, "Prediction"), and OwnerState messages sent.
  uint64_t commands_late = 0;
  uint64_t owner_states_sent = 0;
  uint64_t poses_quantized = 0;
  // Hit queries (API calls and HitQuery messages): answered, of which hits, with their view
  // time clamped into the history; refused by reason (HitRefusal); entities whose bounding
  // sphere a ray met but whose pose had no recipe at the view time (not tested).
  uint64_t hit_queries = 0;
  uint64_t hit_hits = 0;
  uint64_t hit_view_clamped = 0;
  std::array<uint64_t, kHitRefusalCount> hit_refused{};
  uint64_t hit_unevaluable = 0;
  uint64_t hit_history_bytes_per_entity = 0;  // the history's memory per entity
  MessageCounts received;  // decoded inbound datagrams by kind (undecodable ones: drops)
  MessageCounts sent;      // datagrams the socket took, by kind
  // Every tick's duration since start: counts per kTickBucketBoundsUs bucket (not cumulative)
  // and their sum.
  std::array<uint64_t, kTickBucketCount> tick_buckets{};
  uint64_t tick_duration_sum_us = 0;
  // Wall time spent in each part of tick() since start, microseconds: reading the network, the
  // World tick (evaluation + quantisation), building snapshots (parallel), sending them, and
  // the rest (entity sync, history, timeouts). For profiling.
  uint64_t phase_network_us = 0, phase_world_us = 0, phase_build_us = 0, phase_send_us = 0,
           phase_other_us = 0;
  // Tick durations over the last metrics interval (take_interval_metrics), milliseconds.
  double tick_p50_ms = 0;
  double tick_p99_ms = 0;
  double tick_max_ms = 0;
  uint64_t drops_total() const {
    uint64_t n = 0;
    for (uint64_t d : drops) n += d;
    return n;
  }
};

}  // namespace posecast::server
