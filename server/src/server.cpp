#include "posecast/server/server.h"

#include <algorithm>
#include <chrono>
#include <limits>

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
  }
  return "?";
}

Server::Impl::Impl(asio::io_context& io_context, const ServerOptions& opts)
    : io(io_context),
      options(opts),
      transport(io_context),
      cookie(opts.cookie_key ? *opts.cookie_key : random_cookie_key(), opts.challenge_window_us) {
  receive_buffer.resize(net::kReceiveBufferBytes);
}

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
  impl->world = std::make_unique<sim::World>(world_options);

  for (std::size_t m = 0; m < models.size(); ++m) {
    const std::shared_ptr<const Model>& model = models[m];
    if (!model) return Error{"server: models[" + std::to_string(m) + "] is null"};
    Result<sim::ModelId> id = impl->world->add_model(model);
    if (!id) return Error{"server: " + id.error().message};
    impl->format_of.emplace_back();
    for (std::size_t r = 0; r < model->rigs.size(); ++r) {
      const Rig& rig = model->rigs[r];
      Result<protocol::PoseFormat> format = protocol::build_pose_format(rig.skeleton, rig.clips);
      if (!format) {
        return Error{"server: model '" + model->source + "' rigs[" + std::to_string(r) +
                     "]: pose format: " + format.error().message};
      }
      impl->format_of.back().push_back(static_cast<uint32_t>(impl->formats.size()));
      impl->format_rig.push_back(&rig);
      impl->formats.push_back(std::make_shared<const protocol::PoseFormat>(std::move(format).value()));
    }
    protocol::AssetInfo info;
    info.model_id = static_cast<uint32_t>(m);
    info.content_hash = model->content_hash;
    info.joint_count = static_cast<uint16_t>(
        std::min<std::size_t>(model->rigs.front().skeleton.joint_count(), 0xFFFF));
    info.source = wire_source(model->source);
    impl->manifest.push_back(std::move(info));
  }
  impl->models = std::move(models);
  if (impl->manifest.size() > protocol::kMaxAssets) {
    return Error{"server: " + std::to_string(impl->manifest.size()) + " models; a Welcome lists at most " +
                 std::to_string(protocol::kMaxAssets)};
  }
  {
    protocol::Welcome largest;
    largest.client_id = 0xFFFFFFFFu;
    largest.server_tick = 0xFFFFFFFFu;
    largest.assets = impl->manifest;
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(largest);
    if (!bytes) return Error{"server: welcome: " + bytes.error().message};
    if (bytes->size() > protocol::kMaxPacketBytes) {
      return Error{"server: the asset manifest needs a " + std::to_string(bytes->size()) +
                   "-byte Welcome; at most " + std::to_string(protocol::kMaxPacketBytes) +
                   " fit a datagram (fewer models or shorter paths)"};
    }
    const protocol::ServerChallenge challenge{~uint64_t{0}, ~uint64_t{0}};
    Result<std::vector<uint8_t>> challenge_bytes = protocol::encode_message(challenge);
    if (!challenge_bytes) return Error{"server: challenge: " + challenge_bytes.error().message};
    impl->challenge_bytes = challenge_bytes->size();
  }

  impl->quantizers.resize(impl->world->threads());
  for (auto& per_worker : impl->quantizers) {
    for (const auto& format : impl->formats) {
      per_worker.push_back(std::make_unique<protocol::PoseQuantizer>(*format));
    }
  }

  if (Status s = impl->transport.open(options.listen); !s) return Error{"server: " + s.error().message};
  impl->channel = &impl->transport;
  if (options.simulator) {
    impl->simulator = std::make_unique<net::NetworkSimulator>(impl->transport, *options.simulator);
    impl->channel = impl->simulator.get();
  }
  impl->publish();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

net::Endpoint Server::local_endpoint() const { return impl_->transport.local_endpoint(); }
const ServerOptions& Server::options() const { return impl_->options; }

// ---- Embedding API ------------------------------------------------------------------------

namespace {
void queue(Server::Impl& impl, ApiOp op) {
  std::lock_guard lock(impl.api_mutex);
  impl.api_ops.push_back(std::move(op));
}
}  // namespace

sim::EntityId Server::spawn(sim::ModelId model, uint16_t rig, Vec3 position) {
  const sim::EntityId id = impl_->next_api_id.fetch_add(1);
  std::lock_guard lock(impl_->api_mutex);
  impl_->api_ops.push_back(sim::Command{0, id, sim::SpawnCommand{model, rig}});
  impl_->api_ops.push_back(OpSetPosition{id, position});
  return id;
}

void Server::despawn(sim::EntityId id) { queue(*impl_, sim::Command{0, id, sim::DespawnCommand{}}); }

void Server::play(sim::EntityId id, uint8_t layer, const sim::MotionSpec& motion) {
  queue(*impl_, sim::Command{0, id, sim::PlayCommand{layer, motion}});
}

void Server::crossfade(sim::EntityId id, uint8_t layer, const sim::MotionSpec& motion,
                       int64_t duration_us, bool sync_phase) {
  queue(*impl_, sim::Command{0, id, sim::CrossfadeCommand{layer, motion, duration_us, sync_phase}});
}

void Server::set_layer_weight(sim::EntityId id, uint8_t layer, float weight) {
  queue(*impl_, sim::Command{0, id, sim::SetLayerWeightCommand{layer, weight}});
}

void Server::set_blend_weights(sim::EntityId id, uint8_t layer, std::span<const float> weights) {
  sim::SetBlendWeightsCommand command;
  command.layer = layer;
  command.count = static_cast<uint8_t>(std::min<std::size_t>(weights.size(), sim::kMaxBlendClips + 1));
  for (std::size_t i = 0; i < weights.size() && i < command.weights.size(); ++i) command.weights[i] = weights[i];
  queue(*impl_, sim::Command{0, id, command});
}

void Server::set_speed(sim::EntityId id, uint8_t layer, sim::SpeedQ16 speed) {
  queue(*impl_, sim::Command{0, id, sim::SetSpeedCommand{layer, speed}});
}

void Server::submit(sim::Command command) { queue(*impl_, std::move(command)); }
void Server::set_position(sim::EntityId id, Vec3 position) { queue(*impl_, OpSetPosition{id, position}); }
void Server::grant_ownership(uint32_t client_id, sim::EntityId id) { queue(*impl_, OpGrant{client_id, id}); }
void Server::revoke_ownership(sim::EntityId id) { queue(*impl_, OpRevoke{id}); }
void Server::set_interest(uint32_t client_id, Interest interest) {
  queue(*impl_, OpInterest{client_id, std::make_shared<Interest>(std::move(interest))});
}
void Server::set_client_bandwidth(uint32_t client_id, uint32_t kbit) { queue(*impl_, OpBandwidth{client_id, kbit}); }
void Server::set_client_send_rate(uint32_t client_id, uint32_t hz) { queue(*impl_, OpSendRate{client_id, hz}); }
void Server::kick(uint32_t client_id, std::string reason) { queue(*impl_, OpKick{client_id, std::move(reason)}); }

void Server::on_client_connected(std::function<void(const ClientInfo&)> callback) {
  impl_->connected_callback = std::move(callback);
}
void Server::on_client_disconnected(
    std::function<void(const ClientInfo&, protocol::DisconnectReason)> callback) {
  impl_->disconnected_callback = std::move(callback);
}
void Server::on_replay_control(
    std::function<void(const ClientInfo&, const protocol::ReplayControl&)> callback) {
  impl_->replay_control_callback = std::move(callback);
}
void Server::set_replay_status(uint32_t first_tick, uint32_t last_tick, uint32_t tick, int32_t speed_q16) {
  protocol::SessionStatus& status = impl_->replay_status;
  // A change of position or speed goes out with the next snapshots, like an ownership change.
  // Playing moves the tick by at most ceil(speed) per tick: a move otherwise (a seek, a step
  // while paused) is a change too.
  const uint32_t playing_advance = static_cast<uint32_t>((static_cast<int64_t>(speed_q16) + 0xFFFF) >> 16);
  const bool jumped = tick != status.replay_tick &&
                      (speed_q16 <= 0 || tick < status.replay_tick || tick - status.replay_tick > playing_advance);
  if (status.replay_first_tick != first_tick || status.replay_last_tick != last_tick ||
      status.replay_speed_q16 != speed_q16 || jumped) {
    ++impl_->replay_status_version;
  }
  status.replay_first_tick = first_tick;
  status.replay_last_tick = last_tick;
  status.replay_tick = tick;
  status.replay_speed_q16 = speed_q16;
}
void Server::on_pose_quantized(std::function<void(uint32_t, sim::EntityId, uint16_t,
                                                  const protocol::QuantizedPose&)> callback) {
  impl_->pose_callback = std::move(callback);
}

// Animator commands go to the World before the tick; everything that names an entity by its
// server record (positions, ownership) is applied after the tick's entity sync, so a spawn and
// a set_position queued together both take effect.
void Server::Impl::apply_api_ops(int64_t now_us) {
  {
    std::lock_guard lock(api_mutex);
    api_ops_taken.swap(api_ops);
  }
  const uint64_t next_tick = world->tick_index();
  for (ApiOp& op : api_ops_taken) {
    if (auto* command = std::get_if<sim::Command>(&op)) {
      command->tick = next_tick;
      world->submit(kApiSubmitter, std::move(*command));
    }
  }
  (void)now_us;
}

namespace {

void apply_interest(ClientSession& client, Interest interest) {
  if (interest.subscribed.size() > kMaxSubscribed) interest.subscribed.resize(kMaxSubscribed);
  if (!(interest.radius >= 0)) interest.radius = 0;  // also NaN
  client.subscribed_sorted = interest.subscribed;
  std::sort(client.subscribed_sorted.begin(), client.subscribed_sorted.end());
  client.subscribed_sorted.erase(
      std::unique(client.subscribed_sorted.begin(), client.subscribed_sorted.end()),
      client.subscribed_sorted.end());
  client.interest = std::move(interest);
}

uint32_t interval_ticks(uint32_t tick_rate, uint32_t send_rate) {
  send_rate = std::clamp<uint32_t>(send_rate, 1, tick_rate);
  // Rounded, so 20 Hz at 60 Hz is every 3rd tick and every 20 Hz client shares those ticks.
  return std::max<uint32_t>(1, (tick_rate + send_rate / 2) / send_rate);
}

}  // namespace

void Server::Impl::apply_entity_ops(int64_t now_us) {
  Impl& impl = *this;
  for (ApiOp& op : impl.api_ops_taken) {
    if (auto* p = std::get_if<OpSetPosition>(&op)) {
      const std::size_t i = impl.find_entity_index(p->id);
      if (i < impl.entities.size()) impl.entities[i].position = p->position;
    } else if (auto* g = std::get_if<OpGrant>(&op)) {
      const std::size_t i = impl.find_entity_index(g->id);
      if (i < impl.entities.size()) impl.entities[i].owner = g->client;
      ++impl.ownership_version;
    } else if (auto* r = std::get_if<OpRevoke>(&op)) {
      const std::size_t i = impl.find_entity_index(r->id);
      if (i < impl.entities.size()) impl.entities[i].owner = 0;
      ++impl.ownership_version;
    } else if (auto* in = std::get_if<OpInterest>(&op)) {
      if (ClientSession* c = impl.find_client(in->client)) apply_interest(*c, std::move(*in->interest));
    } else if (auto* b = std::get_if<OpBandwidth>(&op)) {
      if (ClientSession* c = impl.find_client(b->client)) c->bandwidth_kbit = b->kbit;
    } else if (auto* s = std::get_if<OpSendRate>(&op)) {
      if (ClientSession* c = impl.find_client(s->client)) {
        c->send_interval_ticks = interval_ticks(impl.options.tick_rate_hz, s->hz);
        c->send_phase = impl.options.spread_send_phases ? c->id % c->send_interval_ticks : 0;
        c->send_rate_hz = std::max<uint32_t>(1, impl.options.tick_rate_hz / c->send_interval_ticks);
      }
    } else if (auto* k = std::get_if<OpKick>(&op)) {
      for (std::size_t c = 0; c < impl.clients.size(); ++c) {
        if (impl.clients[c]->id == k->client) {
          ++impl.counters.kicks;
          impl.disconnect(c, protocol::DisconnectReason::kKicked, k->reason, now_us, true);
          break;
        }
      }
    }
  }
  impl.api_ops_taken.clear();
}

uint32_t send_interval_ticks(uint32_t tick_rate_hz, uint32_t send_rate_hz) {
  return interval_ticks(tick_rate_hz, send_rate_hz);
}

// ---- Driving ------------------------------------------------------------------------------

void Server::poll_network(int64_t now_us) {
  if (impl_->closed) return;
  impl_->last_now_us = std::max(impl_->last_now_us, now_us);
  impl_->poll(impl_->last_now_us);
  impl_->channel->pump(impl_->last_now_us);
  impl_->publish();
}

void Server::tick(int64_t now_us) {
  Impl& impl = *impl_;
  if (impl.closed) return;
  const int64_t started = steady_us();
  impl.last_now_us = std::max(impl.last_now_us, now_us);
  const int64_t now = impl.last_now_us;
  impl.poll(now);
  const int64_t polled = steady_us();
  impl.apply_api_ops(now);
  const uint64_t world_tick = impl.world->tick_index();
  impl.world_moved = impl.tick_count > 0 && world_tick != impl.expected_world_tick;
  const uint32_t tick = impl.next_session_tick();
  impl.session_tick_offset = static_cast<int64_t>(tick) - static_cast<int64_t>(world_tick);
  impl.expected_world_tick = world_tick + 1;
  impl.last_session_tick = tick;
  impl.prepare_quantization(tick);
  const int64_t world_start = steady_us();
  impl.world->tick();
  const int64_t world_end = steady_us();
  impl.world->set_local_pose_observer(nullptr, nullptr);
  impl.sync_entities(tick);
  impl.apply_entity_ops(now);
  impl.send_snapshots(tick, now);
  impl.commit_history(tick);
  impl.check_timeouts(now);
  impl.channel->pump(now);
  ++impl.tick_count;
  ++impl.counters.ticks;
  const int64_t finished = steady_us();
  const int64_t duration = finished - started;
  impl.counters.phase_network_us += static_cast<uint64_t>(polled - started);
  impl.counters.phase_world_us += static_cast<uint64_t>(world_end - world_start);
  impl.counters.phase_other_us += static_cast<uint64_t>(
      std::max<int64_t>(0, duration - (polled - started) - (world_end - world_start) - impl.last_build_us - impl.last_send_us));
  impl.counters.phase_build_us += static_cast<uint64_t>(impl.last_build_us);
  impl.counters.phase_send_us += static_cast<uint64_t>(impl.last_send_us);
  impl.last_build_us = impl.last_send_us = 0;
  impl.interval_stats.record(duration);
  impl.publish();
}

uint32_t Server::Impl::next_session_tick() const {
  const uint64_t world_tick = world->tick_index();
  // Live (the World only ever ticks here): the World's tick. Moved by the embedder: one past
  // the last session tick, whatever the World's index now is.
  if (tick_count == 0) return static_cast<uint32_t>(world_tick);
  if (world_tick != expected_world_tick) return last_session_tick + 1;
  return static_cast<uint32_t>(static_cast<int64_t>(world_tick) + session_tick_offset);
}

void Server::Impl::publish() {
  counters.clients = static_cast<uint32_t>(clients.size());
  counters.entities = static_cast<uint32_t>(entities.size());
  const net::ChannelCounters& io_counters = transport.counters();
  counters.datagrams_in = io_counters.datagrams_received;
  counters.socket_datagrams_out = io_counters.datagrams_sent;
  counters.bytes_in = io_counters.bytes_received;
  counters.pose_encodes = pose_encodes.load(std::memory_order_relaxed);
  counters.send_failures = io_counters.send_failures + (simulator ? simulator->counters().send_failures : 0);
  std::lock_guard lock(published_mutex);
  const double p50 = published.tick_p50_ms, p99 = published.tick_p99_ms, max = published.tick_max_ms;
  published = counters;
  published.tick_p50_ms = p50;
  published.tick_p99_ms = p99;
  published.tick_max_ms = max;
  published_clients.clear();
  for (const auto& client : clients) published_clients.push_back(client->info());
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
  while (!impl.clients.empty()) {
    impl.disconnect(impl.clients.size() - 1, protocol::DisconnectReason::kServerShutdown,
                    "server shutting down", impl.last_now_us, true);
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
  if (model >= impl_->format_of.size() || rig >= impl_->format_of[model].size()) return nullptr;
  return impl_->formats[impl_->format_of[model][rig]].get();
}

bool Server::sent_pose(sim::EntityId id, uint32_t tick, protocol::QuantizedPose& out) const {
  const std::size_t i = impl_->find_entity_index(id);
  if (i >= impl_->entities.size()) return false;
  const protocol::QuantizedPose* pose = impl_->entities[i].pose_at(tick);
  if (pose == nullptr) return false;
  out = *pose;
  return true;
}

}  // namespace posecast::server
