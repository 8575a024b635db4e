// Owners' commands and owner states (docs/client.md, "Prediction"; docs/session.md, "Commands
// and authority"). A command waits for the World tick it was stamped with (the tick the
// client's prediction applied it at) and is translated against the state that tick starts
// from, exactly as the client translated it; one that arrives after its tick is applied at
// the next one (late). Each client due a snapshot gets, per entity it owns, the entity's exact
// state after the tick and the newest of its command sequences processed by then.

#include <algorithm>

#include <spdlog/spdlog.h>

#include "posecast/protocol/command_translation.h"
#include "server_impl.h"

namespace posecast::server {
namespace {

// Commands one client may have waiting for their ticks; beyond: refused (kCommandTooEarly).
constexpr std::size_t kMaxWaitingCommands = 256;

}  // namespace

std::optional<DropReason> Server::Impl::on_command(ClientConnection& client,
                                                   const protocol::ClientCommand& command) {
  const uint64_t current = world->tick_index();
  // Session ticks (the client's clock) -> World ticks: they differ only when an embedder moves
  // the World (begin_session_tick).
  const int64_t offset = static_cast<int64_t>(next_session_tick()) - static_cast<int64_t>(current);
  uint64_t wanted = current;
  if (command.apply_tick != 0) {
    const int64_t world_tick = static_cast<int64_t>(command.apply_tick) - offset;
    if (world_tick < static_cast<int64_t>(current)) {
      ++counters.commands_late;
    } else {
      wanted = static_cast<uint64_t>(world_tick);
    }
  }
  // Processed in sequence order: a command refused here still waits behind the client's
  // earlier ones, so the sequence an OwnerState reports never passes a command not yet applied.
  uint64_t after = current;
  std::size_t waiting = 0;
  for (const WaitingCommand& w : waiting_commands) {
    if (w.client != client.id) continue;
    after = std::max(after, w.world_tick);
    ++waiting;
  }
  WaitingCommand entry{client.id, std::max(wanted, after), command, std::nullopt};
  const std::size_t index = mirror->find(command.entity_id);
  const std::vector<EntityRecord>& records = mirror->records();
  const uint64_t lead = static_cast<uint64_t>(std::max<int64_t>(options.command_lead_us, 0)) *
                        options.tick_rate_hz / 1'000'000;
  if (index >= records.size() || records[index].owner != client.id) {
    entry.refused = DropReason::kUnownedCommand;
  } else if (records[index].generation != command.generation) {
    entry.refused = DropReason::kStaleCommand;  // meant for an earlier entity with this id
  } else if (wanted > current + lead || waiting >= kMaxWaitingCommands) {
    entry.refused = DropReason::kCommandTooEarly;
  }
  if (const std::optional<DropReason> refused = entry.refused) {
    entry.world_tick = std::max(current, after);
    if (waiting < kMaxWaitingCommands) waiting_commands.push_back(std::move(entry));
    return refused;
  }
  waiting_commands.push_back(std::move(entry));
  return std::nullopt;
}

void Server::Impl::apply_client_commands() {
  const uint64_t tick = world->tick_index();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < waiting_commands.size(); ++i) {
    WaitingCommand& w = waiting_commands[i];
    if (w.world_tick > tick) {
      if (kept != i) waiting_commands[kept] = std::move(w);
      ++kept;
      continue;
    }
    uint32_t& processed = processed_sequences[w.client];
    processed = std::max(processed, w.command.sequence);
    if (w.refused) continue;
    // Ownership may have changed while it waited.
    const std::size_t index = mirror->find(w.command.entity_id);
    const std::vector<EntityRecord>& records = mirror->records();
    if (index >= records.size() || records[index].owner != w.client ||
        records[index].generation != w.command.generation) {
      ++counters.drops[static_cast<std::size_t>(DropReason::kUnownedCommand)];
      continue;
    }
    Result<sim::Command> translated = protocol::translate_client_command(w.command, *world, tick);
    if (!translated) {
      spdlog::debug("client {} command {}: {}", w.client, w.command.sequence, translated.error().message);
      ++counters.drops[static_cast<std::size_t>(DropReason::kBadCommand)];
      continue;
    }
    world->submit(kClientSubmitterBase + w.client, std::move(translated).value());
    ++counters.commands_applied;
  }
  waiting_commands.resize(kept);
}

void Server::Impl::send_owner_states(uint32_t tick, int64_t now_us) {
  for (const auto& replica : replicator->clients()) {
    if (replica->owned_sent.empty() || !replica->due(tick)) continue;
    const auto processed = processed_sequences.find(replica->id);
    for (const uint32_t id : replica->owned_sent) {
      const std::size_t index = mirror->find(id);
      if (index >= mirror->records().size()) continue;
      protocol::OwnerState state;
      state.server_tick = tick;
      state.entity_id = id;
      state.generation = mirror->records()[index].generation;
      state.applied_sequence = processed == processed_sequences.end() ? 0 : processed->second;
      state.state = world->entity_snapshot(id);
      // A frozen pose without a chain can outgrow a datagram: that entity is then not sent.
      if (state.state.empty() || state.state.size() > protocol::kMaxOwnerStateBytes) continue;
      Result<std::vector<uint8_t>> bytes = protocol::encode_message(state);
      if (!bytes) continue;
      connections->send(*replica->connection, bytes.value(), now_us);
      ++counters.owner_states_sent;
    }
  }
}

void Server::Impl::forget_client_commands(uint32_t client) {
  std::erase_if(waiting_commands, [client](const WaitingCommand& w) { return w.client == client; });
  processed_sequences.erase(client);
}

}  // namespace posecast::server
