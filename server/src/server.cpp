#include "posecast/server/server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <variant>

#include <spdlog/spdlog.h>

#include "server_impl.h"

namespace posecast::server {
namespace {

int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status validate(const ServerOptions& o) {
  if (o.tick_rate_hz < 1 || o.tick_rate_hz > 1000) {
    return Error{"server options: tick_rate " + std::to_string(o.tick_rate_hz) + " outside 1..1000"};
  }
  if (o.send_rate_hz < 1 || o.send_rate_hz > o.tick_rate_hz) {
    return Error{"server options: send_rate " + std::to_string(o.send_rate_hz) + " outside 1..tick_rate (" +
                 std::to_string(o.tick_rate_hz) + ")"};
  }
  if (o.max_clients < 1 || o.max_clients > 65535) {
    return Error{"server options: max_clients " + std::to_string(o.max_clients) + " outside 1..65535"};
  }
  if (o.threads < 1 || o.threads > 64) {
    return Error{"server options: threads " + std::to_string(o.threads) + " outside 1..64"};
  }
  if (o.timeout_us <= 0 || o.keepalive_us <= 0 || o.challenge_window_us <= 0 ||
      o.baseline_max_age_us <= 0) {
    return Error{"server options: timeout, keepalive, challenge window and baseline age must be > 0"};
  }
  if (o.hit_history_us < 0 || o.hit_history_us > 10'000'000 || !(o.hit_max_ray_length > 0.0f) ||
      !std::isfinite(o.hit_max_ray_length)) {
    return Error{"server options: hit_history_us must be in 0..10000000 and hit_max_ray_length finite and > 0"};
  }
  if (o.hit_right != HitRight::kNone && o.hit_right != HitRight::kOwners && o.hit_right != HitRight::kAll) {
    return Error{"server options: hit_right is not none, owners or all"};
  }
  if (o.world_hashes && !o.world_palettes) {
    return Error{"server options: world_hashes needs world_palettes (the hashes are palette hashes)"};
  }
  return {};
}

// The manifest entry's source: the tail of the path when it is too long for the wire (the
// client matches by content hash and looks files up by name).
std::string wire_source(const std::string& source) {
  if (source.size() <= protocol::kMaxStringBytes) return source;
  return source.substr(source.size() - protocol::kMaxStringBytes);
}

// Fails when a Welcome listing `manifest` does not fit one datagram.
Status check_manifest_fits(const std::vector<protocol::AssetInfo>& manifest) {
  if (manifest.size() > protocol::kMaxAssets) {
    return Error{"server: " + std::to_string(manifest.size()) + " models; a Welcome lists at most " +
                 std::to_string(protocol::kMaxAssets)};
  }
  protocol::Welcome largest;
  largest.client_id = 0xFFFFFFFFu;
  largest.server_tick = 0xFFFFFFFFu;
  largest.assets = manifest;
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(largest);
  if (!bytes) return Error{"server: welcome: " + bytes.error().message};
  if (bytes->size() > protocol::kMaxPacketBytes) {
    return Error{"server: the asset manifest needs a " + std::to_string(bytes->size()) +
                 "-byte Welcome; at most " + std::to_string(protocol::kMaxPacketBytes) +
                 " fit a datagram (fewer models or shorter paths)"};
  }
  return {};
}

}  // namespace

const char* to_string(DropReason reason) {
  switch (reason) {
    case DropReason::kMalformed: return "malformed";
    case DropReason::kOversized: return "oversized";
    case DropReason::kUnknownSource: return "unknown_source";
    case DropReason::kUnexpected: return "unexpected";
    case DropReason::kHelloTooSmall: return "hello_too_small";
    case DropReason::kBadChallenge: return "bad_challenge";
    case DropReason::kProtocolMismatch: return "protocol_mismatch";
    case DropReason::kServerFull: return "server_full";
    case DropReason::kUnownedCommand: return "unowned_command";
    case DropReason::kStaleCommand: return "stale_command";
    case DropReason::kBadCommand: return "bad_command";
    case DropReason::kBadAck: return "bad_ack";
    case DropReason::kRateLimited: return "rate_limited";
    case DropReason::kRefused: return "refused";
    case DropReason::kCommandTooEarly: return "command_too_early";
  }
  return "?";
}

static_assert(kMessageKindCount == std::variant_size_v<protocol::Message>,
              "a message kind was added: name it in message_kind_name");

const char* message_kind_name(std::size_t kind) {
  static constexpr const char* kNames[kMessageKindCount] = {
      "client_hello",  "server_challenge", "challenge_response", "welcome",
      "snapshot",      "ack",              "client_command",     "entity_spawn",
      "entity_despawn", "disconnect",      "session_status",     "replay_control",
      "hit_query",      "hit_result",      "animation_events",   "owner_state"};
  return kind < kMessageKindCount ? kNames[kind] : "?";
}

Server::Impl::Impl(asio::io_context& io_context, const ServerOptions& opts)
    : io(io_context), options(opts), transport(io_context) {}

Server::Impl::~Impl() = default;

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) { impl_->self = this; }

Server::~Server() {
  if (impl_ && !impl_->closed) shutdown(std::max(impl_->last_now_us, steady_us()));
}

Result<std::unique_ptr<Server>> Server::create(asio::io_context& io, const ServerOptions& options,
                                               std::vector<std::shared_ptr<const Model>> models) {
  if (Status s = validate(options); !s) return s.error();
  if (models.empty()) return Error{"server: no model given"};
  auto impl = std::make_unique<Impl>(io, options);
  sim::WorldOptions world_options;
  world_options.tick_rate_hz = options.tick_rate_hz;
  world_options.threads = options.threads;
  // The server streams poses: palettes and their hashes only for those who read them.
  world_options.palettes = options.world_palettes;
  world_options.hash_palettes = options.world_hashes;
  world_options.tick_checks = options.tick_checks;
  impl->world = std::make_unique<sim::World>(world_options);
  if (Status s = impl->add_models(std::move(models)); !s) return s.error();
  if (Status s = check_manifest_fits(impl->manifest); !s) return s.error();
  if (Status s = impl->open(options); !s) return s.error();
  impl->publish();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Status Server::Impl::add_models(std::vector<std::shared_ptr<const Model>> given) {
  for (std::size_t m = 0; m < given.size(); ++m) {
    const std::shared_ptr<const Model>& model = given[m];
    if (!model) return Error{"server: models[" + std::to_string(m) + "] is null"};
    Result<sim::ModelId> id = world->add_model(model);
    if (!id) return Error{"server: " + id.error().message};
    if (Status s = formats.add_model(*model); !s) return Error{"server: " + s.error().message};
    protocol::AssetInfo info;
    info.model_id = static_cast<uint32_t>(m);
    info.content_hash = model->content_hash;
    info.joint_count = static_cast<uint16_t>(
        std::min<std::size_t>(model->rigs.front().skeleton.joint_count(), 0xFFFF));
    info.source = wire_source(model->source);
    manifest.push_back(std::move(info));
  }
  models = std::move(given);
  return {};
}

Status Server::Impl::open(const ServerOptions& opts) {
  if (Status s = transport.open(opts.listen); !s) return Error{"server: " + s.error().message};
  channel = &transport;
  if (opts.simulator) {
    simulator = std::make_unique<net::NetworkSimulator>(transport, *opts.simulator);
    channel = simulator.get();
  }
  connections = std::make_unique<Connections>(options, *channel, *this, counters, manifest);
  mirror = std::make_unique<PoseMirror>(*world, formats, options.tick_rate_hz, options.attach_recipes,
                                        send_interval_ticks(options.tick_rate_hz, options.send_rate_hz));
  replicator = std::make_unique<Replicator>(options, formats, *mirror, counters);
  return open_hits();
}

net::Endpoint Server::local_endpoint() const { return impl_->transport.local_endpoint(); }
const ServerOptions& Server::options() const { return impl_->options; }

// ---- The session layer's events -----------------------------------------------------------

ClientInfo Server::Impl::info(const ClientConnection& connection, const ClientReplica* replica) const {
  ClientInfo out;
  out.id = connection.id;
  out.endpoint = connection.endpoint;
  out.name = connection.name;
  out.bytes_sent = connection.bytes_sent;
  if (replica != nullptr) {
    out.send_rate_hz = replica->send_rate_hz;
    out.bandwidth_kbit = replica->bandwidth_kbit;
    out.snapshots_sent = replica->snapshots_sent;
    out.newest_acked_tick = replica->newest_acked;
  }
  return out;
}

void Server::Impl::on_connected(ClientConnection& client, int64_t /*now_us*/) {
  const ClientReplica& replica = replicator->add(client);
  if (connected_callback) connected_callback(info(client, &replica));
}

void Server::Impl::on_disconnected(const ClientConnection& client, protocol::DisconnectReason reason) {
  const ClientInfo gone = info(client, replicator->find(client.id));
  mirror->release_owned_by(client.id);
  replicator->remove(client.id);
  shooters.erase(client.id);
  forget_client_commands(client.id);
  if (disconnected_callback) disconnected_callback(gone, reason);
}

bool Server::Impl::on_ack(ClientConnection& client, const protocol::Ack& ack, int64_t now_us) {
  ClientReplica* replica = replicator->find(client.id);
  return replica != nullptr && replicator->handle_ack(*replica, ack, now_us);
}

void Server::Impl::on_replay_control(ClientConnection& client, const protocol::ReplayControl& control) {
  replay_control_callback(info(client, replicator->find(client.id)), control);
}

// ---- Driving ------------------------------------------------------------------------------

void Server::Impl::poll(int64_t now_us) {
  if (closed) return;
  connections->poll(now_us, next_session_tick());
}

void Server::poll_network(int64_t now_us) {
  if (impl_->closed) return;
  impl_->last_now_us = std::max(impl_->last_now_us, now_us);
  impl_->poll(impl_->last_now_us);
  impl_->channel->pump(impl_->last_now_us);
  impl_->publish(/*may_skip=*/true);
}

// The stages in tick order: the network, the API's commands, the World tick (quantising the
// poses the due clients may be sent), the mirror's sync, the API's entity settings, the
// snapshots, the history, the timeouts.
void Server::tick(int64_t now_us) {
  Impl& impl = *impl_;
  if (impl.closed) return;
  const int64_t started = steady_us();
  impl.last_now_us = std::max(impl.last_now_us, now_us);
  const int64_t now = impl.last_now_us;
  impl.poll(now);
  const int64_t polled = steady_us();
  impl.apply_api_ops();
  const uint32_t tick = impl.begin_session_tick();
  impl.apply_client_commands();
  impl.replicator->choose_poses(tick);
  if (impl.hit_history) impl.hit_history->observe_next_tick(impl.mirror->quantizing() ? impl.mirror.get() : nullptr);
  const int64_t world_start = steady_us();
  impl.world->tick();
  const int64_t world_end = steady_us();
  impl.mirror->end_world_tick();
  if (impl.hit_history) impl.hit_history->commit(tick, impl.world_moved);
  impl.retired.clear();
  impl.mirror->sync(tick, impl.world_moved, impl.retired);
  if (impl.hit_history) impl.hit_history->take_held_roots(impl.mirror->records(), tick);
  impl.replicator->retire(impl.retired, tick);
  impl.replicator->queue_events(impl.world->last_tick_events(), tick);
  impl.apply_entity_ops(now);
  impl.replicator->send_snapshots(tick, now, *impl.connections);
  impl.send_owner_states(tick, now);
  impl.replicator->commit(tick);
  impl.connections->check_timeouts(now);
  impl.channel->pump(now);
  ++impl.tick_count;
  ++impl.counters.ticks;
  impl.record_phases(started, polled, world_start, world_end);
  impl.publish(/*may_skip=*/true);
}

uint32_t Server::Impl::begin_session_tick() {
  const uint64_t world_tick = world->tick_index();
  world_moved = tick_count > 0 && world_tick != expected_world_tick;
  const uint32_t tick = next_session_tick();
  session_tick_offset = static_cast<int64_t>(tick) - static_cast<int64_t>(world_tick);
  expected_world_tick = world_tick + 1;
  last_session_tick = tick;
  return tick;
}

uint32_t Server::Impl::next_session_tick() const {
  const uint64_t world_tick = world->tick_index();
  // Live (the World only ever ticks here): the World's tick. Moved by the embedder: one past
  // the last session tick, whatever the World's index now is.
  if (tick_count == 0) return static_cast<uint32_t>(world_tick);
  if (world_tick != expected_world_tick) return last_session_tick + 1;
  return static_cast<uint32_t>(static_cast<int64_t>(world_tick) + session_tick_offset);
}

void Server::Impl::record_phases(int64_t started, int64_t polled, int64_t world_start, int64_t world_end) {
  int64_t build_us = 0, send_us = 0;
  replicator->take_phase_times(build_us, send_us);
  const int64_t duration = steady_us() - started;
  counters.phase_network_us += static_cast<uint64_t>(polled - started);
  counters.phase_world_us += static_cast<uint64_t>(world_end - world_start);
  counters.phase_other_us += static_cast<uint64_t>(
      std::max<int64_t>(0, duration - (polled - started) - (world_end - world_start) - build_us - send_us));
  counters.phase_build_us += static_cast<uint64_t>(build_us);
  counters.phase_send_us += static_cast<uint64_t>(send_us);
  interval_stats.record(duration);
  std::size_t bucket = 0;
  while (bucket < kTickBucketBoundsUs.size() && duration > kTickBucketBoundsUs[bucket]) ++bucket;
  ++counters.tick_buckets[bucket];
  counters.tick_duration_sum_us += static_cast<uint64_t>(std::max<int64_t>(0, duration));
}

void Server::Impl::publish(bool may_skip) {
  counters.clients = static_cast<uint32_t>(connections->clients().size());
  counters.entities = static_cast<uint32_t>(mirror->records().size());
  counters.poses_quantized = mirror->poses_quantized();
  const net::ChannelCounters& io_counters = transport.counters();
  counters.datagrams_in = io_counters.datagrams_received;
  counters.socket_datagrams_out = io_counters.datagrams_sent;
  counters.bytes_in = io_counters.bytes_received;
  counters.pose_encodes = replicator->pose_encodes();
  counters.send_failures = io_counters.send_failures + (simulator ? simulator->counters().send_failures : 0);
  // The tick never waits for a reader (a metrics scrape copying the published values): when
  // the lock is taken, this publication is skipped and the next one carries it.
  std::unique_lock lock(published_mutex, std::defer_lock);
  if (may_skip) {
    if (!lock.try_lock()) return;
  } else {
    lock.lock();
  }
  const double p50 = published.tick_p50_ms, p99 = published.tick_p99_ms, max = published.tick_max_ms;
  published = counters;
  published.tick_p50_ms = p50;
  published.tick_p99_ms = p99;
  published.tick_max_ms = max;
  published_clients.clear();
  // Replicas are kept in connection order, one per connection.
  for (const auto& replica : replicator->clients()) published_clients.push_back(info(*replica->connection, replica.get()));
}

ServerMetrics Server::metrics() const {
  std::lock_guard lock(impl_->published_mutex);
  return impl_->published;
}

std::vector<ClientInfo> Server::clients() const {
  std::lock_guard lock(impl_->published_mutex);
  return impl_->published_clients;
}

ServerMetrics Server::take_interval_metrics() {
  Impl& impl = *impl_;
  std::lock_guard lock(impl.published_mutex);
  impl.published.tick_p50_ms = impl.interval_stats.percentile_ms(50);
  impl.published.tick_p99_ms = impl.interval_stats.percentile_ms(99);
  impl.published.tick_max_ms = impl.interval_stats.max_ms();
  impl.interval_stats.clear();
  return impl.published;
}

void Server::Impl::loop_step() {
  if (!loop_running || closed) return;
  const auto period = std::chrono::nanoseconds(1'000'000'000 / options.tick_rate_hz);
  const auto now = std::chrono::steady_clock::now();
  uint64_t due_ticks = static_cast<uint64_t>((now - loop_start) / period) + 1;
  if (due_ticks > loop_ticks + 5) {
    ticks_skipped += due_ticks - loop_ticks - 1;  // the server cannot keep up: skip, count
    loop_ticks = due_ticks - 1;
  }
  if (loop_ticks < due_ticks) {
    if (before_tick) before_tick(world->tick_index());
    if (!loop_running || closed) return;
    const int64_t now_us = steady_us();
    ++loop_ticks;
    self->tick(now_us);
  }
  if (!loop_running || closed) return;
  timer->expires_at(loop_start + period * static_cast<int64_t>(loop_ticks));
  timer->async_wait([this](const std::error_code& error) {
    if (!error) loop_step();
  });
}

void Server::Impl::arm_readable() {
  if (!loop_running || closed) return;
  transport.wait_readable([this](const std::error_code& error) {
    if (error || !loop_running || closed) return;
    self->poll_network(steady_us());
    arm_readable();
  });
}

void Server::start_loop(std::function<void(uint64_t)> before_tick) {
  Impl& impl = *impl_;
  if (impl.closed || impl.loop_running) return;
  impl.before_tick = std::move(before_tick);
  impl.timer = std::make_unique<asio::steady_timer>(impl.io);
  impl.loop_running = true;
  impl.loop_start = std::chrono::steady_clock::now();
  impl.loop_ticks = 0;
  impl.timer->expires_at(impl.loop_start);
  impl.timer->async_wait([&impl](const std::error_code& error) {
    if (!error) impl.loop_step();
  });
  impl.arm_readable();
}

bool Server::running() const { return impl_->loop_running && !impl_->closed; }

void Server::shutdown(int64_t now_us) {
  Impl& impl = *impl_;
  if (impl.closed) return;
  impl.last_now_us = std::max(impl.last_now_us, now_us);
  while (!impl.connections->clients().empty()) {
    impl.connections->disconnect(impl.connections->clients().size() - 1,
                                 protocol::DisconnectReason::kServerShutdown, "server shutting down",
                                 impl.last_now_us, true);
  }
  // Deliver what the simulator still holds (a shutdown does not wait for simulated latency).
  if (impl.simulator) impl.simulator->pump(std::numeric_limits<int64_t>::max() / 2);
  impl.loop_running = false;
  if (impl.timer) impl.timer->cancel();
  impl.closed = true;
  impl.transport.close();
  impl.publish();
}

sim::World& Server::world() { return *impl_->world; }

const protocol::PoseFormat* Server::pose_format(sim::ModelId model, uint16_t rig) const {
  return impl_->formats.find(model, rig);
}

bool Server::sent_pose(sim::EntityId id, uint32_t tick, protocol::QuantizedPose& out) const {
  const std::size_t i = impl_->mirror->find(id);
  if (i >= impl_->mirror->records().size()) return false;
  const protocol::QuantizedPose* pose = impl_->mirror->records()[i].pose_at(tick);
  if (pose == nullptr) return false;
  out = *pose;
  return true;
}

}  // namespace posecast::server
