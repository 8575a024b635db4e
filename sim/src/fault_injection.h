#pragma once
// Internal: applies a WorldOptions::fault (evaluation_fault.h) to an entity in the evaluation
// pass. Only called when a fault is set.

#include <cstdint>

#include "posecast/sim/evaluation_fault.h"
#include "world_tables.h"

namespace posecast::sim {

// After the entity's evaluation at `tick`: flips the palette bit (kPalette, from the fault's
// tick on) and recomputes the palette hash when `hash`.
void apply_palette_fault(const EvaluationFault& fault, uint64_t tick, Entity& entity, bool hash);
// After the entity advanced at `tick`: flips the state bit (kState, at the fault's tick only).
void apply_state_fault(const EvaluationFault& fault, uint64_t tick, Entity& entity);

}  // namespace posecast::sim
