// Inbound datagrams: the handshake (stateless until a verified response), acks, commands and
// disconnects; plus the send path, disconnects and timeouts. docs/session.md has the rules.

#include <algorithm>

#include <spdlog/spdlog.h>

#include "server_impl.h"

namespace posecast::server {
namespace {

constexpr std::size_t kMaxDatagramsPerPoll = 20000;
constexpr int64_t kWelcomeResendUs = 100'000;
constexpr std::size_t kDisconnectRepeats = 3;
constexpr uint32_t kDespawnAckedCarriers = 3;

std::span<const uint8_t> as_bytes(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

}  // namespace

ClientSession* Server::Impl::find_client(const net::Endpoint& endpoint) {
  for (auto& client : clients) {
    if (client->endpoint == endpoint) return client.get();
  }
  return nullptr;
}

ClientSession* Server::Impl::find_client(uint32_t id) {
  for (auto& client : clients) {
    if (client->id == id) return client.get();
  }
  return nullptr;
}

void Server::Impl::poll(int64_t now_us) {
  if (closed) return;
  channel->pump(now_us);
  for (std::size_t n = 0; n < kMaxDatagramsPerPoll; ++n) {
    net::Endpoint from;
    const std::size_t size = channel->receive_from(receive_buffer, from);
    if (size == 0) break;
    handle_datagram(as_bytes(std::span<const std::byte>(receive_buffer.data(), size)), from, now_us);
  }
}

void Server::Impl::handle_datagram(std::span<const uint8_t> bytes, const net::Endpoint& from,
                                   int64_t now_us) {
  ClientSession* client = find_client(from);
  if (client != nullptr) {
    const int64_t second = now_us / 1'000'000;
    if (second != client->rate_second) {
      client->rate_second = second;
      client->datagrams_this_second = 0;
      client->malformed_this_second = 0;
    }
    if (++client->datagrams_this_second > options.max_datagrams_per_client_per_second) {
      drop(DropReason::kRateLimited);
      return;
    }
  }
  auto count_malformed = [&](DropReason reason) {
    drop(reason);
    if (client != nullptr && ++client->malformed_this_second > options.malformed_limit_per_second) {
      for (std::size_t i = 0; i < clients.size(); ++i) {
        if (clients[i].get() == client) {
          disconnect(i, protocol::DisconnectReason::kMalformedTraffic,
                     "too many malformed datagrams", now_us, true);
          break;
        }
      }
    }
  };
  if (bytes.size() > protocol::kMaxPacketBytes) {
    count_malformed(DropReason::kOversized);
    return;
  }
  Result<protocol::Message> decoded = protocol::decode_message(bytes);
  if (!decoded) {
    count_malformed(DropReason::kMalformed);
    spdlog::debug("datagram from {} dropped: {}", net::to_string(from), decoded.error().message);
    return;
  }
  protocol::Message& message = decoded.value();
  if (auto* hello = std::get_if<protocol::ClientHello>(&message)) {
    handle_hello(*hello, bytes.size(), from, now_us);
    return;
  }
  if (auto* response = std::get_if<protocol::ChallengeResponse>(&message)) {
    handle_response(*response, bytes.size(), from, now_us);
    return;
  }
  const bool connected_only = std::holds_alternative<protocol::Ack>(message) ||
                              std::holds_alternative<protocol::ClientCommand>(message) ||
                              std::holds_alternative<protocol::ReplayControl>(message) ||
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
  if (auto* ack = std::get_if<protocol::Ack>(&message)) {
    handle_ack(*client, *ack, now_us);
  } else if (auto* command = std::get_if<protocol::ClientCommand>(&message)) {
    handle_command(*client, *command);
  } else if (auto* control = std::get_if<protocol::ReplayControl>(&message)) {
    if (!replay_control_callback) {
      drop(DropReason::kUnexpected);  // a live session has nothing to pause or seek
    } else if (client->any_replay_control && control->sequence <= client->newest_replay_sequence) {
      drop(DropReason::kStaleCommand);
    } else {
      client->any_replay_control = true;
      client->newest_replay_sequence = control->sequence;
      replay_control_callback(client->info(), *control);
    }
  } else if (auto* bye = std::get_if<protocol::Disconnect>(&message)) {
    for (std::size_t i = 0; i < clients.size(); ++i) {
      if (clients[i].get() == client) {
        ++counters.disconnects_client;
        spdlog::info("client {} ({}) left: {} {}", client->id, net::to_string(from),
                     protocol::to_string(bye->reason), bye->message);
        disconnect(i, bye->reason, bye->message, now_us, false);
        break;
      }
    }
  }
}

bool Server::Impl::send_raw(std::span<const uint8_t> bytes, const net::Endpoint& to) {
  const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  if (!channel->send_to(payload, to)) return false;
  ++counters.datagrams_out;
  counters.bytes_out += bytes.size() + net::kUdpIpv4HeaderBytes;
  return true;
}

bool Server::Impl::send(ClientSession& client, std::span<const uint8_t> bytes, int64_t now_us) {
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
void Server::Impl::reply_unverified(const protocol::Message& message, std::size_t request_bytes,
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

void Server::Impl::handle_hello(const protocol::ClientHello& hello, std::size_t size,
                                const net::Endpoint& from, int64_t now_us) {
  if (size < challenge_bytes) {
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
  if (clients.size() >= options.max_clients && find_client(from) == nullptr) {
    drop(DropReason::kServerFull);
    reply_unverified(protocol::Disconnect{protocol::DisconnectReason::kServerFull,
                                          "server full (" + std::to_string(clients.size()) + " clients)"},
                     size, from);
    return;
  }
  reply_unverified(protocol::ServerChallenge{hello.client_nonce, cookie.token(from, hello.client_nonce, now_us)},
                   size, from);
}

void Server::Impl::handle_response(const protocol::ChallengeResponse& response, std::size_t size,
                                   const net::Endpoint& from, int64_t now_us) {
  if (!cookie.verify(from, response.client_nonce, response.challenge_token, now_us)) {
    drop(DropReason::kBadChallenge);
    return;
  }
  if (ClientSession* existing = find_client(from)) {
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
    for (std::size_t i = 0; i < clients.size(); ++i) {
      if (clients[i].get() == existing) {
        disconnect(i, protocol::DisconnectReason::kClientLeft, "replaced by a new connection", now_us, false);
        break;
      }
    }
  }
  if (clients.size() >= options.max_clients) {
    drop(DropReason::kServerFull);
    reply_unverified(protocol::Disconnect{protocol::DisconnectReason::kServerFull, "server full"}, size, from);
    return;
  }
  auto session = std::make_unique<ClientSession>();
  ClientSession& client = *session;
  client.id = next_client_id++;
  client.endpoint = from;
  client.nonce = response.client_nonce;
  client.connected_us = now_us;
  client.last_receive_us = now_us;
  client.send_interval_ticks = send_interval_ticks(options.tick_rate_hz, options.send_rate_hz);
  client.send_rate_hz = std::max<uint32_t>(1, options.tick_rate_hz / client.send_interval_ticks);
  client.send_phase = options.spread_send_phases ? client.id % client.send_interval_ticks : 0;
  client.bandwidth_kbit = options.bandwidth_kbit;
  // The ring holds every snapshot that may still serve as a baseline (baseline_max_age), plus
  // a few in flight.
  const uint64_t age_ticks =
      static_cast<uint64_t>(options.baseline_max_age_us) * options.tick_rate_hz / 1'000'000;
  const std::size_t ring = std::clamp<std::size_t>(age_ticks / client.send_interval_ticks + 4, 8, 1024);
  client.ring.resize(ring);

  protocol::Welcome welcome;
  welcome.client_id = client.id;
  welcome.tick_rate_hz = static_cast<uint16_t>(options.tick_rate_hz);
  welcome.send_rate_hz = static_cast<uint16_t>(client.send_rate_hz);
  welcome.server_tick = next_session_tick();
  welcome.assets = manifest;
  Result<std::vector<uint8_t>> bytes = protocol::encode_message(welcome);
  if (!bytes) {
    spdlog::error("welcome for {}: {}", net::to_string(from), bytes.error().message);
    return;
  }
  client.welcome = std::move(bytes).value();
  client.last_welcome_us = now_us;
  clients.push_back(std::move(session));
  ++counters.connections;
  send(client, client.welcome, now_us);
  spdlog::info("client {} connected from {} ({} of {})", client.id, net::to_string(from),
               clients.size(), options.max_clients);
  if (connected_callback) connected_callback(client.info());
}

void Server::Impl::handle_ack(ClientSession& client, const protocol::Ack& ack, int64_t now_us) {
  if (ack.newest_tick != kNoTick &&
      (client.newest_sent == kNoTick || ack.newest_tick > client.newest_sent)) {
    drop(DropReason::kBadAck);
    return;
  }
  if (ack.echo_us != 0) {  // keep-alives before anything completed carry one too
    client.ack_echo_us = ack.echo_us;
    client.ack_echo_taken_us = now_us;
  }
  if (ack.newest_tick == kNoTick) return;  // the client holds no complete snapshot yet
  for (int i = -1; i < 32; ++i) {
    uint32_t tick;
    if (i < 0) {
      tick = ack.newest_tick;
    } else {
      if (((ack.previous_mask >> i) & 1u) == 0) continue;
      if (ack.newest_tick < static_cast<uint32_t>(i) + 1) break;
      tick = ack.newest_tick - 1 - static_cast<uint32_t>(i);
    }
    SentSnapshot* sent = client.find_sent(tick);
    if (sent == nullptr || sent->acked) continue;
    sent->acked = true;
    if (client.newest_acked == kNoTick || tick > client.newest_acked) client.newest_acked = tick;
    // Every entity in an acked view is known to the client: its spawn arrived.
    for (const ViewEntry& entry : sent->view) {
      ClientEntity* known = client.find_entity(entry.id);
      if (known != nullptr && known->generation == entry.generation) known->spawn_confirmed = true;
    }
    for (PendingDespawn& despawn : client.despawns) {
      auto it = std::find(despawn.carrier_ticks.begin(), despawn.carrier_ticks.end(), tick);
      if (it != despawn.carrier_ticks.end()) {
        despawn.carrier_ticks.erase(it);
        ++despawn.acked_carriers;
      }
    }
  }
  std::erase_if(client.despawns, [](const PendingDespawn& d) { return d.acked_carriers >= kDespawnAckedCarriers; });
}

void Server::Impl::handle_command(ClientSession& client, const protocol::ClientCommand& command) {
  if (client.any_command && command.sequence <= client.newest_command_sequence) {
    drop(DropReason::kStaleCommand);
    return;
  }
  client.any_command = true;
  client.newest_command_sequence = command.sequence;
  const std::size_t index = find_entity_index(command.entity_id);
  if (index >= entities.size() || entities[index].owner != client.id) {
    drop(DropReason::kUnownedCommand);
    return;
  }
  if (entities[index].generation != command.generation) {
    drop(DropReason::kStaleCommand);  // meant for an earlier entity with this id
    return;
  }
  Result<sim::Command> translated = translate_client_command(command, *world, world->tick_index());
  if (!translated) {
    drop(DropReason::kBadCommand);
    spdlog::debug("client {} command {}: {}", client.id, command.sequence, translated.error().message);
    return;
  }
  world->submit(kClientSubmitterBase + client.id, std::move(translated).value());
  ++counters.commands_applied;
}

void Server::Impl::disconnect(std::size_t index, protocol::DisconnectReason reason,
                              const std::string& message, int64_t now_us, bool notify_peer) {
  ClientSession& client = *clients[index];
  if (notify_peer) {
    std::string text = message;
    if (text.size() > protocol::kMaxStringBytes) text.resize(protocol::kMaxStringBytes);
    Result<std::vector<uint8_t>> bytes = protocol::encode_message(protocol::Disconnect{reason, text});
    if (bytes) {
      for (std::size_t i = 0; i < kDisconnectRepeats; ++i) send(client, bytes.value(), now_us);
    }
  }
  const ClientInfo info = client.info();
  for (EntityRecord& entity : entities) {
    if (entity.owner == client.id) entity.owner = 0;
  }
  ++ownership_version;
  clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(index));
  if (disconnected_callback) disconnected_callback(info, reason);
}

void Server::Impl::check_timeouts(int64_t now_us) {
  for (std::size_t i = clients.size(); i-- > 0;) {
    ClientSession& client = *clients[i];
    if (now_us - client.last_receive_us > options.timeout_us) {
      ++counters.timeouts;
      spdlog::info("client {} ({}) timed out", client.id, net::to_string(client.endpoint));
      disconnect(i, protocol::DisconnectReason::kTimeout, "no datagram for " +
                 std::to_string(options.timeout_us / 1000) + " ms", now_us, true);
    }
  }
}

}  // namespace posecast::server
