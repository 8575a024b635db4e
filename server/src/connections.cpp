#include "connections.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace posecast::server {
namespace {

constexpr std::size_t kMaxDatagramsPerPoll = 20000;
constexpr int64_t kWelcomeResendUs = 100'000;
constexpr std::size_t kDisconnectRepeats = 3;

std::span<const uint8_t> as_bytes(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

// The encoded size of the largest ServerChallenge the server sends.
std::size_t largest_challenge_bytes() {
  const protocol::ServerChallenge challenge{~uint64_t{0}, ~uint64_t{0}};
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(challenge);
  return bytes ? bytes->size() : protocol::kMaxPacketBytes;
}

}  // namespace

uint32_t send_interval_ticks(uint32_t tick_rate_hz, uint32_t send_rate_hz) {
  send_rate_hz = std::clamp<uint32_t>(send_rate_hz, 1, tick_rate_hz);
  return std::max<uint32_t>(1, (tick_rate_hz + send_rate_hz / 2) / send_rate_hz);
}

Connections::Connections(const ServerOptions& options, net::DatagramChannel& channel,
                         ConnectionEvents& events, ServerMetrics& counters,
                         std::vector<protocol::AssetInfo> manifest)
    : options_(options),
      channel_(channel),
      events_(events),
      counters_(counters),
      manifest_(std::move(manifest)),
      cookie_(options.cookie_key ? *options.cookie_key : random_cookie_key(), options.challenge_window_us),
      challenge_bytes_(largest_challenge_bytes()) {
  receive_buffer_.resize(net::kReceiveBufferBytes);
}

ClientConnection* Connections::find(const net::Endpoint& endpoint) {
  for (auto& client : clients_) {
    if (client->endpoint == endpoint) return client.get();
  }
  return nullptr;
}

ClientConnection* Connections::find(uint32_t id) {
  for (auto& client : clients_) {
    if (client->id == id) return client.get();
  }
  return nullptr;
}

std::size_t Connections::index_of(const ClientConnection& client) const {
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    if (clients_[i].get() == &client) return i;
  }
  return clients_.size();
}

void Connections::poll(int64_t now_us, uint32_t server_tick) {
  channel_.pump(now_us);
  for (std::size_t n = 0; n < kMaxDatagramsPerPoll; ++n) {
    net::Endpoint from;
    const std::size_t size = channel_.receive_from(receive_buffer_, from);
    if (size == 0) break;
    handle_datagram(as_bytes(std::span<const std::byte>(receive_buffer_.data(), size)), from, now_us,
                    server_tick);
  }
}

bool Connections::within_rate(ClientConnection& client, int64_t now_us) {
  const int64_t second = now_us / 1'000'000;
  if (second != client.rate_second) {
    client.rate_second = second;
    client.datagrams_this_second = 0;
    client.malformed_this_second = 0;
  }
  return ++client.datagrams_this_second <= options_.max_datagrams_per_client_per_second;
}

void Connections::count_malformed(ClientConnection* client, DropReason reason, int64_t now_us) {
  drop(reason);
  if (client != nullptr && ++client->malformed_this_second > options_.malformed_limit_per_second) {
    disconnect(index_of(*client), protocol::DisconnectReason::kMalformedTraffic,
               "too many malformed datagrams", now_us, true);
  }
}

void Connections::handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from,
                                  int64_t now_us, uint32_t server_tick) {
  ClientConnection* client = find(from);
  if (client != nullptr && !within_rate(*client, now_us)) {
    drop(DropReason::kRateLimited);
    return;
  }
  if (bytes.size() > protocol::kMaxPacketBytes) {
    count_malformed(client, DropReason::kOversized, now_us);
    return;
  }
  Result<protocol::Message> decoded = protocol::decode_message(bytes);
  if (!decoded) {
    count_malformed(client, DropReason::kMalformed, now_us);
    spdlog::debug("datagram from {} dropped: {}", net::to_string(from), decoded.error().message);
    return;
  }
  protocol::Message& message = decoded.value();
  ++counters_.received.datagrams[message.index()];
  counters_.received.bytes[message.index()] += bytes.size();
  if (auto* hello = std::get_if<protocol::ClientHello>(&message)) {
    handle_hello(*hello, bytes.size(), from, now_us);
    return;
  }
  if (auto* response = std::get_if<protocol::ChallengeResponse>(&message)) {
    handle_response(*response, bytes.size(), from, now_us, server_tick);
    return;
  }
  const bool connected_only = std::holds_alternative<protocol::Ack>(message) ||
                              std::holds_alternative<protocol::ClientCommand>(message) ||
                              std::holds_alternative<protocol::ReplayControl>(message) ||
                              std::holds_alternative<protocol::HitQuery>(message) ||
                              std::holds_alternative<protocol::Disconnect>(message);
  if (!connected_only) {
    drop(DropReason::kUnexpected);
    return;
  }
  if (client == nullptr) {
    drop(DropReason::kUnknownSource);
    return;
  }
  client->last_receive_us = now_us;
  handle_connected(*client, message, from, now_us);
}

// The messages only a connected client sends: Ack, ClientCommand, ReplayControl, HitQuery,
// Disconnect.
void Connections::handle_connected(ClientConnection& client, protocol::Message& message,
                                   const net::Endpoint& from, int64_t now_us) {
  if (auto* ack = std::get_if<protocol::Ack>(&message)) {
    if (!events_.on_ack(client, *ack, now_us)) drop(DropReason::kBadAck);
  } else if (auto* command = std::get_if<protocol::ClientCommand>(&message)) {
    handle_command(client, *command);
  } else if (auto* control = std::get_if<protocol::ReplayControl>(&message)) {
    handle_replay_control(client, *control);
  } else if (auto* query = std::get_if<protocol::HitQuery>(&message)) {
    // Answered at once, from the history of the ticks already run; one small datagram.
    Result<std::vector<uint8_t>> answer = protocol::encode_message(events_.on_hit_query(client, *query, now_us));
    if (answer.ok()) send(client, answer.value(), now_us);
  } else if (auto* bye = std::get_if<protocol::Disconnect>(&message)) {
    ++counters_.disconnects_client;
    spdlog::info("client {} ({}) left: {} {}", client.id, net::to_string(from),
                 protocol::to_string(bye->reason), bye->message);
    disconnect(index_of(client), bye->reason, bye->message, now_us, false);
  }
}

void Connections::handle_command(ClientConnection& client, const protocol::ClientCommand& command) {
  if (client.any_command && command.sequence <= client.newest_command_sequence) {
    drop(DropReason::kStaleCommand);
    return;
  }
  client.any_command = true;
  client.newest_command_sequence = command.sequence;
  if (const std::optional<DropReason> refused = events_.on_command(client, command)) drop(*refused);
}

void Connections::handle_replay_control(ClientConnection& client, const protocol::ReplayControl& control) {
  if (!events_.accepts_replay_control()) {
    drop(DropReason::kUnexpected);  // a live session has nothing to pause or seek
  } else if (client.any_replay_control && control.sequence <= client.newest_replay_sequence) {
    drop(DropReason::kStaleCommand);
  } else {
    client.any_replay_control = true;
    client.newest_replay_sequence = control.sequence;
    events_.on_replay_control(client, control);
  }
}

bool Connections::send_raw(std::span<const uint8_t> bytes, const net::Endpoint& to) {
  const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  if (!channel_.send_to(payload, to)) return false;
  ++counters_.datagrams_out;
  counters_.bytes_out += bytes.size() + net::kUdpIpv4HeaderBytes;
  if (const std::optional<std::size_t> kind = protocol::encoded_message_kind(bytes)) {
    ++counters_.sent.datagrams[*kind];
    counters_.sent.bytes[*kind] += bytes.size();
  }
  return true;
}

bool Connections::refuse_new(std::size_t request_bytes, const net::Endpoint& from) {
  if (!refusal_ || find(from) != nullptr) return false;
  drop(DropReason::kRefused);
  reply_unverified(*refusal_, request_bytes, from);
  return true;
}

bool Connections::send(ClientConnection& client, std::span<const uint8_t> bytes, int64_t now_us) {
  const uint64_t wire = bytes.size() + net::kUdpIpv4HeaderBytes;
  // Counted whether or not the socket took it: the budget is about what we tried to put on
  // the link, so it can never be exceeded by a retry.
  client.window.record(now_us, wire);
  client.bytes_sent += wire;
  client.last_send_us = now_us;
  return send_raw(bytes, client.endpoint);
}

// Before a source is verified, a reply is never larger than the datagram that caused it (no
// amplification). A Disconnect's text is shortened (then dropped) to fit; anything else that
// does not fit is not sent.
void Connections::reply_unverified(const protocol::Message& message, std::size_t request_bytes,
                                   const net::Endpoint& to) {
  protocol::Message reply = message;
  for (int attempt = 0; attempt < 4; ++attempt) {
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(reply);
    if (!bytes) return;
    if (bytes->size() <= request_bytes) {
      send_raw(bytes.value(), to);
      return;
    }
    auto* bye = std::get_if<protocol::Disconnect>(&reply);
    if (bye == nullptr || bye->message.empty()) return;
    const std::size_t excess = bytes->size() - request_bytes;
    // FlatBuffers pads strings to 4 bytes: cut a little more than the excess, then retry.
    bye->message.resize(bye->message.size() > excess + 4 ? bye->message.size() - excess - 4 : 0);
  }
}

void Connections::handle_hello(const protocol::ClientHello& hello, std::size_t size,
                               const net::Endpoint& from, int64_t now_us) {
  if (size < challenge_bytes_) {
    drop(DropReason::kHelloTooSmall);
    return;
  }
  if (Status version = protocol::check_protocol_version(hello.protocol_version); !version) {
    drop(DropReason::kProtocolMismatch);
    reply_unverified(protocol::Disconnect{protocol::DisconnectReason::kProtocolMismatch,
                                          version.error().message},
                     size, from);
    return;
  }
  if (refuse_new(size, from)) return;
  if (clients_.size() >= options_.max_clients && find(from) == nullptr) {
    drop(DropReason::kServerFull);
    reply_unverified(protocol::Disconnect{protocol::DisconnectReason::kServerFull,
                                          "server full (" + std::to_string(clients_.size()) + " clients)"},
                     size, from);
    return;
  }
  reply_unverified(protocol::ServerChallenge{hello.client_nonce, cookie_.token(from, hello.client_nonce, now_us)},
                   size, from);
}

void Connections::handle_response(const protocol::ChallengeResponse& response, std::size_t size,
                                  const net::Endpoint& from, int64_t now_us, uint32_t server_tick) {
  if (!cookie_.verify(from, response.client_nonce, response.challenge_token, now_us)) {
    drop(DropReason::kBadChallenge);
    return;
  }
  if (refuse_new(size, from)) return;
  if (ClientConnection* existing = find(from)) {
    existing->last_receive_us = now_us;
    if (existing->nonce == response.client_nonce) {
      // Our Welcome was lost (or this is a replay): send it again, at most every 100 ms.
      if (now_us - existing->last_welcome_us >= kWelcomeResendUs) {
        existing->last_welcome_us = now_us;
        send(*existing, existing->welcome, now_us);
      }
      return;
    }
    // The same address with a new nonce: the client restarted. The old session ends.
    disconnect(index_of(*existing), protocol::DisconnectReason::kClientLeft, "replaced by a new connection",
               now_us, false);
  }
  if (clients_.size() >= options_.max_clients) {
    drop(DropReason::kServerFull);
    reply_unverified(protocol::Disconnect{protocol::DisconnectReason::kServerFull, "server full"}, size, from);
    return;
  }
  accept(response, from, now_us, server_tick);
}

// A verified new client: its session, its Welcome, and the events.
void Connections::accept(const protocol::ChallengeResponse& response, const net::Endpoint& from,
                         int64_t now_us, uint32_t server_tick) {
  auto session = std::make_unique<ClientConnection>();
  ClientConnection& client = *session;
  client.id = next_client_id_++;
  client.endpoint = from;
  client.nonce = response.client_nonce;
  client.connected_us = now_us;
  client.last_receive_us = now_us;

  const uint32_t interval = send_interval_ticks(options_.tick_rate_hz, options_.send_rate_hz);
  protocol::Welcome welcome;
  welcome.client_id = client.id;
  welcome.tick_rate_hz = static_cast<uint16_t>(options_.tick_rate_hz);
  welcome.send_rate_hz = static_cast<uint16_t>(std::max<uint32_t>(1, options_.tick_rate_hz / interval));
  welcome.server_tick = server_tick;
  welcome.assets = manifest_;
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(welcome);
  if (!bytes) {
    spdlog::error("welcome for {}: {}", net::to_string(from), bytes.error().message);
    return;
  }
  client.welcome = std::move(bytes).value();
  client.last_welcome_us = now_us;
  clients_.push_back(std::move(session));
  ++counters_.connections;
  send(client, client.welcome, now_us);
  spdlog::info("client {} connected from {} ({} of {})", client.id, net::to_string(from),
               clients_.size(), options_.max_clients);
  events_.on_connected(client, now_us);
}

void Connections::disconnect(std::size_t index, protocol::DisconnectReason reason,
                             const std::string& message, int64_t now_us, bool notify_peer) {
  if (index >= clients_.size()) return;
  ClientConnection& client = *clients_[index];
  if (notify_peer) {
    std::string text = message;
    if (text.size() > protocol::kMaxStringBytes) text.resize(protocol::kMaxStringBytes);
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(protocol::Disconnect{reason, text});
    if (bytes) {
      for (std::size_t i = 0; i < kDisconnectRepeats; ++i) send(client, bytes.value(), now_us);
    }
  }
  std::unique_ptr<ClientConnection> gone = std::move(clients_[index]);
  clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(index));
  events_.on_disconnected(*gone, reason);
}

void Connections::check_timeouts(int64_t now_us) {
  for (std::size_t i = clients_.size(); i-- > 0;) {
    ClientConnection& client = *clients_[i];
    if (now_us - client.last_receive_us > options_.timeout_us) {
      ++counters_.timeouts;
      spdlog::info("client {} ({}) timed out", client.id, net::to_string(client.endpoint));
      disconnect(i, protocol::DisconnectReason::kTimeout, "no datagram for " +
                 std::to_string(options_.timeout_us / 1000) + " ms", now_us, true);
    }
  }
}

}  // namespace posecast::server
