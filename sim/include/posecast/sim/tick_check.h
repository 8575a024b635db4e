#pragma once
// TickCheck: what a recording holds per tick so that a replay verifies every tick without
// hashing every palette (docs/recording-format.md, "TICK"). Two kinds of per-entity hash are
// summed (mod 2^64):
//   - the **state hash** of every entity after the tick (hash_entity_state: layers, clip
//     phases, weights, speeds, fades, root transform, locomotion; tens of bytes an entity);
//   - the **palette hash** (hash_palette) of the entities whose palette is checked at the
//     tick: those whose id slot is the tick's (id % kPaletteCheckPeriod == tick %
//     kPaletteCheckPeriod), so every entity's palette at least once every kPaletteCheckPeriod
//     ticks, plus every entity spawned or targeted by a command at the tick.
// Each kind keeps a total and one sum per bit of the entity id (over the entities whose id has
// that bit set), so when exactly one entity differs, the sums that differ spell its id
// (locate_entity). A recording stores the state total whole, the palette total's low 32 bits
// (kPaletteTotalMask: each palette is checked again every 16 ticks) and of each bit sum its
// low kLocatorBits bits (enough to name the entity, at an eighth of the bytes). Sums are
// commutative, so the worker threads' partial sums give the same bits whatever the thread
// count.

#include <array>
#include <cstdint>
#include <optional>

#include "posecast/sim/animation_state.h"

namespace posecast::sim {

// Every entity's palette is checked at least once every this many ticks.
inline constexpr uint64_t kPaletteCheckPeriod = 16;
// A total plus one sum per bit of a 32-bit entity id.
inline constexpr std::size_t kMaxCheckSums = 33;
// The bits of each per-bit sum that a recording stores and a comparison looks at.
inline constexpr unsigned kLocatorBits = 8;
inline constexpr uint64_t kLocatorMask = (uint64_t{1} << kLocatorBits) - 1;
// The bits of the palette total that a recording stores and a comparison looks at.
inline constexpr uint64_t kPaletteTotalMask = 0xFFFFFFFFull;

// One kind of sum: [0] the total, [1 + b] over the entities whose id has bit b set.
struct CheckSums {
  std::array<uint64_t, kMaxCheckSums> sums{};
  void add(EntityId id, uint64_t hash) {
    sums[0] += hash;
    for (uint32_t bits = id; bits != 0; bits &= bits - 1) sums[1 + static_cast<unsigned>(__builtin_ctz(bits))] += hash;
  }
  void add(const CheckSums& other) {
    for (std::size_t i = 0; i < kMaxCheckSums; ++i) sums[i] += other.sums[i];
  }
  bool operator==(const CheckSums&) const = default;
};

struct TickCheck {
  CheckSums state;     // every entity's state hash after the tick
  CheckSums palettes;  // the checked entities' palette hashes at the tick
  uint32_t palettes_checked = 0;  // how many palettes `palettes` sums
  // Sums stored: 1 + the bit width of the largest entity id (0 entities: 1). Sums past it are 0.
  uint8_t sum_count = 1;
  bool operator==(const TickCheck&) const = default;
};

// Whether a replay's sums match recorded ones: the totals in `total_mask` (~0 for the state,
// kPaletteTotalMask for the palettes), the per-bit sums in their low kLocatorBits bits (all a
// recording holds).
bool same_as_recorded(const CheckSums& replayed, const CheckSums& recorded, uint64_t total_mask);

// Whether entity `id`'s palette is checked at `tick` by its id slot (commands and spawns add
// others: World).
inline bool palette_slot_due(EntityId id, uint64_t tick) {
  return id % kPaletteCheckPeriod == tick % kPaletteCheckPeriod;
}

// The sums to store for a World whose largest entity id is `max_id` (`any`: it has entities).
uint8_t check_sum_count(bool any, EntityId max_id);

// Hash of an entity's deterministic state, without its id (the sums carry the id) and without
// the sampling cursors and derived caches (they never change output): model, rig, each layer's
// mode, weight, mask, reference and fade, its target motion and a fading source motion (count,
// wrap, flags, speed, each active slot's phase, weight and clip), a frozen pose, the root
// transform and sway, the locomotion and the queued waypoints. Any single changed bit changes
// it. 64-bit words on four multiply lanes, then a finaliser (bench_replay BM_StateHash: about
// 15 ns an entity on the bench's Fox crowd).
uint64_t hash_entity_state(const EntityState& state);

// Where two sums of one kind differ when exactly one entity's hash differs (or is present on
// one side only): that entity's id, read from the per-bit sums' low kLocatorBits bits. nullopt
// when they are equal, when the difference is not one entity's (several differ), or when
// the total's difference is 0 in those bits (one divergence in 2^kLocatorBits: the sums
// cannot name the entity).
std::optional<EntityId> locate_entity(const CheckSums& a, const CheckSums& b);

}  // namespace posecast::sim
