#include "pose_recipe.h"

#include "posecast/sim/playback_time.h"

namespace posecast::server {
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

}  // namespace

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

}  // namespace posecast::server
