#pragma once
// The PoseRecipe of an entity's pose when that pose is layer 0's motion alone: what lets the
// codec predict the pose from the shared clips (docs/codec.md, "Clip-dictionary prediction").

#include "posecast/model.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sim/animation_state.h"

namespace posecast::server {

// The recipe of a pose that is layer 0's motion alone (sim::shows_base_layer_only): a plain
// blend of the rig's clips, a crossfade from a playing motion to another (both motions'
// clips and the fade state; docs/codec.md), or a crossfade from a frozen pose whose chain is
// known (sim::FrozenStage: a fade in from the rest pose, an interrupted crossfade, either
// interrupted again up to three times; the chain's clips at each interrupt and fade states,
// and the new target). A frozen pose with no chain (a longer one, a restored state) has no
// recipe. False (count 0) for anything else. steady_us is left for the caller, which knows
// the tick's commands.
bool base_layer_recipe(const sim::EntityState& state, const Rig& rig, protocol::PoseRecipe& out);

}  // namespace posecast::server
