// Applying commands to the world's state (serially, at tick boundaries, in command_order).
// Every command is validated against the state it applies to; a rejected command changes
// nothing and its error says why.

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>

#include "locomotion.h"
#include "posecast/det_math.h"
#include "posecast/sampling.h"
#include "world_impl.h"

namespace posecast::sim {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status check_layer(uint8_t layer) {
  if (layer >= kMaxLayers) {
    return Error{"layer " + str(layer) + " out of range (" + str(kMaxLayers) + " layers)"};
  }
  return {};
}

Layer& layer_of(EntityState& state, uint8_t layer) {
  if (state.layers.size() <= layer) state.layers.resize(static_cast<std::size_t>(layer) + 1);
  return state.layers[layer];
}

Status check_weight(float w, const char* what) {
  if (!std::isfinite(w) || w < 0.0f) return Error{std::string(what) + " must be finite and >= 0"};
  return {};
}

Status check_motion(const MotionSpec& spec, const Rig& rig) {
  if (spec.count < 1 || spec.count > kMaxBlendClips) {
    return Error{"motion has " + str(spec.count) + " clips (1.." + str(kMaxBlendClips) + ")"};
  }
  if (static_cast<uint8_t>(spec.wrap) >= kWrapModeCount) return Error{"unknown wrap mode"};
  for (uint8_t i = 0; i < spec.count; ++i) {
    if (spec.clips[i].clip >= rig.clips.size()) {
      return Error{"clip " + str(spec.clips[i].clip) + " out of range (" +
                   str(static_cast<int64_t>(rig.clips.size())) + " clips)"};
    }
    if (Status s = check_weight(spec.clips[i].weight, "clip weight"); !s) return s;
  }
  return {};
}

// The motion a spec starts: every clip at the start offset, wrapped.
Motion make_motion(const MotionSpec& spec, const Rig& rig) {
  Motion motion;
  motion.count = spec.count;
  motion.wrap = spec.wrap;
  motion.speed = spec.speed;
  motion.root_motion = spec.root_motion ? 1 : 0;
  // Offsets beyond the phase range would overflow the shift: wrap whole clip periods first.
  for (uint8_t i = 0; i < spec.count; ++i) {
    ClipSlot& slot = motion.slots[i];
    slot.clip = spec.clips[i].clip;
    slot.weight = spec.clips[i].weight;
    const int64_t duration = rig.clips[slot.clip].duration_us;
    int64_t offset = spec.start_offset_us;
    const int64_t period_us = spec.wrap == WrapMode::kPingPong ? 2 * duration : duration;
    if (spec.wrap != WrapMode::kClamp && period_us > 0) {
      offset %= period_us;
    } else {
      offset = std::clamp<int64_t>(offset, -kMaxClipDurationUs, kMaxClipDurationUs);
    }
    slot.phase = wrap_phase(offset * (int64_t{1} << kPhaseFractionBits), duration, spec.wrap);
  }
  return motion;
}

// The target's clips start at the normalised phase of `from`'s first clip.
void sync_phases(Motion& motion, const Motion& from, const Rig& rig) {
  if (from.count == 0) return;
  const ClipSlot& lead = from.slots[0];
  const int64_t from_cycle = cycle_length(rig.clips[lead.clip].duration_us, from.wrap);
  for (uint8_t i = 0; i < motion.count; ++i) {
    ClipSlot& slot = motion.slots[i];
    const int64_t duration = rig.clips[slot.clip].duration_us;
    const int64_t to_cycle = cycle_length(duration, motion.wrap);
    slot.phase = wrap_phase(rescale_phase(lead.phase, from_cycle, to_cycle), duration, motion.wrap);
  }
}

// A point on the ground the World accepts: finite, |x| and |z| within kWorldHalfExtent.
Status check_ground_point(float x, float z, const char* what) {
  if (!std::isfinite(x) || !std::isfinite(z)) return Error{std::string(what) + " is not finite"};
  if (std::fabs(x) > kWorldHalfExtent || std::fabs(z) > kWorldHalfExtent) {
    return Error{std::string(what) + " (" + std::to_string(x) + ", " + std::to_string(z) +
                 ") is outside the world (|x|, |z| <= " + std::to_string(kWorldHalfExtent) + ")"};
  }
  return {};
}

Status check_root(const RootTransform& at) {
  if (Status s = check_ground_point(at.x, at.z, "position"); !s) return s;
  if (at.y != 0.0f) return Error{"position y must be 0 (entities stand on the ground plane)"};
  if (!std::isfinite(at.yaw) || std::fabs(at.yaw) > 1.0e6f) return Error{"yaw is not finite"};
  return {};
}

Status check_speed(float speed, bool zero_allowed) {
  if (!std::isfinite(speed) || speed < 0.0f || speed > kMaxMoveSpeed || (!zero_allowed && speed == 0.0f)) {
    return Error{"speed " + std::to_string(speed) + " out of range (" + (zero_allowed ? "0" : "above 0") +
                 ".." + std::to_string(kMaxMoveSpeed) + " units/s)"};
  }
  return {};
}

}  // namespace

Result<int32_t> World::Impl::find_or_add_reference(ModelId model, uint16_t rig_index, int32_t clip,
                                                   int64_t time_us) {
  for (std::size_t i = 0; i < tables.references.size(); ++i) {
    const AdditiveReference& r = tables.references[i];
    if (r.model == model && r.rig == rig_index && r.clip == clip && r.time_us == time_us) {
      return static_cast<int32_t>(i);
    }
  }
  const Rig* rig = tables.rig(model, rig_index);
  if (rig == nullptr) return Error{"unknown model or rig"};
  if (clip < 0 || static_cast<std::size_t>(clip) >= rig->clips.size()) {
    return Error{"reference clip " + str(clip) + " out of range (" +
                 str(static_cast<int64_t>(rig->clips.size())) + " clips)"};
  }
  if (time_us < 0 || time_us > kMaxClipDurationUs) {
    return Error{"reference time " + str(time_us) + " us out of range"};
  }
  AdditiveReference reference;
  reference.model = model;
  reference.rig = rig_index;
  reference.clip = clip;
  reference.time_us = time_us;
  reference.pose.resize(rig->skeleton.node_count());
  SamplingCursor cursor;
  cursor.reset(rig->clips[static_cast<std::size_t>(clip)]);
  SampleJob job;
  job.skeleton = &rig->skeleton;
  job.clip = &rig->clips[static_cast<std::size_t>(clip)];
  job.time_us = time_us;
  job.cursor = cursor.keys;
  job.output = reference.pose;
  if (!job.Run()) return Error{"reference clip " + str(clip) + " cannot be sampled"};
  tables.references.push_back(std::move(reference));
  return static_cast<int32_t>(tables.references.size() - 1);
}

namespace {

// Applies one command to the existing entity entities[index] (every kind but a spawn; a spawn
// of an existing id is rejected). One operator per command kind; std::visit makes the set
// complete.
struct ApplyToEntity {
  World::Impl& world;
  std::size_t index;

  EntityState& state() const { return world.entities[index].state; }
  const Rig& rig() const { return *world.entities[index].rig; }

  Status operator()(const SpawnCommand&) const { return Error{"entity already exists"}; }

  Status operator()(const DespawnCommand&) const {
    world.entities.erase(world.entities.begin() + static_cast<std::ptrdiff_t>(index));
    ++world.membership_version;
    return {};
  }

  Status operator()(const PlayCommand& play) const {
    if (Status s = check_layer(play.layer); !s) return s;
    if (Status s = check_motion(play.motion, rig()); !s) return s;
    if (play.layer == 0) end_locomotion();
    Layer& layer = layer_of(state(), play.layer);
    layer.target = make_motion(play.motion, rig());
    layer.source = Motion{};
    layer.fade_source = FadeSource::kNone;
    layer.fade_elapsed_us = 0;
    layer.fade_duration_us = 0;
    layer.frozen.clear();
    layer.frozen_chain.clear();
    layout_cursors(state(), rig());
    return {};
  }

  Status operator()(const CrossfadeCommand& fade) const {
    if (Status s = check_layer(fade.layer); !s) return s;
    if (Status s = check_motion(fade.motion, rig()); !s) return s;
    if (fade.duration_us < 0) return Error{"crossfade duration is negative"};
    if (fade.layer == 0) end_locomotion();
    Layer& layer = layer_of(state(), fade.layer);
    Motion next = make_motion(fade.motion, rig());
    if (fade.sync_phase) sync_phases(next, layer.target, rig());
    if (Status s = set_fade_source(layer, fade.duration_us); !s) return s;
    layer.target = next;
    layer.fade_elapsed_us = 0;
    layer.fade_duration_us = fade.duration_us;
    layout_cursors(state(), rig());
    return {};
  }

  Status operator()(const SetSpeedCommand& speed) const {
    if (Status s = check_layer(speed.layer); !s) return s;
    layer_of(state(), speed.layer).target.speed = speed.speed;
    return {};
  }

  Status operator()(const SetLayerWeightCommand& weight) const {
    if (Status s = check_layer(weight.layer); !s) return s;
    if (!std::isfinite(weight.weight)) return Error{"layer weight is not finite"};
    layer_of(state(), weight.layer).weight = weight.weight;
    return {};
  }

  Status operator()(const SetMaskCommand& mask) const {
    if (Status s = check_layer(mask.layer); !s) return s;
    if (mask.mask != kNoMask) {
      if (mask.mask < 0 || static_cast<std::size_t>(mask.mask) >= world.tables.masks.size()) {
        return Error{"unknown mask " + str(mask.mask)};
      }
      const JointMask& m = world.tables.masks[static_cast<std::size_t>(mask.mask)];
      if (m.model != state().model || m.rig != state().rig) {
        return Error{"mask '" + m.name + "' belongs to another model or rig"};
      }
    }
    layer_of(state(), mask.layer).mask = mask.mask;
    return {};
  }

  Status operator()(const SetBlendWeightsCommand& blend) const {
    if (Status s = check_layer(blend.layer); !s) return s;
    EntityState& st = state();
    const uint8_t playing =
        blend.layer < st.layers.size() ? st.layers[blend.layer].target.count : uint8_t{0};
    if (blend.count != playing) {
      return Error{str(blend.count) + " blend weights for a motion of " + str(playing) + " clips"};
    }
    for (uint8_t i = 0; i < blend.count; ++i) {
      if (Status s = check_weight(blend.weights[i], "blend weight"); !s) return s;
    }
    Motion& target = st.layers[blend.layer].target;
    for (uint8_t i = 0; i < blend.count; ++i) target.slots[i].weight = blend.weights[i];
    return {};
  }

  Status operator()(const SetLayerModeCommand& mode) const {
    if (Status s = check_layer(mode.layer); !s) return s;
    if (static_cast<uint8_t>(mode.mode) >= kLayerModeCount) return Error{"unknown layer mode"};
    EntityState& st = state();
    int32_t reference = kRestReference;
    if (mode.mode == LayerMode::kAdditive && mode.reference_clip >= 0) {
      Result<int32_t> found = world.find_or_add_reference(st.model, st.rig, mode.reference_clip,
                                                          mode.reference_time_us);
      if (!found) return found.error();
      reference = found.value();
    }
    Layer& layer = layer_of(st, mode.layer);
    layer.mode = mode.mode;
    layer.reference = reference;
    return {};
  }

  Status operator()(const TeleportCommand& teleport) const {
    const RootTransform at{teleport.x, 0.0f, teleport.z, teleport.yaw};
    if (Status s = check_root(at); !s) return s;
    state().root = RootTransform{at.x, 0.0f, at.z, det_wrap_angle(at.yaw)};
    return {};
  }

  Status operator()(const MoveCommand& move) const {
    if (Status s = check_speed(move.speed, true); !s) return s;
    if (!std::isfinite(move.turn_rate) || std::fabs(move.turn_rate) > kMaxTurnRate) {
      return Error{"turn rate " + std::to_string(move.turn_rate) + " out of range (|.| <= " +
                   std::to_string(kMaxTurnRate) + " rad/s)"};
    }
    if (Status s = check_locomotion_rig(rig()); !s) return s;
    if (Status s = start_locomotion(move.speed); !s) return s;
    Locomotion& loco = state().locomotion;
    loco.mode = LocomotionMode::kMove;
    loco.turn_rate = move.turn_rate;
    loco.target_x = 0.0f;
    loco.target_z = 0.0f;
    state().waypoints.clear();
    return {};
  }

  Status operator()(const MoveToCommand& move) const {
    if (Status s = check_ground_point(move.x, move.z, "target"); !s) return s;
    if (Status s = check_speed(move.speed, false); !s) return s;
    if (Status s = check_locomotion_rig(rig()); !s) return s;
    EntityState& st = state();
    if (move.queue && st.locomotion.mode == LocomotionMode::kMoveTo) {
      if (st.waypoints.size() >= kMaxWaypoints) {
        return Error{"waypoint queue full (" + std::to_string(kMaxWaypoints) + ")"};
      }
      st.waypoints.push_back(Waypoint{move.x, move.z, move.speed});
      return {};
    }
    if (Status s = start_locomotion(move.speed); !s) return s;
    Locomotion& loco = st.locomotion;
    loco.mode = LocomotionMode::kMoveTo;
    loco.turn_rate = 0.0f;
    loco.target_x = move.x;
    loco.target_z = move.z;
    st.waypoints.clear();
    return {};
  }

  // Layer 0 plays the locomotion blend for `speed`: already playing it, its weights and rate
  // ramp to it from the next tick on (step_locomotion; phases kept); otherwise a crossfade to it.
  Status start_locomotion(float speed) const {
    EntityState& st = state();
    if (st.locomotion.mode != LocomotionMode::kNone && !st.layers.empty()) {
      st.locomotion.speed = speed;
      return {};
    }
    CrossfadeCommand fade;
    fade.layer = 0;
    fade.motion = locomotion_spec(rig(), speed);
    fade.duration_us = kLocomotionFadeUs;
    if (Status s = (*this)(fade); !s) return s;
    st.layers[0].target.sync = 1;
    st.locomotion.speed = speed;
    return {};
  }

  // A play or crossfade on layer 0 takes it over: the entity stops steering (and keeps its
  // transform; its clips' root motion still moves it).
  void end_locomotion() const {
    state().locomotion = Locomotion{};
    state().waypoints.clear();
  }

  // What a crossfade of `duration_us` fades out from: nothing (a cut), the pose the layer shows
  // now (an interrupted crossfade, or nothing played yet: the rest pose) or its target motion.
  Status set_fade_source(Layer& layer, int64_t duration_us) const {
    if (duration_us == 0) {
      layer.fade_source = FadeSource::kNone;
      layer.source = Motion{};
      layer.frozen.clear();
      layer.frozen_chain.clear();
    } else if (layer.fade_source != FadeSource::kNone) {
      return freeze_interrupted_fade(layer);
    } else if (layer.target.count == 0) {
      // Nothing played yet: fade in from the rest pose.
      layer.frozen.assign(rig().skeleton.rest.begin(), rig().skeleton.rest.end());
      layer.frozen_chain.assign(1, FrozenStage{});  // the base alone: no motion, the rest pose
      layer.fade_source = FadeSource::kFrozenPose;
    } else {
      layer.source = layer.target;
      layer.fade_source = FadeSource::kMotion;
    }
    return {};
  }

  // Interrupted crossfade: freeze what the layer shows at this tick and fade out from it, so
  // the new fade starts exactly where the old one was (no pop).
  Status freeze_interrupted_fade(Layer& layer) const {
    const std::size_t nodes = rig().skeleton.node_count();
    std::span<Transform> now(world.command_scratch.layer.data(), nodes);
    if (!evaluate_layer(rig(), layer, state().cursors, now, world.command_scratch)) {
      return Error{"cannot evaluate the layer to freeze it"};
    }
    layer.frozen.assign(now.begin(), now.end());
    // How it was evaluated, while the chain stays short enough to describe (a recipe can then
    // say so): from a playing motion a new chain, from a described frozen pose that chain with
    // the interrupted target added.
    const FrozenStage interrupted{layer.target, layer.fade_elapsed_us, layer.fade_duration_us};
    if (layer.fade_source == FadeSource::kMotion) {
      layer.frozen_chain.assign({FrozenStage{layer.source, 0, 0}, interrupted});
    } else if (!layer.frozen_chain.empty() && layer.frozen_chain.size() < kMaxFrozenStages) {
      layer.frozen_chain.push_back(interrupted);
    } else {
      layer.frozen_chain.clear();
    }
    layer.fade_source = FadeSource::kFrozenPose;
    layer.source = Motion{};
    return {};
  }
};

}  // namespace

Status World::Impl::apply(const Command& command) {
  const EntityId id = command.entity;
  const std::size_t index = find(id);
  if (index != entities.size()) return std::visit(ApplyToEntity{*this, index}, command.body);
  const auto* spawn = std::get_if<SpawnCommand>(&command.body);
  if (spawn == nullptr) return Error{"no such entity"};
  const Rig* rig = tables.rig(spawn->model, spawn->rig);
  if (rig == nullptr) {
    return Error{"unknown model " + str(spawn->model) + " / rig " + str(spawn->rig)};
  }
  if (Status s = check_root(spawn->at); !s) return s;
  Entity entity;
  entity.state.id = id;
  entity.state.model = spawn->model;
  entity.state.rig = spawn->rig;
  entity.state.root = RootTransform{spawn->at.x, 0.0f, spawn->at.z, det_wrap_angle(spawn->at.yaw)};
  entity.bind_rig(rig);
  prepare_entity(entity);
  const auto at = std::lower_bound(entities.begin(), entities.end(), id,
                                   [](const Entity& e, EntityId v) { return e.state.id < v; });
  entities.insert(at, std::move(entity));
  ++membership_version;
  return {};
}

}  // namespace posecast::sim
