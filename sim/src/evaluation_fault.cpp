#include <bit>
#include <cstring>

#include "fault_injection.h"
#include "posecast/hash.h"

namespace posecast::sim {

void apply_palette_fault(const EvaluationFault& fault, uint64_t tick, Entity& entity, bool hash) {
  if (fault.target != EvaluationFault::Target::kPalette || entity.state.id != fault.entity || tick < fault.tick) return;
  const std::size_t value = fault.bit / 32;
  if (value >= entity.palette.size() * 16) return;
  float& f = entity.palette[value / 16][static_cast<int>(value % 16 / 4)][static_cast<int>(value % 4)];
  f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) ^ (uint32_t{1} << (fault.bit % 32)));
  if (hash) entity.palette_hash = hash_palette(entity.palette);
}

void apply_state_fault(const EvaluationFault& fault, uint64_t tick, Entity& entity) {
  if (fault.target != EvaluationFault::Target::kState || entity.state.id != fault.entity || tick != fault.tick) return;
  EntityState& s = entity.state;
  if (!s.layers.empty()) {
    s.layers[0].target.slots[0].phase ^= int64_t{1} << (fault.bit % 64);
  } else {
    s.root.x = std::bit_cast<float>(std::bit_cast<uint32_t>(s.root.x) ^ (uint32_t{1} << (fault.bit % 32)));
  }
}

}  // namespace posecast::sim
