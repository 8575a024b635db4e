// The server's entity records: mirrored from the World after every tick, quantised inside the
// World's evaluation pass on ticks that send snapshots, and the history of poses each entity
// was sent with (the baselines clients may ack).

#include <algorithm>
#include <utility>

#include "posecast/sim/playback_time.h"
#include "server_impl.h"

namespace posecast::server {

const protocol::QuantizedPose* EntityRecord::pose_at(uint32_t tick) const {
  for (std::size_t k = 0; k < history_size; ++k) {
    const HistoryEntry& entry = history_entry(k);
    if (entry.tick == tick) return &entry.pose;
  }
  return nullptr;
}

const HistoryEntry& EntityRecord::history_entry(std::size_t k) const {
  const std::size_t at = history_head + k;  // < 2 * history.size()
  return history[at < history.size() ? at : at - history.size()];
}

HistoryEntry& EntityRecord::history_entry(std::size_t k) {
  return const_cast<HistoryEntry&>(std::as_const(*this).history_entry(k));
}

void EntityRecord::drop_oldest_history() {
  history_head = history_head + 1 == history.size() ? 0 : history_head + 1;
  --history_size;
}

const protocol::QuantizedPose& EntityRecord::last_quantized() const {
  return current_in_history ? history_entry(history_size - 1).pose : current;
}

HistoryEntry& EntityRecord::push_history() {
  if (history_size == history.size()) {
    // Full ring: straighten it (oldest first) and add a slot. Only while the history grows to
    // its steady depth.
    std::rotate(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(history_head),
                history.end());
    history_head = 0;
    history.emplace_back();
  }
  return history_entry(history_size++);
}

std::size_t Server::Impl::find_entity_index(sim::EntityId id) const {
  const auto it = std::lower_bound(entity_ids.begin(), entity_ids.end(), id);
  if (it == entity_ids.end() || *it != id) return entities.size();
  return static_cast<std::size_t>(it - entity_ids.begin());
}

bool Server::Impl::due(const ClientSession& client, uint32_t tick) const {
  return (tick + client.send_phase) % client.send_interval_ticks == 0;
}

namespace {

// Appends the contributing clips of `motion` (weight > 0, in the animator's blend order, which
// skips weight-0 clips) to `out`. False when none contributes, a clip or time is out of range, or
// more than a motion's (or a recipe's) inputs would be needed.
bool append_motion(const sim::Motion& motion, const Rig& rig, protocol::PoseRecipe& out) {
  const uint8_t first = out.count;
  for (uint8_t i = 0; i < motion.count && i < sim::kMaxBlendClips; ++i) {
    const sim::ClipSlot& slot = motion.slots[i];
    if (!(slot.weight > 0.0f)) continue;
    if (slot.clip >= rig.clips.size() || out.count - first >= protocol::kMaxRecipeMotionInputs ||
        out.count >= protocol::kMaxRecipeInputs) {
      return false;
    }
    const int64_t time = sim::sample_time_us(slot.phase, rig.clips[slot.clip].duration_us, motion.wrap);
    if (time < 0 || time > protocol::kMaxRecipeTimeUs) return false;
    out.inputs[out.count++] = protocol::PoseRecipe::Input{slot.clip, time, slot.weight};
  }
  return out.count > first;
}

static_assert(sim::kMaxFrozenStages == protocol::kMaxFrozenMixes + 1,
              "a frozen chain the animator keeps is one a recipe can carry");

// Appends a frozen chain's base: its motion, or the rest pose's input (protocol::kRestInput)
// for a chain that began with a fade in from rest.
bool append_chain_base(const sim::Motion& base, const Rig& rig, protocol::PoseRecipe& out) {
  if (base.count > 0) return append_motion(base, rig, out);
  if (rig.clips.empty() || out.count >= protocol::kMaxRecipeInputs) return false;
  out.inputs[out.count++] = protocol::kRestInput;
  return true;
}

// The source block of a fade from a frozen pose whose chain is known (sim::FrozenStage): a
// base alone (the rest pose) is a crossfade source at speed 0; a longer chain is the frozen
// chain of docs/codec.md. False when it does not fit a recipe.
bool append_frozen_source(const std::vector<sim::FrozenStage>& chain, const Rig& rig,
                          protocol::PoseRecipe& out) {
  if (chain.empty() || chain.size() > sim::kMaxFrozenStages ||
      !append_chain_base(chain[0].motion, rig, out)) {
    return false;
  }
  if (chain.size() > 1) {
    out.frozen_source_count = out.count;
    for (std::size_t k = 1; k < chain.size(); ++k) {
      const sim::FrozenStage& stage = chain[k];
      if (!protocol::recipe_fade_in_range(stage.fade_elapsed_us, stage.fade_duration_us) ||
          !append_motion(stage.motion, rig, out)) {
        return false;
      }
      out.frozen_mixes[out.frozen_mix_count++] =
          protocol::PoseRecipe::FrozenMix{stage.fade_elapsed_us, stage.fade_duration_us, out.count};
    }
  }
  out.source_count = out.count;
  out.source_speed = 0;  // the frozen pose does not move
  out.source_wrap = 0;
  return true;
}

// The recipe of a pose that is layer 0's motion alone (sim::shows_base_layer_only): a plain
// blend of the rig's clips, a crossfade from a playing motion to another (both motions'
// clips and the fade state; docs/codec.md), or a crossfade from a frozen pose whose chain is
// known (sim::FrozenStage: a fade in from the rest pose, an interrupted crossfade, either
// interrupted again up to three times; the chain's clips at each interrupt and fade states,
// and the new target). A frozen pose with no chain (a longer one, a restored state) has no
// recipe. False (count 0) for anything else. steady_us is set later (sync_entities), once the
// tick's commands are known.
bool base_layer_recipe(const sim::EntityState& state, const Rig& rig, protocol::PoseRecipe& out) {
  out.count = 0;
  if (!sim::shows_base_layer_only(state)) return false;
  const sim::Layer& layer = state.layers[0];
  const bool fade_ok = protocol::recipe_fade_in_range(layer.fade_elapsed_us, layer.fade_duration_us);
  if (layer.fade_source == sim::FadeSource::kFrozenPose) {
    if (!fade_ok || !append_frozen_source(layer.frozen_chain, rig, out)) {
      out = protocol::PoseRecipe{};
      return false;
    }
    out.fade_elapsed_us = layer.fade_elapsed_us;
    out.fade_duration_us = layer.fade_duration_us;
  } else if (layer.fade_source == sim::FadeSource::kMotion) {
    if (!fade_ok || !append_motion(layer.source, rig, out)) {
      out.count = 0;
      return false;
    }
    out.source_count = out.count;
    out.source_speed = layer.source.speed;
    out.source_wrap = static_cast<uint8_t>(layer.source.wrap);
    out.fade_elapsed_us = layer.fade_elapsed_us;
    out.fade_duration_us = layer.fade_duration_us;
  } else if (layer.fade_source != sim::FadeSource::kNone) {
    return false;
  }
  if (!append_motion(layer.target, rig, out)) {
    out = protocol::PoseRecipe{};
    return false;
  }
  out.speed = layer.target.speed;
  out.wrap = static_cast<uint8_t>(layer.target.wrap);
  return true;
}

float distance_squared(const Vec3& a, const Vec3& b) {
  const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return dx * dx + dy * dy + dz * dz;
}

}  // namespace

// Decides which entities the coming tick quantises: those some client due this tick could be
// sent (its subscription, its radius, or everything for a client without either).
void Server::Impl::prepare_quantization(uint32_t tick) {
  quantize_this_tick = false;
  for (const auto& client : clients) quantize_this_tick |= due(*client, tick);
  if (!quantize_this_tick) {
    world->set_local_pose_observer(nullptr, nullptr);
    return;
  }
  bool everything = false;
  for (const uint32_t i : wanted_indices) record_wanted[i] = 0;
  wanted_indices.clear();
  record_wanted.resize(entities.size());  // sync_entities keeps it sized; a guard
  const auto want = [&](std::size_t i) {
    if (record_wanted[i] != 0) return;
    record_wanted[i] = 1;
    wanted_indices.push_back(static_cast<uint32_t>(i));
  };
  for (const auto& client : clients) {
    if (!due(*client, tick)) continue;
    const Interest& interest = client->interest;
    if (client->subscribed_sorted.empty() && !interest.use_radius) {
      everything = true;
      break;
    }
    for (sim::EntityId id : client->subscribed_sorted) {
      const std::size_t i = find_entity_index(id);
      if (i < entities.size()) want(i);
    }
    if (interest.use_radius) {
      const float r2 = interest.radius * interest.radius;
      for (std::size_t i = 0; i < entities.size(); ++i) {
        if (distance_squared(entities[i].position, interest.center) <= r2) want(i);
      }
    }
  }
  if (everything) {
    for (std::size_t i = 0; i < entities.size(); ++i) want(i);
  }
  // Entities spawned by this tick's commands have no record yet; they are quantised too (rare).
  quantize_unknown = true;
  // Staging is indexed by the World's entity index after this tick's commands: at most the
  // current count plus one spawn per queued command.
  const std::size_t bound = world->entity_count() + world->pending_commands() + 16;
  if (staged.size() < bound) staged.resize(bound);
  staged_indices.resize(world->threads());
  for (auto& indices : staged_indices) indices.clear();
  // The World evaluates only these poses (it computes no palettes for the server unless
  // ServerOptions::world_palettes): the other entities' clocks advance without one.
  world->set_local_pose_observer(&Server::Impl::observe_pose, this, &Server::Impl::pose_wanted);
}

std::size_t Server::Impl::record_of(std::size_t index, sim::EntityId id) const {
  // Records are kept in the World's entity order (sync_entities merges them by world index),
  // so the record at `index` is normally this entity's: check it before searching.
  return index < entity_ids.size() && entity_ids[index] == id ? index : find_entity_index(id);
}

bool Server::Impl::pose_wanted(void* context, std::size_t index, sim::EntityId id) {
  const Impl& impl = *static_cast<const Impl*>(context);
  const std::size_t record = impl.record_of(index, id);
  if (record < impl.entities.size()) return impl.record_wanted[record] != 0;
  return impl.quantize_unknown;
}

// Runs on the World's evaluation threads. Each world index is visited by exactly one worker,
// and it writes only staged[index] and that worker's quantizers: no locks. Records are read
// only (nothing modifies them during the pass).
void Server::Impl::observe_pose(void* context, std::size_t index, sim::EntityId id,
                                std::span<const Transform> pose, unsigned worker) {
  Impl& impl = *static_cast<Impl*>(context);
  if (index >= impl.staged.size()) {
    impl.staged_overflow.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Staged& staged = impl.staged[index];
  staged.valid = false;
  staged.id = id;
  const std::size_t record = impl.record_of(index, id);
  uint32_t format = 0;
  const protocol::QuantizedPose* reference = nullptr;
  if (record < impl.entities.size()) {
    if (impl.record_wanted[record] == 0) return;  // a World with palettes observes every entity
    const EntityRecord& entity = impl.entities[record];
    format = entity.format_index;
    // The previous quantised pose keeps rotation axes stable (quantization.h, hysteresis).
    if (entity.current_tick != kNoTick) reference = &entity.last_quantized();
  } else {
    if (!impl.quantize_unknown) return;
    const sim::EntityState* state = impl.world->entity_at(index);
    if (state == nullptr || state->id != id || state->model >= impl.format_of.size() ||
        state->rig >= impl.format_of[state->model].size()) {
      return;
    }
    format = impl.format_of[state->model][state->rig];
  }
  if (worker >= impl.quantizers.size() || worker >= impl.staged_indices.size()) return;
  protocol::PoseQuantizer& quantizer = *impl.quantizers[worker][format];
  if (staged.pose.values.size() != impl.formats[format]->node_count() * protocol::kValuesPerNode) {
    staged.pose.reset(*impl.formats[format]);
  }
  staged.pose.recipe = protocol::PoseRecipe{};
  if (impl.options.attach_recipes) {
    // The entity's state is the one this pass just evaluated (the worker advances it after
    // this call), and only this worker touches it. By index: a search costs a miss per probe.
    const sim::EntityState* state = impl.world->entity_at(index);
    if (state != nullptr && state->id == id) {
      base_layer_recipe(*state, *impl.format_rig[format], staged.pose.recipe);
    }
  }
  // A pose with a recipe is quantised without a reference, as the clip dictionary predicts
  // (ClipDictionary::predict): its codes are then the prediction's, which encoding vouches for
  // (PoseEncodeOptions::recipe_reproduces_pose). Other poses keep their axes stable against
  // the previous tick's (hysteresis) for smaller deltas.
  if (staged.pose.recipe.count > 0) reference = nullptr;
  staged.valid = quantizer.quantize(pose, reference, staged.pose);
  if (staged.valid) {
    impl.staged_indices[worker].push_back(static_cast<uint32_t>(index));
  } else {
    staged.pose.recipe = protocol::PoseRecipe{};
  }
}

void Server::Impl::sync_entities(uint32_t tick) {
  const std::size_t count = world->entity_count();
  // An id despawned and spawned again within this tick looks unchanged in the id list: find
  // those in the tick's commands (a despawn followed by a spawn of the same id), so the new
  // entity gets a new generation (and possibly another model).
  respawned.clear();
  {
    despawned_now.clear();
    for (const sim::QueuedCommand& queued : world->last_tick_commands()) {
      const sim::Command& command = queued.command;
      if (std::holds_alternative<sim::DespawnCommand>(command.body)) {
        despawned_now.push_back(command.entity);
      } else if (std::holds_alternative<sim::SpawnCommand>(command.body) &&
                 std::find(despawned_now.begin(), despawned_now.end(), command.entity) != despawned_now.end()) {
        respawned.push_back(command.entity);
      }
    }
    // A World moved by the embedder (a replay's restore) may hold, under a known id, another
    // entity than the record's: a new generation when its model or rig differ.
    if (world_moved) {
      for (std::size_t w = 0; w < count; ++w) {
        const sim::EntityId id = world->entity_id_at(w);
        const std::size_t r = find_entity_index(id);
        const sim::EntityState* state = world->find_entity(id);
        if (r < entities.size() && state != nullptr &&
            (state->model != entities[r].model || state->rig != entities[r].rig)) {
          respawned.push_back(id);
        }
      }
    }
    std::sort(respawned.begin(), respawned.end());
  }
  // The World's membership version says whether any entity came or went (or the World was
  // restored) since the last sync: then the ids are compared, else they are known equal
  // (comparing them costs a cache miss per entity at 10,000 entities).
  bool same = count == entities.size() && respawned.empty();
  if (same && world->membership_version() != synced_membership_version) {
    for (std::size_t i = 0; same && i < count; ++i) same = world->entity_id_at(i) == entity_ids[i];
  }
  synced_membership_version = world->membership_version();
  if (!same) {
    // Merge the World's ids (sorted) with the records (sorted): keep, create, or retire.
    std::vector<EntityRecord> next;
    next.reserve(count);
    std::size_t r = 0;
    auto retire = [&](EntityRecord& gone) {
      last_generation[gone.id] = gone.generation;
      if (gone.owner != 0) ++ownership_version;  // its owner's SessionStatus changes
      for (auto& client : clients) {
        ClientEntity* known = client->find_entity(gone.id);
        if (known == nullptr) continue;
        if (known->generation == gone.generation && known->spawn_sent) {
          PendingDespawn despawn;
          despawn.message = protocol::EntityDespawn{gone.id, gone.generation, tick};
          client->despawns.push_back(std::move(despawn));
        }
        client->entities.erase(client->entities.begin() + (known - client->entities.data()));
      }
    };
    for (std::size_t w = 0; w < count; ++w) {
      const sim::EntityId id = world->entity_id_at(w);
      while (r < entities.size() && entities[r].id < id) retire(entities[r++]);
      if (r < entities.size() && entities[r].id == id) {
        if (!std::binary_search(respawned.begin(), respawned.end(), id)) {
          next.push_back(std::move(entities[r++]));
          continue;
        }
        retire(entities[r++]);  // the old entity went; a new one took its id
      }
      EntityRecord created;
      created.id = id;
      const auto previous = last_generation.find(id);
      created.generation = previous == last_generation.end() ? 1 : static_cast<uint16_t>(previous->second + 1);
      const sim::EntityState* state = world->find_entity(id);
      created.model = state->model;
      created.rig = state->rig;
      created.spawn_tick = tick;
      created.changed_tick = tick;
      created.format_index = format_of[state->model][state->rig];
      created.current.reset(*formats[created.format_index]);
      next.push_back(std::move(created));
    }
    while (r < entities.size()) retire(entities[r++]);
    entities.swap(next);
    entity_ids.clear();
    for (const EntityRecord& entity : entities) entity_ids.push_back(entity.id);
    // This tick's flags are used; the records they were set on moved.
    record_wanted.assign(entities.size(), 0);
    wanted_indices.clear();
  }
  // The tick of the last command for each entity: recipes say how long their motion has been
  // steady (PoseRecipe::steady_us), so clients know where a command split the motion.
  // A World moved by the embedder (a replay's seek or restore) changed every entity's motion.
  if (world_moved) {
    for (EntityRecord& entity : entities) entity.changed_tick = tick;
  }
  for (const sim::QueuedCommand& queued : world->last_tick_commands()) {
    const std::size_t i = find_entity_index(queued.command.entity);
    if (i < entities.size()) entities[i].changed_tick = tick;
  }
  if (!quantize_this_tick) return;
  const int64_t now_us = sim::tick_start_us(tick, options.tick_rate_hz);
  // The poses staged this tick, in world index order (the order of the pose callback).
  staged_order.clear();
  for (const auto& indices : staged_indices) staged_order.insert(staged_order.end(), indices.begin(), indices.end());
  std::sort(staged_order.begin(), staged_order.end());
  for (const uint32_t i : staged_order) {
    if (i >= count || i >= staged.size()) continue;
    Staged& s = staged[i];
    if (!s.valid || s.id != entities[i].id) continue;
    EntityRecord& entity = entities[i];
    // The values change hands (the staging slot keeps a buffer for its next pose); the recipe
    // is copied once (std::swap of a QuantizedPose would move its 248-byte recipe three times).
    entity.current.values.swap(s.pose.values);
    entity.current.off_layout = s.pose.off_layout;
    entity.current.recipe = s.pose.recipe;
    entity.current_in_history = false;
    entity.current_tick = tick;
    if (entity.current.recipe.count > 0) {
      const int64_t since = entity.changed_tick == kNoTick
                                ? protocol::kMaxRecipeTimeUs
                                : now_us - sim::tick_start_us(entity.changed_tick, options.tick_rate_hz);
      entity.current.recipe.steady_us = std::clamp<int64_t>(since, 0, protocol::kMaxRecipeTimeUs);
    }
    s.valid = false;
    ++counters.poses_quantized;
    if (pose_callback) pose_callback(tick, entity.id, entity.generation, entity.current);
  }
}

namespace {

// Drops the entity's history entries older than `oldest_needed`.
// The newest entry stays while it holds the entity's last quantised pose (current_in_history).
void prune_history(EntityRecord& entity, uint32_t oldest_needed) {
  const std::size_t keep = entity.current_in_history ? 1 : 0;
  while (entity.history_size > keep && entity.history_entry(0).tick < oldest_needed) {
    entity.drop_oldest_history();
  }
}

}  // namespace

void Server::Impl::commit_encoded(SendScratch& scratch, uint32_t tick, uint32_t oldest_needed) {
  for (const uint32_t index : scratch.encoded_entities) {
    if (index >= entities.size()) continue;
    EntityRecord& entity = entities[index];
    if (entity.sent_this_tick) {
      if (entity.history_size == kMaxHistory) entity.drop_oldest_history();
      // The pose moves into the history (with its recipe: the next records predict clip times
      // from it); `current` takes the recycled slot's value buffer. The values are swapped, not
      // copied: a copy writes a cold kilobyte per entity.
      HistoryEntry& slot = entity.push_history();
      slot.tick = tick;
      slot.pose.values.swap(entity.current.values);
      slot.pose.off_layout = entity.current.off_layout;
      slot.pose.recipe = entity.current.recipe;
      entity.current_in_history = true;
      entity.sent_this_tick = false;
    }
    prune_history(entity, oldest_needed);
    entity.variant_count = 0;
    entity.encoded.clear();
  }
  scratch.encoded_entities.clear();
}

// Keeps the poses sent this tick and forgets those no client can reference any more: older
// than every view a client may still code against, or beyond kMaxHistory per entity.
void Server::Impl::commit_history(uint32_t tick) {
  if (!quantize_this_tick) return;
  uint32_t oldest_needed = tick;
  for (const auto& client : clients) {
    // References now: the newest acked snapshot and the two acked before it; after a newer ack
    // they move up by one. So nothing older than the third newest acked is needed; with fewer
    // acks, any snapshot still in the ring may become a reference.
    uint32_t acked[3] = {kNoTick, kNoTick, kNoTick};  // newest first
    for (const SentSnapshot& s : client->ring) {
      if (s.tick == kNoTick || !s.acked) continue;
      uint32_t t = s.tick;
      for (uint32_t& slot : acked) {
        if (slot == kNoTick || t > slot) std::swap(slot, t);
        if (t == kNoTick) break;
      }
    }
    const uint32_t cut = acked[2] != kNoTick ? acked[2] : 0;
    for (const SentSnapshot& s : client->ring) {
      if (s.tick == kNoTick || s.tick < cut) continue;
      oldest_needed = std::min(oldest_needed, s.min_pose_tick);
    }
  }
  // The records encoded this tick (the records sent to anyone are among them); the others'
  // caches are empty and their flags clear. (On the send pool this was no faster on 2 cores:
  // the work is cache misses, about 0.4 us a record, and waking the pool costs as much.)
  for (SendScratch& scratch : send_scratch) commit_encoded(scratch, tick, oldest_needed);
  // Entities no longer sent keep history until this sweep reaches them: a slice per send
  // tick, every record within kHistorySweepTicks of them.
  const std::size_t slice = (entities.size() + kHistorySweepTicks - 1) / kHistorySweepTicks;
  for (std::size_t k = 0; k < slice; ++k) {
    if (history_sweep_next >= entities.size()) history_sweep_next = 0;
    prune_history(entities[history_sweep_next++], oldest_needed);
  }
}

}  // namespace posecast::server
