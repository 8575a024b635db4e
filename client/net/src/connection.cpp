#include "posecast/client/connection.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <variant>

namespace posecast::client {
namespace {

using protocol::kNoTick;
constexpr int64_t kPendingAck = std::numeric_limits<int64_t>::min();

// The largest ServerChallenge the server can answer with: the hello is padded to it.
std::size_t challenge_size() {
  const protocol::ServerChallenge largest{~uint64_t{0}, ~uint64_t{0}};
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(largest);
  return bytes ? bytes->size() : 64;
}

uint64_t wire_bytes(std::size_t payload) { return payload + net::kUdpIpv4HeaderBytes; }

std::string clip_message(std::string text) {
  if (text.size() > protocol::kMaxStringBytes) text.resize(protocol::kMaxStringBytes);
  return text;
}

}  // namespace

const char* to_string(ConnectionState state) {
  switch (state) {
    case ConnectionState::kIdle: return "idle";
    case ConnectionState::kSendingHello: return "sending-hello";
    case ConnectionState::kSendingResponse: return "sending-response";
    case ConnectionState::kConnected: return "connected";
    case ConnectionState::kDisconnected: return "disconnected";
    case ConnectionState::kFailed: return "failed";
  }
  return "?";
}

Connection::Connection(asio::io_context& io, ConnectionOptions options, Presenter& presenter)
    : io_(io), options_(std::move(options)), presenter_(presenter), commands_(options_.commands) {
  if (!options_.assets) options_.assets = std::make_shared<AssetLibrary>();
}

Connection::~Connection() = default;

net::Endpoint Connection::local_endpoint() const {
  return transport_ && transport_->is_open() ? transport_->local_endpoint() : net::Endpoint{};
}

void Connection::fail(std::string message) {
  state_ = ConnectionState::kFailed;
  error_ = std::move(message);
}

Status Connection::connect(int64_t now_us) {
  for (const std::string& source : options_.model_sources) {
    if (Status s = options_.assets->load(source); !s) {
      fail("client: " + s.error().message);
      return Error{error_};
    }
  }
  options_.model_sources.clear();  // loaded once; a reconnect reuses them
  if (!transport_) {
    if (Status s = open_socket(); !s) {
      fail("client: " + s.error().message);
      return Error{error_};
    }
  }
  if (options_.nonce != 0) {
    nonce_ = options_.nonce++;
  } else {
    std::random_device device;
    nonce_ = (uint64_t{device()} << 32) | device();
  }
  reset_session();
  if (Status s = build_hello(); !s) {
    fail("client: hello: " + s.error().message);
    return Error{error_};
  }
  state_ = ConnectionState::kSendingHello;
  connect_start_us_ = now_us;
  last_receive_us_ = now_us;
  handshake_sends_ = 0;
  send_hello(now_us);
  channel_->pump(now_us);
  return {};
}

Status Connection::open_socket() {
  transport_ = std::make_unique<net::UdpTransport>(io_);
  net::Endpoint local = options_.local.value_or(
      options_.server.address().is_v6() ? net::Endpoint(asio::ip::address_v6::any(), 0)
                                        : net::Endpoint(asio::ip::address_v4::any(), 0));
  if (Status s = transport_->open(local); !s) {
    transport_.reset();
    return s;
  }
  channel_ = transport_.get();
  if (options_.simulator) {
    simulator_ = std::make_unique<net::NetworkSimulator>(*transport_, *options_.simulator);
    channel_ = simulator_.get();
  }
  return {};
}

void Connection::reset_session() {
  presenter_.clear();
  commands_.clear();
  hits_.clear();
  session_status_ = protocol::SessionStatus{};
  session_status_seen_ = false;
  pending_controls_.clear();
  welcome_ = protocol::Welcome{};
  error_.clear();
  disconnect_reason_ = protocol::DisconnectReason::kUnspecified;
  newest_baseline_seen_ = kNoTick;
  echo_seen_ = false;
  ack_times_.fill(AckTime{});
  rtt_count_ = 0;
}

Status Connection::build_hello() {
  protocol::ClientHello hello;
  hello.client_nonce = nonce_;
  hello.client_name = clip_message(options_.name);
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(hello);
  if (!bytes) return Error{bytes.error().message};
  hello_bytes_ = std::move(bytes).value();
  // No amplification (docs/session.md): the hello is at least as large as any challenge. The
  // padding is zero bytes after the FlatBuffer, which the verifier ignores.
  if (hello_bytes_.size() < challenge_size()) hello_bytes_.resize(challenge_size(), 0);
  return {};
}

void Connection::send_hello(int64_t now_us) {
  const auto* data = reinterpret_cast<const std::byte*>(hello_bytes_.data());
  if (channel_->send_to({data, hello_bytes_.size()}, options_.server)) {
    ++counters_.datagrams_out;
    counters_.bytes_out += wire_bytes(hello_bytes_.size());
    out_rate_.add(now_us, wire_bytes(hello_bytes_.size()));
  } else {
    ++counters_.send_failures;
  }
  ++counters_.hellos_sent;
  ++handshake_sends_;
  last_handshake_send_us_ = now_us;
}

void Connection::send(const protocol::Message& message, int64_t now_us) {
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(message);
  if (!bytes) {
    ++counters_.send_failures;
    return;
  }
  const auto* data = reinterpret_cast<const std::byte*>(bytes->data());
  if (!channel_->send_to({data, bytes->size()}, options_.server)) {
    ++counters_.send_failures;
    return;
  }
  ++counters_.datagrams_out;
  counters_.bytes_out += wire_bytes(bytes->size());
  out_rate_.add(now_us, wire_bytes(bytes->size()));
}

void Connection::send_ack(int64_t now_us) {
  protocol::Ack ack = presenter_.ack();
  // The clock modulo 2^32 (wraps every 71 minutes; differences stay right), 0 reserved.
  ack.echo_us = static_cast<uint32_t>(now_us);
  if (ack.echo_us == 0) ack.echo_us = 1;
  send(ack, now_us);
  ++counters_.acks_sent;
  last_ack_us_ = now_us;
  ack_due_ = false;
  for (AckTime& a : ack_times_) {
    if (a.sent_us == kPendingAck) a.sent_us = now_us;
  }
}

void Connection::disconnect(int64_t now_us) {
  if (state_ == ConnectionState::kSendingHello || state_ == ConnectionState::kSendingResponse ||
      state_ == ConnectionState::kConnected) {
    const protocol::Disconnect bye{protocol::DisconnectReason::kClientLeft, "client left"};
    for (int i = 0; i < 3; ++i) send(bye, now_us);
    channel_->pump(now_us);
  }
  if (state_ != ConnectionState::kIdle && state_ != ConnectionState::kFailed) {
    state_ = ConnectionState::kDisconnected;
    disconnect_reason_ = protocol::DisconnectReason::kClientLeft;
  }
}

uint32_t Connection::send_command(const protocol::ClientCommand& command, int64_t now_us) {
  if (state_ != ConnectionState::kConnected) return 0;
  Predictor& predictor = presenter_.predictor();
  protocol::ClientCommand stamped = command;
  const uint32_t tick = prediction_tick(now_us);
  const bool predict = predictor.enabled() && tick != 0 && owns(command.entity_id);
  if (predict && stamped.apply_tick == 0) stamped.apply_tick = tick;
  stamped.sequence = commands_.submit(stamped, now_us);
  if (stamped.sequence != 0 && predict) predictor.on_command(stamped);
  return stamped.sequence;
}

int64_t Connection::rtt_us() const {
  if (rtt_count_ == 0) return -1;
  int64_t best = rtt_samples_[0];
  for (std::size_t i = 1; i < rtt_count_; ++i) best = std::min(best, rtt_samples_[i]);
  return best;
}

int64_t Connection::prediction_time_us(int64_t now_us) const {
  const PlayoutClock& playout = presenter_.playout();
  const int64_t rtt = rtt_us();
  if (rtt < 0 || !playout.started()) return -1;
  return playout.newest_server_time_us(now_us) + rtt + playout.jitter_us() +
         presenter_.predictor().settings().margin_us;
}

uint32_t Connection::prediction_tick(int64_t now_us) const {
  const int64_t arrival = prediction_time_us(now_us);
  return arrival < 0 ? 0 : presenter_.predictor().stamp_tick(arrival);
}

uint32_t Connection::send_replay_control(protocol::ReplayControl control, int64_t now_us) {
  if (state_ != ConnectionState::kConnected) return 0;
  control.sequence = next_replay_sequence_++;
  send(control, now_us);
  // Two more copies with the next updates: a control is a keypress, and losing one is worse
  // than two duplicates the server drops by sequence.
  pending_controls_.push_back(PendingControl{control, 2});
  return control.sequence;
}

uint32_t Connection::fire_hit_query(const HitRay& ray, int64_t view_us, int64_t now_us) {
  if (state_ != ConnectionState::kConnected) return 0;
  protocol::HitQuery query;
  query.sequence = hits_.next_sequence();
  query.origin_x = ray.origin.x, query.origin_y = ray.origin.y, query.origin_z = ray.origin.z;
  query.direction_x = ray.direction.x, query.direction_y = ray.direction.y, query.direction_z = ray.direction.z;
  query.length = ray.length;
  query.view_us = view_us;
  send(query, now_us);
  return query.sequence;
}

bool Connection::owns(uint32_t entity_id) const {
  return std::find(session_status_.owned.begin(), session_status_.owned.end(), entity_id) !=
         session_status_.owned.end();
}

void Connection::update(int64_t now_us) {
  if (channel_ == nullptr) return;
  channel_->pump(now_us);
  net::Endpoint from;
  for (;;) {
    const std::size_t n = channel_->receive_from(receive_buffer_, from);
    if (n == 0) break;
    ++counters_.datagrams_in;
    counters_.bytes_in += wire_bytes(n);
    in_rate_.add(now_us, wire_bytes(n));
    const int64_t arrival_us =
        options_.channel_arrival_times ? now_us - channel_->last_receive_wait_us() : now_us;
    handle_datagram({reinterpret_cast<const uint8_t*>(receive_buffer_.data()), n}, from, now_us,
                    arrival_us);
  }
  if (state_ == ConnectionState::kSendingHello || state_ == ConnectionState::kSendingResponse) {
    update_handshake(now_us);
  } else if (state_ == ConnectionState::kConnected) {
    update_connected(now_us);
  }
  channel_->pump(now_us);
}

void Connection::update_handshake(int64_t now_us) {
  if (now_us - connect_start_us_ >= options_.connect_timeout_us) {
    fail("client: no answer from " + net::to_string(options_.server) + " within " +
         std::to_string(options_.connect_timeout_us / 1000) + " ms (" + to_string(state_) + ")");
  } else if (now_us - last_handshake_send_us_ >= options_.hello_resend_us) {
    if (state_ == ConnectionState::kSendingHello) {
      send_hello(now_us);
    } else {
      send(protocol::ChallengeResponse{nonce_, token_}, now_us);
      ++counters_.responses_sent;
      last_handshake_send_us_ = now_us;
    }
  }
}

void Connection::update_connected(int64_t now_us) {
  if (now_us - last_receive_us_ >= options_.timeout_us) {
    state_ = ConnectionState::kDisconnected;
    disconnect_reason_ = protocol::DisconnectReason::kTimeout;
    error_ = "client: nothing from the server for " + std::to_string(options_.timeout_us / 1000) +
             " ms";
    return;
  }
  if (ack_due_ || now_us - last_ack_us_ >= options_.keepalive_us) send_ack(now_us);
  commands_.pump(now_us, [&](const protocol::ClientCommand& c) {
    send(c, now_us);
    ++counters_.command_datagrams;
  });
  for (PendingControl& pending : pending_controls_) {
    send(pending.control, now_us);
    --pending.sends_left;
  }
  std::erase_if(pending_controls_, [](const PendingControl& p) { return p.sends_left <= 0; });
}

void Connection::handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from,
                                int64_t now_us, int64_t arrival_us) {
  if (from != options_.server) {
    ++counters_.dropped_foreign;
    return;
  }
  if (bytes.size() > net::kMaxDatagramBytes) {
    ++counters_.dropped_oversized;
    return;
  }
  Result<protocol::Message> message = protocol::decode_message(bytes);
  if (!message) {
    ++counters_.dropped_malformed;
    return;
  }
  const bool handshaking = state_ == ConnectionState::kSendingHello ||
                           state_ == ConnectionState::kSendingResponse;
  const bool live = handshaking || state_ == ConnectionState::kConnected;
  if (!live) {
    ++counters_.dropped_unexpected;
    return;
  }
  dispatch(message.value(), now_us, arrival_us);
}

void Connection::dispatch(const protocol::Message& message, int64_t now_us, int64_t arrival_us) {
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, protocol::ServerChallenge>) {
          on_challenge(m, now_us);
        } else if constexpr (std::is_same_v<T, protocol::Welcome>) {
          on_welcome(m, now_us);
        } else if constexpr (std::is_same_v<T, protocol::Snapshot>) {
          on_snapshot(m, now_us, arrival_us);
        } else if constexpr (std::is_same_v<T, protocol::EntitySpawn> ||
                             std::is_same_v<T, protocol::EntityDespawn> ||
                             std::is_same_v<T, protocol::SessionStatus> ||
                             std::is_same_v<T, protocol::AnimationEvents>) {
          on_connected_message(m, now_us);
        } else if constexpr (std::is_same_v<T, protocol::Disconnect>) {
          on_disconnect(m);
        } else if constexpr (std::is_same_v<T, protocol::HitResult>) {
          on_hit_result(m, now_us);
        } else if constexpr (std::is_same_v<T, protocol::OwnerState>) {
          if (state_ != ConnectionState::kConnected) {
            ++counters_.dropped_unexpected;
          } else {
            last_receive_us_ = now_us;
            presenter_.on_owner_state(m, owns(m.entity_id), now_us);
          }
        } else {
          ++counters_.dropped_unexpected;  // client-bound traffic never carries these
        }
      },
      message);
}

template <class Message>
void Connection::on_connected_message(const Message& m, int64_t now_us) {
  if (state_ != ConnectionState::kConnected) {
    ++counters_.dropped_unexpected;
    return;
  }
  last_receive_us_ = now_us;
  if constexpr (std::is_same_v<Message, protocol::EntitySpawn>) {
    presenter_.on_spawn(m);
  } else if constexpr (std::is_same_v<Message, protocol::EntityDespawn>) {
    presenter_.on_despawn(m);
  } else if constexpr (std::is_same_v<Message, protocol::AnimationEvents>) {
    presenter_.on_events(m);
    ack_due_ = true;  // the server repeats them until this client says they arrived
  } else {
    // Unreliable and repeated: keep the newest (a reordered older one is ignored).
    if (!session_status_seen_ || m.server_tick >= session_status_.server_tick) {
      session_status_ = m;
      session_status_seen_ = true;
    }
  }
}

void Connection::on_challenge(const protocol::ServerChallenge& m, int64_t now_us) {
  if (m.client_nonce != nonce_ || state_ == ConnectionState::kConnected) {
    ++counters_.dropped_unexpected;
    return;
  }
  if (state_ == ConnectionState::kSendingResponse && m.challenge_token == token_) return;  // repeat
  // Exactly one hello out: its round trip is a clean RTT sample.
  if (state_ == ConnectionState::kSendingHello && handshake_sends_ == 1) {
    record_rtt(now_us - last_handshake_send_us_);
  }
  last_receive_us_ = now_us;
  token_ = m.challenge_token;
  state_ = ConnectionState::kSendingResponse;
  send(protocol::ChallengeResponse{nonce_, token_}, now_us);
  ++counters_.responses_sent;
  handshake_sends_ = 1;
  last_handshake_send_us_ = now_us;
}

void Connection::on_welcome(const protocol::Welcome& m, int64_t now_us) {
  if (state_ == ConnectionState::kConnected) {
    last_receive_us_ = now_us;  // a repeat (our response was duplicated)
    return;
  }
  if (state_ != ConnectionState::kSendingResponse) {
    ++counters_.dropped_unexpected;
    return;
  }
  if (Status s = protocol::check_protocol_version(m.protocol_version); !s) {
    send(protocol::Disconnect{protocol::DisconnectReason::kProtocolMismatch,
                              clip_message(s.error().message)},
         now_us);
    fail("client: welcome: " + s.error().message);
    return;
  }
  if (m.tick_rate_hz == 0 || m.send_rate_hz == 0) {
    fail("client: welcome: tick rate " + std::to_string(m.tick_rate_hz) + " Hz, send rate " +
         std::to_string(m.send_rate_hz) + " Hz (both must be > 0)");
    return;
  }
  Result<AssetBinding> binding = AssetBinding::bind(m.assets, *options_.assets,
                                                    options_.load_missing_assets,
                                                    options_.asset_dirs);
  if (!binding) {
    const protocol::Disconnect bye{protocol::DisconnectReason::kAssetMismatch,
                                   clip_message(binding.error().message)};
    for (int i = 0; i < 3; ++i) send(bye, now_us);
    fail("client: " + binding.error().message);
    return;
  }
  welcome_ = m;
  presenter_.start(m.tick_rate_hz, m.send_rate_hz, std::move(binding).value());
  state_ = ConnectionState::kConnected;
  last_receive_us_ = now_us;
  last_ack_us_ = now_us;
}

void Connection::on_snapshot(const protocol::Snapshot& m, int64_t now_us, int64_t arrival_us) {
  if (state_ != ConnectionState::kConnected) {
    ++counters_.dropped_unexpected;
    return;
  }
  last_receive_us_ = now_us;
  const PartResult result = presenter_.on_snapshot(m, arrival_us);
  if (result.outcome != PartOutcome::kApplied) return;
  if (!result.first_error.empty()) error_ = result.first_error;  // the latest problem, for logs
  measure_rtt(m, result, arrival_us);
  if (result.completed) {
    ack_due_ = true;
    ack_times_[ack_head_] = AckTime{m.server_tick, kPendingAck};
    ack_head_ = (ack_head_ + 1) % ack_times_.size();
  }
}

void Connection::measure_rtt(const protocol::Snapshot& m, const PartResult& result,
                             int64_t arrival_us) {
  if (m.ack_echo_us != 0) {
    // An Ack of ours came back: RTT = its round trip less the server's time holding it. The
    // difference is taken modulo 2^32 like the stamp; a sample beyond the timeout (a stamp
    // that is not ours) is ignored.
    const int64_t round_trip = static_cast<uint32_t>(static_cast<uint32_t>(arrival_us) - m.ack_echo_us);
    const int64_t sample = round_trip - static_cast<int64_t>(m.ack_hold_us);
    if (sample <= options_.timeout_us) {
      echo_seen_ = true;
      record_rtt(sample);
    }
  }
  // Without echoes (a server that does not echo acks), from the acks of baselines: the first
  // snapshot coded against a newer baseline B left the server after our ack of B arrived
  // there, so (its arrival - when we acked B) >= RTT; the minimum over recent samples
  // approaches RTT (it overshoots by the wait for the server's next send).
  if (!result.new_tick || echo_seen_ || m.baseline_tick == kNoTick) return;
  if (newest_baseline_seen_ != kNoTick && m.baseline_tick <= newest_baseline_seen_) return;
  newest_baseline_seen_ = m.baseline_tick;
  for (const AckTime& a : ack_times_) {
    if (a.tick == m.baseline_tick && a.sent_us != kPendingAck) {
      record_rtt(arrival_us - a.sent_us);
      break;
    }
  }
}

void Connection::on_disconnect(const protocol::Disconnect& m) {
  disconnect_reason_ = m.reason;
  error_ = std::string("client: server disconnected: ") + protocol::to_string(m.reason) +
           (m.message.empty() ? "" : ": " + m.message);
  state_ = ConnectionState::kDisconnected;
}

void Connection::on_hit_result(const protocol::HitResult& m, int64_t now_us) {
  if (state_ != ConnectionState::kConnected) {
    ++counters_.dropped_unexpected;
    return;
  }
  last_receive_us_ = now_us;
  hits_.receive(m);  // one it never fired is counted there (hit_answers_unexpected)
}

void Connection::record_rtt(int64_t sample_us) {
  if (sample_us < 0) return;
  rtt_samples_[rtt_head_] = sample_us;
  rtt_head_ = (rtt_head_ + 1) % rtt_samples_.size();
  rtt_count_ = std::min(rtt_count_ + 1, rtt_samples_.size());
}

ConnectionStats Connection::stats(int64_t now_us) const {
  ConnectionStats s = counters_;
  static_cast<HitShotStats&>(s) = hits_.stats();
  if (rtt_count_ > 0) s.rtt_ms = static_cast<double>(rtt_us()) / 1000.0;
  s.bytes_in_per_s = in_rate_.per_second(now_us);
  s.bytes_out_per_s = out_rate_.per_second(now_us);
  return s;
}

}  // namespace posecast::client
