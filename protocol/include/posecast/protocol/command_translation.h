#pragma once
// A client's ClientCommand as the animator command it stands for: one implementation, used by
// the server (applying an owner's command) and by a predicting client (applying the same
// command to its own World first; docs/client.md, "Prediction"), so both apply the same bits.

#include <cstdint>

#include "posecast/protocol/messages.h"
#include "posecast/result.h"
#include "posecast/sim/commands.h"
#include "posecast/sim/world.h"

namespace posecast::protocol {

// The sim::Command for `command` at `tick`, read against `world`'s state of the entity now
// (a Seek keeps the layer's current speed; clip indices are checked against the entity's
// rig): call it at the tick the command is applied, before that tick runs. Authority
// (ownership, generation) is the caller's to check. Errors name the sequence, op and field
// ("command 7 (crossfade): clip 9 out of range"): unknown entity, layer, clip, or a value out
// of the World's ranges.
Result<sim::Command> translate_client_command(const ClientCommand& command, const sim::World& world,
                                              uint64_t tick);

}  // namespace posecast::protocol
