#include "posecast/client/entity_registry.h"

namespace posecast::client {

SpawnOutcome EntityRegistry::on_spawn(const protocol::EntitySpawn& spawn,
                                      const AssetBinding& assets) {
  if (auto gone = retired_.find(spawn.entity_id);
      gone != retired_.end() && !generation_newer(spawn.generation, gone->second)) {
    return SpawnOutcome::kStale;
  }
  auto it = entities_.find(spawn.entity_id);
  if (it != entities_.end()) {
    const ClientEntity& known = it->second;
    if (spawn.generation == known.generation) return SpawnOutcome::kRepeat;
    if (!generation_newer(spawn.generation, known.generation)) return SpawnOutcome::kStale;
  }
  const ClientModel* model = assets.find(spawn.model_id);
  if (model == nullptr || spawn.rig_index >= model->model->rigs.size()) {
    return SpawnOutcome::kUnknownModel;
  }
  const bool replaced = it != entities_.end();
  ClientEntity& entity = entities_[spawn.entity_id];
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
  entity.track.reset(entity.skeleton->node_count(), entity.skeleton->joint_count());
  return replaced ? SpawnOutcome::kReplaced : SpawnOutcome::kAdded;
}

DespawnOutcome EntityRegistry::on_despawn(const protocol::EntityDespawn& despawn) {
  auto it = entities_.find(despawn.entity_id);
  if (it == entities_.end()) return DespawnOutcome::kUnknown;
  ClientEntity& entity = it->second;
  if (entity.generation != despawn.generation) return DespawnOutcome::kStale;
  if (entity.despawn_tick != protocol::kNoTick) return DespawnOutcome::kRepeat;
  entity.despawn_tick = despawn.tick;
  return DespawnOutcome::kApplied;
}

std::size_t EntityRegistry::retire(uint32_t tick) {
  std::size_t removed = 0;
  for (auto it = entities_.begin(); it != entities_.end();) {
    if (it->second.despawn_tick != protocol::kNoTick && it->second.despawn_tick <= tick) {
      retired_[it->first] = it->second.generation;
      it = entities_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

const ClientEntity* EntityRegistry::find(uint32_t id) const {
  auto it = entities_.find(id);
  return it == entities_.end() ? nullptr : &it->second;
}

ClientEntity* EntityRegistry::find(uint32_t id) {
  auto it = entities_.find(id);
  return it == entities_.end() ? nullptr : &it->second;
}

}  // namespace posecast::client
