#pragma once
// The server's side of root transforms on the wire (docs/codec.md, "Root transforms"): the
// World's root of an entity as codec values, and the held root each tick's record carries.

#include <cstdint>

#include "entity_record.h"
#include "posecast/protocol/root_coding.h"
#include "posecast/sim/animation_state.h"

namespace posecast::server {

// Where `state`'s entity stands, in root_coding's terms.
protocol::RootValue world_root(const sim::EntityState& state);

// The held root of `entity` at `tick` for the World's root `exact` (quantised: `exact_codes`):
// protocol::hold_root against its newest history entry at least `reference_ticks` (the send
// interval) older than `tick`, else its newest entry older than `tick` (the canonical
// reference: a client whose baseline is that entry, one that acks each snapshot before the
// next, derives the held root without a byte while the entity moves as predicted, and its
// implied velocity after a change of motion). With clients on spread send phases the history
// holds every tick, and the newest entry would be no client's baseline. Velocities are
// measured against the exact root of the newest entry at least kRootVelocitySpan ticks old (or
// the oldest entry).
protocol::QuantizedRoot hold_root_for(const EntityRecord& entity, uint32_t tick, uint32_t reference_ticks,
                                      const protocol::RootValue& exact,
                                      const protocol::QuantizedRoot& exact_codes);

}  // namespace posecast::server
