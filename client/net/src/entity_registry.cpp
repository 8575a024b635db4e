#include "posecast/client/entity_registry.h"

#include <algorithm>

namespace posecast::client {

std::vector<ClientEntity>::iterator EntityRegistry::lower_bound(uint32_t id) {
  return std::lower_bound(entities_.begin(), entities_.end(), id,
                          [](const ClientEntity& e, uint32_t v) { return e.id < v; });
}

SpawnOutcome EntityRegistry::on_spawn(const protocol::EntitySpawn& spawn,
                                      const AssetBinding& assets) {
  if (auto gone = retired_.find(spawn.entity_id);
      gone != retired_.end() && !generation_newer(spawn.generation, gone->second)) {
    return SpawnOutcome::kStale;
  }
  auto it = lower_bound(spawn.entity_id);
  const bool known_id = it != entities_.end() && it->id == spawn.entity_id;
  if (known_id) {
    const ClientEntity& known = *it;
    if (spawn.generation == known.generation) return SpawnOutcome::kRepeat;
    if (!generation_newer(spawn.generation, known.generation)) return SpawnOutcome::kStale;
  }
  const ClientModel* model = assets.find(spawn.model_id);
  if (model == nullptr || spawn.rig_index >= model->model->rigs.size()) {
    return SpawnOutcome::kUnknownModel;
  }
  const bool replaced = known_id;
  if (!known_id) it = entities_.insert(it, ClientEntity{});
  ClientEntity& entity = *it;
  entity.id = spawn.entity_id;
  entity.generation = spawn.generation;
  entity.model_id = spawn.model_id;
  entity.rig_index = spawn.rig_index;
  entity.spawn_tick = spawn.tick;
  entity.despawn_tick = protocol::kNoTick;
  entity.model = model;
  entity.skeleton = &model->model->rigs[spawn.rig_index].skeleton;
  entity.format = model->formats[spawn.rig_index].get();
  entity.dictionary = model->dictionaries[spawn.rig_index].get();
  // AssetLibrary::add validated the model's skeletons.
  entity.recipes = RecipeSource{};
  const Rig& rig = model->model->rigs[spawn.rig_index];
  if (entity.format != nullptr && rig.clips.size() == entity.format->clip_durations_us.size()) {
    entity.recipes.clips = rig.clips;
    entity.recipes.clip_durations_us = entity.format->clip_durations_us;
    entity.recipes.assets_validated = true;  // AssetLibrary::add validated every clip
  }
  // The Presenter presents every entity with its one PresentScratch.
  entity.track.reset(entity.skeleton->node_count(), entity.skeleton->joint_count(),
                     /*skeleton_validated=*/true, sim::max_clip_tracks(rig.clips),
                     /*external_scratch=*/true);
  return replaced ? SpawnOutcome::kReplaced : SpawnOutcome::kAdded;
}

DespawnOutcome EntityRegistry::on_despawn(const protocol::EntityDespawn& despawn) {
  ClientEntity* found = find(despawn.entity_id);
  if (found == nullptr) return DespawnOutcome::kUnknown;
  ClientEntity& entity = *found;
  if (entity.generation != despawn.generation) return DespawnOutcome::kStale;
  if (entity.despawn_tick != protocol::kNoTick) return DespawnOutcome::kRepeat;
  entity.despawn_tick = despawn.tick;
  return DespawnOutcome::kApplied;
}

std::size_t EntityRegistry::retire(uint32_t tick) {
  const auto due = [tick](const ClientEntity& e) {
    return e.despawn_tick != protocol::kNoTick && e.despawn_tick <= tick;
  };
  std::size_t removed = 0;
  for (const ClientEntity& e : entities_) {
    if (due(e)) {
      retired_[e.id] = e.generation;
      ++removed;
    }
  }
  if (removed > 0) std::erase_if(entities_, due);  // keeps the order
  return removed;
}

const ClientEntity* EntityRegistry::find(uint32_t id) const {
  return const_cast<EntityRegistry*>(this)->find(id);
}

const ClientEntity* EntityRegistry::find(uint32_t id, std::size_t hint) const {
  if (hint < entities_.size() && entities_[hint].id == id) return &entities_[hint];
  return find(id);
}

ClientEntity* EntityRegistry::find(uint32_t id) {
  auto it = lower_bound(id);
  return it != entities_.end() && it->id == id ? &*it : nullptr;
}

}  // namespace posecast::client
