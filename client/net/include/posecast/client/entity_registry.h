#pragma once
// EntityRegistry: the entities a client knows from EntitySpawn / EntityDespawn
// (docs/session.md, "Entities"), with what decoding and presenting each one needs.
//
// Generations: a spawn with a newer generation (16-bit serial arithmetic) replaces the entity
// (the id was reused); an older or equal one is a repeat or stale and changes nothing. A
// despawn applies only to the generation it names. A despawned entity stays until the render
// time passes its despawn tick (its last poses still play), then retire() removes it.
// Retired (id, generation) pairs are remembered, so a late repeat of an old spawn does not
// bring a despawned entity back. Iteration is in entity id order: no pointer- or
// hash-dependent order.
//
// Storage: one vector sorted by id (binary search, contiguous iteration). A frame walks every
// entity, and a std::map put each entity in its own heap node (a pointer chase and a likely
// cache miss per entity); spawns and retirements, which shift the vector, are rare by
// comparison. Pointers from find() and spans from entities() are valid until the next
// on_spawn(), retire() or clear().

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "posecast/client/asset_library.h"
#include "posecast/client/pose_track.h"
#include "posecast/client/root_track.h"
#include "posecast/protocol/messages.h"
#include "posecast/skeleton.h"

namespace posecast::client {

struct ClientEntity {
  uint32_t id = 0;
  uint16_t generation = 0;
  uint32_t model_id = 0;
  uint16_t rig_index = 0;
  uint32_t spawn_tick = 0;
  uint32_t despawn_tick = protocol::kNoTick;  // kNoTick while alive
  const ClientModel* model = nullptr;
  const Skeleton* skeleton = nullptr;
  const protocol::PoseFormat* format = nullptr;
  protocol::ClipDictionary* dictionary = nullptr;  // the rig's, for dictionary-predicted records
  // The rig's clips for render-time recipes (empty when the format's clip durations do not
  // match them), set at the spawn rather than looked up every frame.
  RecipeSource recipes;
  // Presentation state, reset with external_scratch: present it with a PresentScratch.
  PoseTrack track;
  RootTrack root_track;  // where it stands, from the same windows (root_track.h)

  bool alive_at(uint32_t tick) const {
    return tick >= spawn_tick && (despawn_tick == protocol::kNoTick || tick < despawn_tick);
  }
};

enum class SpawnOutcome : uint8_t {
  kAdded,         // new entity
  kReplaced,      // newer generation of a known id
  kRepeat,        // same generation (spawns are repeated until acked)
  kStale,         // older generation
  kUnknownModel,  // model id not in the manifest, or rig index out of range
};

enum class DespawnOutcome : uint8_t { kApplied, kRepeat, kUnknown, kStale };

// True when generation a is newer than b (16-bit serial number arithmetic, RFC 1982).
inline bool generation_newer(uint16_t a, uint16_t b) {
  return a != b && static_cast<uint16_t>(a - b) < 0x8000u;
}

class EntityRegistry {
 public:
  SpawnOutcome on_spawn(const protocol::EntitySpawn& spawn, const AssetBinding& assets);
  DespawnOutcome on_despawn(const protocol::EntityDespawn& despawn);
  // Removes despawned entities whose despawn tick is at or before `tick`; returns how many.
  std::size_t retire(uint32_t tick);
  void clear() {
    entities_.clear();
    retired_.clear();
  }

  const ClientEntity* find(uint32_t id) const;
  ClientEntity* find(uint32_t id);
  // find(), trying the entity at index `hint` first (callers walking ids in order).
  const ClientEntity* find(uint32_t id, std::size_t hint) const;
  std::size_t size() const { return entities_.size(); }
  // In id order.
  std::span<ClientEntity> entities() { return entities_; }
  std::span<const ClientEntity> entities() const { return entities_; }

 private:
  std::vector<ClientEntity>::iterator lower_bound(uint32_t id);

  std::vector<ClientEntity> entities_;  // sorted by id, ids unique
  std::map<uint32_t, uint16_t> retired_;  // id -> generation last retired
};

}  // namespace posecast::client
