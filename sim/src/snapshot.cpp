// World snapshot format, version 3 (docs/determinism.md, "Snapshots"; versions 1 and 2 are read
// too). Every field little-endian,
// floats as IEEE-754 bit patterns:
//
//   "PCWS"  u32 version  u32 tick_rate_hz  u64 tick
//   u32 models     { u64 content_hash  u16 rigs { u32 nodes  u16 clips } }
//   u32 masks      { u32 name_bytes  name  u32 model  u16 rig  u32 nodes  f32 weight[nodes] }
//   u32 references { u32 model  u16 rig  i32 clip  i64 time_us }
//   u32 entities   { u32 id  u32 model  u16 rig  u8 layers { layer }  [root] }   ids increasing
//   root   = f32 x y z yaw  f32 sway  u8 mode  f32 speed turn_rate target_x target_z
//            u8 waypoints { f32 x z speed }          version 3: root transform, locomotion
//   u64 checksum   hash_bytes of everything before it
//
//   layer  = u8 mode  u8 fade_source  f32 weight  i32 mask  i32 reference
//            i64 fade_elapsed_us  i64 fade_duration_us  motion target
//            [motion source]                        when fade_source == motion
//            [u32 nodes  f32 t.xyz r.xyzw s.xyz]     when fade_source == frozen pose
//            [u8 stages { motion  i64 fade_elapsed_us  i64 fade_duration_us }[stages]]
//                                                    then, version 2: its frozen chain
//                                                    (0..4 stages, Layer::frozen_chain)
//   motion = u8 count  u8 wrap  [u8 flags]  i32 speed_q16  { u16 clip  f32 weight  i64 phase }[count]
//            flags (version 3): bit 0 root_motion, bit 1 sync
//
// One entity (World::entity_snapshot, version 1): the same entity record with its model named
// by content hash, and a frozen pose that has a chain stored as the chain alone (u32 nodes 0,
// then the stages; rebuilt on restore), so that it fits a datagram:
//
//   u8 version  u32 id  u64 model_content_hash  u16 rig  u8 layers { layer }  root
//
// Additive reference poses are not stored: they are resampled from (clip, time) on restore,
// which gives the same bits. Sampling cursors are not stored: they never change output.

#include <algorithm>
#include <cmath>
#include <string>

#include "posecast/byte_io.h"
#include "posecast/det_math.h"
#include "posecast/hash.h"
#include "posecast/sampling.h"
#include "evaluator.h"
#include "locomotion.h"
#include "world_impl.h"

namespace posecast::sim {
namespace {

constexpr uint8_t kMagic[4] = {'P', 'C', 'W', 'S'};
constexpr uint32_t kSnapshotVersion = 3;
// Version 1 had no frozen chains: a restored fade from a frozen pose then has none (it shows
// the same pose; only the server's recipes for it are missing until the fade ends). Versions 1
// and 2 had no root transforms: their entities are restored standing at the origin facing +Z,
// not steered, every motion's root motion on.
constexpr uint32_t kOldestSnapshotVersion = 1;
// About 580 years at 60 Hz: far below where tick_start_us could overflow at any rate.
constexpr uint64_t kMaxSnapshotTick = uint64_t{1} << 40;

constexpr uint8_t kMotionRootMotion = 1;
constexpr uint8_t kMotionSync = 2;

void write_motion(ByteWriter& w, const Motion& m) {
  w.u8(m.count);
  w.u8(static_cast<uint8_t>(m.wrap));
  w.u8(static_cast<uint8_t>((m.root_motion != 0 ? kMotionRootMotion : 0) |
                            (m.sync != 0 ? kMotionSync : 0)));
  w.i32(m.speed);
  for (uint8_t i = 0; i < m.count; ++i) {
    w.u16(m.slots[i].clip);
    w.f32(m.slots[i].weight);
    w.i64(m.slots[i].phase);
  }
}

constexpr uint8_t kEntitySnapshotVersion = 1;

// frozen_as_chain: a frozen pose with a chain is written as nodes 0 and the chain alone.
void write_layer(ByteWriter& w, const Layer& l, bool frozen_as_chain = false) {
  w.u8(static_cast<uint8_t>(l.mode));
  w.u8(static_cast<uint8_t>(l.fade_source));
  w.f32(l.weight);
  w.i32(l.mask);
  w.i32(l.reference);
  w.i64(l.fade_elapsed_us);
  w.i64(l.fade_duration_us);
  write_motion(w, l.target);
  if (l.fade_source == FadeSource::kMotion) write_motion(w, l.source);
  if (l.fade_source == FadeSource::kFrozenPose) {
    const bool chain_only = frozen_as_chain && !l.frozen_chain.empty();
    w.u32(chain_only ? 0u : static_cast<uint32_t>(l.frozen.size()));
    for (const Transform& t : chain_only ? std::span<const Transform>() : std::span<const Transform>(l.frozen)) {
      w.f32(t.translation.x);
      w.f32(t.translation.y);
      w.f32(t.translation.z);
      w.f32(t.rotation.x);
      w.f32(t.rotation.y);
      w.f32(t.rotation.z);
      w.f32(t.rotation.w);
      w.f32(t.scale.x);
      w.f32(t.scale.y);
      w.f32(t.scale.z);
    }
    w.u8(static_cast<uint8_t>(l.frozen_chain.size()));
    for (const FrozenStage& stage : l.frozen_chain) {
      write_motion(w, stage.motion);
      w.i64(stage.fade_elapsed_us);
      w.i64(stage.fade_duration_us);
    }
  }
}

void write_root(ByteWriter& w, const EntityState& e) {
  w.f32(e.root.x);
  w.f32(e.root.y);
  w.f32(e.root.z);
  w.f32(e.root.yaw);
  w.f32(e.sway);
  w.u8(static_cast<uint8_t>(e.locomotion.mode));
  w.f32(e.locomotion.speed);
  w.f32(e.locomotion.turn_rate);
  w.f32(e.locomotion.target_x);
  w.f32(e.locomotion.target_z);
  w.u8(static_cast<uint8_t>(e.waypoints.size()));
  for (const Waypoint& p : e.waypoints) {
    w.f32(p.x);
    w.f32(p.z);
    w.f32(p.speed);
  }
}

std::string num(int64_t v) { return std::to_string(v); }

bool in_world(float x, float z) {
  return std::isfinite(x) && std::isfinite(z) && std::fabs(x) <= kWorldHalfExtent &&
         std::fabs(z) <= kWorldHalfExtent;
}
bool speed_ok(float v) { return std::isfinite(v) && v >= 0.0f && v <= kMaxMoveSpeed; }

// Reads and validates a snapshot into fresh tables and entities; the world is untouched until
// everything has been checked.
class SnapshotParser {
 public:
  SnapshotParser(std::span<const uint8_t> bytes, const WorldTables& current)
      : bytes_(bytes), in_(bytes), current_(current) {}

  Status parse(uint32_t expected_rate) {
    if (bytes_.size() < 8 + 8) return fail("snapshot", "too short (" + num(static_cast<int64_t>(bytes_.size())) + " bytes)");
    // The checksum first: a damaged snapshot gets one clear message instead of a field error.
    ByteReader tail(bytes_.subspan(bytes_.size() - 8));
    const uint64_t stored = tail.u64();
    if (hash_bytes(bytes_.first(bytes_.size() - 8)) != stored) {
      return fail("snapshot", "checksum mismatch (damaged or truncated)");
    }
    in_ = ByteReader(bytes_.first(bytes_.size() - 8));
    for (uint8_t m : kMagic) {
      if (in_.u8() != m) return fail("snapshot", "not a posecast world snapshot (bad magic)");
    }
    version_ = in_.u32();
    if (version_ < kOldestSnapshotVersion || version_ > kSnapshotVersion) {
      return fail("snapshot.version", num(version_) + " is not supported (expected " +
                                          num(kOldestSnapshotVersion) + " to " + num(kSnapshotVersion) + ")");
    }
    const uint32_t rate = in_.u32();
    if (rate != expected_rate) {
      return fail("snapshot.tick_rate_hz", num(rate) + " differs from the world's " + num(expected_rate));
    }
    tick = in_.u64();
    if (tick > kMaxSnapshotTick) return fail("snapshot.tick", num(static_cast<int64_t>(tick)) + " is out of range");
    if (Status s = parse_models(); !s) return s;
    if (Status s = parse_masks(); !s) return s;
    if (Status s = parse_references(); !s) return s;
    if (Status s = parse_entities(); !s) return s;
    if (!in_.ok()) return fail("snapshot", "truncated");
    if (in_.remaining() != 0) return fail("snapshot", num(static_cast<int64_t>(in_.remaining())) + " unexpected trailing bytes");
    return {};
  }

  // One entity record (World::entity_snapshot's format) against the current tables: the
  // model found by content hash, masks and references by the world's ids.
  Status parse_entity_snapshot() {
    version_ = kSnapshotVersion;
    entity_mode_ = true;
    tables = current_;
    if (in_.u8() != kEntitySnapshotVersion) return fail("entity snapshot.version", "not supported");
    Entity entity;
    EntityState& e = entity.state;
    e.id = in_.u32();
    const uint64_t content_hash = in_.u64();
    e.rig = in_.u16();
    const uint8_t layers = in_.u8();
    if (!in_.ok()) return truncated("entity snapshot");
    e.model = static_cast<ModelId>(tables.models.size());
    for (std::size_t m = 0; m < tables.models.size(); ++m) {
      if (tables.models[m]->content_hash == content_hash) {
        e.model = static_cast<ModelId>(m);
        break;
      }
    }
    entity.bind_rig(tables.rig(e.model, e.rig));
    if (entity.rig == nullptr) return fail("entity snapshot", "model or rig not registered in this world");
    if (layers > kMaxLayers) return fail("entity snapshot.layers", num(layers) + " layers (at most " + num(kMaxLayers) + ")");
    e.layers.resize(layers);
    for (uint8_t l = 0; l < layers; ++l) {
      if (Status s = parse_layer(e.layers[l], e, *entity.rig, "entity snapshot.layers[" + num(l) + "]"); !s) return s;
    }
    if (Status s = parse_root(e, "entity snapshot"); !s) return s;
    if (!in_.ok()) return truncated("entity snapshot");
    if (in_.remaining() != 0) return fail("entity snapshot", num(static_cast<int64_t>(in_.remaining())) + " unexpected trailing bytes");
    entities.push_back(std::move(entity));
    return {};
  }

  uint64_t tick = 0;
  WorldTables tables;
  std::vector<Entity> entities;

 private:
  static Status fail(const std::string& where, const std::string& why) { return Error{where + ": " + why}; }
  Status truncated(const std::string& where) { return fail(where, "truncated"); }

  Status parse_models() {
    const uint32_t count = in_.u32();
    if (!in_.ok()) return truncated("snapshot.models");
    if (count != current_.models.size()) {
      return fail("snapshot.models", num(count) + " models, the world has " + num(static_cast<int64_t>(current_.models.size())));
    }
    for (uint32_t m = 0; m < count; ++m) {
      const std::string where = "snapshot.models[" + num(m) + "]";
      const Model& model = *current_.models[m];
      const uint64_t hash = in_.u64();
      const uint16_t rigs = in_.u16();
      if (!in_.ok()) return truncated(where);
      if (hash != model.content_hash || rigs != model.rigs.size()) {
        return fail(where, "is not the world's model '" + model.source + "' (content hash or rig count differs)");
      }
      for (uint16_t r = 0; r < rigs; ++r) {
        const uint32_t nodes = in_.u32();
        const uint16_t clips = in_.u16();
        if (!in_.ok()) return truncated(where);
        if (nodes != model.rigs[r].skeleton.node_count() || clips != model.rigs[r].clips.size()) {
          return fail(where + ".rigs[" + num(r) + "]", "node or clip count differs from the world's model");
        }
      }
    }
    tables.models = current_.models;
    tables.max_nodes = current_.max_nodes;
    return {};
  }

  Status parse_masks() {
    const uint32_t count = in_.u32();
    if (!in_.ok()) return truncated("snapshot.masks");
    for (uint32_t i = 0; i < count; ++i) {
      const std::string where = "snapshot.masks[" + num(i) + "]";
      JointMask mask;
      const uint32_t name_bytes = in_.u32();
      if (!in_.ok() || name_bytes > in_.remaining()) return truncated(where + ".name");
      mask.name.resize(name_bytes);
      for (uint32_t b = 0; b < name_bytes; ++b) mask.name[b] = static_cast<char>(in_.u8());
      mask.model = in_.u32();
      mask.rig = in_.u16();
      const uint32_t nodes = in_.u32();
      if (!in_.ok()) return truncated(where);
      const Rig* rig = tables.rig(mask.model, mask.rig);
      if (rig == nullptr) return fail(where, "unknown model " + num(mask.model) + " / rig " + num(mask.rig));
      if (nodes != rig->skeleton.node_count()) return fail(where, num(nodes) + " node weights for a rig of " + num(static_cast<int64_t>(rig->skeleton.node_count())) + " nodes");
      mask.node_weights.resize(nodes);
      for (float& w : mask.node_weights) {
        w = in_.f32();
        if (!std::isfinite(w)) return fail(where, "a node weight is not finite");
      }
      if (!in_.ok()) return truncated(where);
      tables.masks.push_back(std::move(mask));
    }
    return {};
  }

  Status parse_references() {
    const uint32_t count = in_.u32();
    if (!in_.ok()) return truncated("snapshot.references");
    for (uint32_t i = 0; i < count; ++i) {
      const std::string where = "snapshot.references[" + num(i) + "]";
      AdditiveReference ref;
      ref.model = in_.u32();
      ref.rig = in_.u16();
      ref.clip = in_.i32();
      ref.time_us = in_.i64();
      if (!in_.ok()) return truncated(where);
      const Rig* rig = tables.rig(ref.model, ref.rig);
      if (rig == nullptr) return fail(where, "unknown model " + num(ref.model) + " / rig " + num(ref.rig));
      if (ref.clip < 0 || static_cast<std::size_t>(ref.clip) >= rig->clips.size()) {
        return fail(where + ".clip", num(ref.clip) + " out of range (" + num(static_cast<int64_t>(rig->clips.size())) + " clips)");
      }
      if (ref.time_us < 0 || ref.time_us > kMaxClipDurationUs) return fail(where + ".time_us", num(ref.time_us) + " out of range");
      const Clip& clip = rig->clips[static_cast<std::size_t>(ref.clip)];
      ref.pose.resize(rig->skeleton.node_count());
      SamplingCursor cursor;
      cursor.reset(clip);
      SampleJob job;
      job.skeleton = &rig->skeleton;
      job.clip = &clip;
      job.time_us = ref.time_us;
      job.cursor = cursor.keys;
      job.output = ref.pose;
      if (!job.Run()) return fail(where, "clip cannot be sampled");
      tables.references.push_back(std::move(ref));
    }
    return {};
  }

  Status parse_motion(Motion& m, const Rig& rig, const std::string& where) {
    m.count = in_.u8();
    const uint8_t wrap = in_.u8();
    const uint8_t flags = version_ >= 3 ? in_.u8() : kMotionRootMotion;
    m.speed = in_.i32();
    if (!in_.ok()) return truncated(where);
    if ((flags & ~(kMotionRootMotion | kMotionSync)) != 0) return fail(where + ".flags", num(flags) + " has unknown bits");
    m.root_motion = (flags & kMotionRootMotion) != 0 ? 1 : 0;
    m.sync = (flags & kMotionSync) != 0 ? 1 : 0;
    if (m.count > kMaxBlendClips) return fail(where + ".count", num(m.count) + " clips (at most " + num(kMaxBlendClips) + ")");
    if (wrap >= kWrapModeCount) return fail(where + ".wrap", num(wrap) + " is not a wrap mode");
    m.wrap = static_cast<WrapMode>(wrap);
    for (uint8_t i = 0; i < m.count; ++i) {
      const std::string slot = where + ".slots[" + num(i) + "]";
      ClipSlot& s = m.slots[i];
      s.clip = in_.u16();
      s.weight = in_.f32();
      s.phase = in_.i64();
      if (!in_.ok()) return truncated(slot);
      if (s.clip >= rig.clips.size()) return fail(slot + ".clip", num(s.clip) + " out of range (" + num(static_cast<int64_t>(rig.clips.size())) + " clips)");
      if (!std::isfinite(s.weight) || s.weight < 0.0f) return fail(slot + ".weight", "not finite and >= 0");
      const int64_t duration = rig.clips[s.clip].duration_us;
      if (s.phase != wrap_phase(s.phase, duration, m.wrap)) return fail(slot + ".phase", num(s.phase) + " is outside the clip's wrap cycle");
    }
    return {};
  }

  Status parse_layer(Layer& l, const EntityState& e, const Rig& rig, const std::string& where) {
    const uint8_t mode = in_.u8();
    const uint8_t fade = in_.u8();
    l.weight = in_.f32();
    l.mask = in_.i32();
    l.reference = in_.i32();
    l.fade_elapsed_us = in_.i64();
    l.fade_duration_us = in_.i64();
    if (!in_.ok()) return truncated(where);
    if (mode >= kLayerModeCount) return fail(where + ".mode", num(mode) + " is not a layer mode");
    if (fade >= kFadeSourceCount) return fail(where + ".fade_source", num(fade) + " is not a fade source");
    l.mode = static_cast<LayerMode>(mode);
    l.fade_source = static_cast<FadeSource>(fade);
    if (!std::isfinite(l.weight)) return fail(where + ".weight", "not finite");
    if (l.mask != kNoMask) {
      if (l.mask < 0 || static_cast<std::size_t>(l.mask) >= tables.masks.size()) return fail(where + ".mask", num(l.mask) + " out of range");
      const JointMask& m = tables.masks[static_cast<std::size_t>(l.mask)];
      if (m.model != e.model || m.rig != e.rig) return fail(where + ".mask", "belongs to another model or rig");
    }
    if (l.reference != kRestReference) {
      if (l.reference < 0 || static_cast<std::size_t>(l.reference) >= tables.references.size()) return fail(where + ".reference", num(l.reference) + " out of range");
      const AdditiveReference& r = tables.references[static_cast<std::size_t>(l.reference)];
      if (r.model != e.model || r.rig != e.rig) return fail(where + ".reference", "belongs to another model or rig");
    }
    if (l.fade_source == FadeSource::kNone) {
      if (l.fade_elapsed_us != 0 || l.fade_duration_us != 0) return fail(where, "fade times set without a fade");
    } else if (l.fade_duration_us <= 0 || l.fade_elapsed_us < 0 || l.fade_elapsed_us >= l.fade_duration_us) {
      return fail(where, "fade times out of range");
    }
    if (Status s = parse_motion(l.target, rig, where + ".target"); !s) return s;
    if (l.fade_source == FadeSource::kMotion) {
      if (Status s = parse_motion(l.source, rig, where + ".source"); !s) return s;
    }
    if (l.fade_source == FadeSource::kFrozenPose) {
      const uint32_t nodes = in_.u32();
      if (!in_.ok()) return truncated(where + ".frozen");
      if (entity_mode_ && nodes == 0) return parse_chain_only(l, rig, where + ".frozen_chain");
      if (nodes != rig.skeleton.node_count()) return fail(where + ".frozen", num(nodes) + " nodes for a rig of " + num(static_cast<int64_t>(rig.skeleton.node_count())));
      l.frozen.resize(nodes);
      for (Transform& t : l.frozen) {
        float* f[10] = {&t.translation.x, &t.translation.y, &t.translation.z, &t.rotation.x,
                        &t.rotation.y, &t.rotation.z, &t.rotation.w, &t.scale.x, &t.scale.y, &t.scale.z};
        for (float* v : f) {
          *v = in_.f32();
          if (!std::isfinite(*v)) return fail(where + ".frozen", "a value is not finite");
        }
      }
      if (!in_.ok()) return truncated(where + ".frozen");
      if (version_ >= 2) return parse_frozen_chain(l, rig, where + ".frozen_chain");
    }
    return {};
  }

  // The stages that rebuild a frozen pose (Layer::frozen_chain): a base (a motion, or none for
  // the rest pose) with no fade, then motions with their fade state at their interrupt. They
  // must rebuild the frozen pose bit for bit: the server vouches that the recipes it builds
  // from them reproduce the pose (PoseEncodeOptions::recipe_reproduces_pose), so a chain that
  // did not would make clients decode another pose.
  Status parse_frozen_chain(Layer& l, const Rig& rig, const std::string& where) {
    const uint8_t stages = in_.u8();
    if (!in_.ok()) return truncated(where);
    if (stages > kMaxFrozenStages) return fail(where, num(stages) + " stages (at most " + num(kMaxFrozenStages) + ")");
    l.frozen_chain.resize(stages);
    for (uint8_t k = 0; k < stages; ++k) {
      const std::string stage = where + "[" + num(k) + "]";
      FrozenStage& st = l.frozen_chain[k];
      if (Status s = parse_motion(st.motion, rig, stage + ".motion"); !s) return s;
      st.fade_elapsed_us = in_.i64();
      st.fade_duration_us = in_.i64();
      if (!in_.ok()) return truncated(stage);
      const bool fade_ok = k == 0 ? st.fade_elapsed_us == 0 && st.fade_duration_us == 0
                                  : st.fade_duration_us > 0 && st.fade_elapsed_us >= 0 &&
                                        st.fade_elapsed_us < st.fade_duration_us;
      if (!fade_ok) return fail(stage, "fade times out of range");
      if (k > 0 && st.motion.count == 0) return fail(stage + ".motion", "only the base may be the rest pose");
    }
    if (stages > 0 && !l.frozen.empty() && !frozen_chain_rebuilds_pose(rig, l, scratch_)) {
      return fail(where, "does not rebuild the frozen pose");
    }
    return {};
  }

  // An entity snapshot's frozen pose given as its chain alone: the pose rebuilt from it.
  Status parse_chain_only(Layer& l, const Rig& rig, const std::string& where) {
    l.frozen.clear();
    if (Status s = parse_frozen_chain(l, rig, where); !s) return s;
    if (l.frozen_chain.empty()) return fail(where, "a frozen pose needs its nodes or a chain");
    if (!rebuild_frozen_pose(rig, l.frozen_chain, l.frozen, scratch_)) return fail(where, "cannot be evaluated");
    return {};
  }

  Status parse_entities() {
    const uint32_t count = in_.u32();
    if (!in_.ok()) return truncated("snapshot.entities");
    for (uint32_t i = 0; i < count; ++i) {
      const std::string where = "snapshot.entities[" + num(i) + "]";
      Entity entity;
      EntityState& e = entity.state;
      e.id = in_.u32();
      e.model = in_.u32();
      e.rig = in_.u16();
      const uint8_t layers = in_.u8();
      if (!in_.ok()) return truncated(where);
      if (!entities.empty() && e.id <= entities.back().state.id) return fail(where + ".id", num(e.id) + " is not above the previous id");
      entity.bind_rig(tables.rig(e.model, e.rig));
      if (entity.rig == nullptr) return fail(where, "unknown model " + num(e.model) + " / rig " + num(e.rig));
      if (layers > kMaxLayers) return fail(where + ".layers", num(layers) + " layers (at most " + num(kMaxLayers) + ")");
      e.layers.resize(layers);
      for (uint8_t l = 0; l < layers; ++l) {
        if (Status s = parse_layer(e.layers[l], e, *entity.rig, where + ".layers[" + num(l) + "]"); !s) return s;
      }
      if (version_ >= 3) {
        if (Status s = parse_root(e, where); !s) return s;
      }
      entities.push_back(std::move(entity));
    }
    return {};
  }

  Status parse_root(EntityState& e, const std::string& where) {
    e.root.x = in_.f32();
    e.root.y = in_.f32();
    e.root.z = in_.f32();
    e.root.yaw = in_.f32();
    e.sway = in_.f32();
    const uint8_t mode = in_.u8();
    Locomotion& loco = e.locomotion;
    loco.speed = in_.f32();
    loco.turn_rate = in_.f32();
    loco.target_x = in_.f32();
    loco.target_z = in_.f32();
    const uint8_t waypoints = in_.u8();
    if (!in_.ok()) return truncated(where + ".root");
    if (!in_world(e.root.x, e.root.z) || e.root.y != 0.0f) return fail(where + ".root", "position outside the world");
    if (!std::isfinite(e.root.yaw) || e.root.yaw != det_wrap_angle(e.root.yaw)) return fail(where + ".root.yaw", "not a wrapped angle");
    if (!std::isfinite(e.sway) || std::fabs(e.sway) > 1.0e4f) return fail(where + ".sway", "not finite");
    if (mode >= kLocomotionModeCount) return fail(where + ".locomotion.mode", num(mode) + " is not a locomotion mode");
    loco.mode = static_cast<LocomotionMode>(mode);
    if (loco.mode != LocomotionMode::kNone) {
      if (Status s = check_locomotion_rig(*tables.rig(e.model, e.rig)); !s) return fail(where + ".locomotion.mode", s.error().message);
    }
    if (!speed_ok(loco.speed)) return fail(where + ".locomotion.speed", "out of range");
    if (!std::isfinite(loco.turn_rate) || std::fabs(loco.turn_rate) > kMaxTurnRate) return fail(where + ".locomotion.turn_rate", "out of range");
    if (!in_world(loco.target_x, loco.target_z)) return fail(where + ".locomotion.target", "outside the world");
    if (waypoints > kMaxWaypoints) return fail(where + ".waypoints", num(waypoints) + " (at most " + num(kMaxWaypoints) + ")");
    e.waypoints.resize(waypoints);
    for (Waypoint& p : e.waypoints) {
      p.x = in_.f32();
      p.z = in_.f32();
      p.speed = in_.f32();
      if (!in_.ok()) return truncated(where + ".waypoints");
      if (!in_world(p.x, p.z) || !speed_ok(p.speed)) return fail(where + ".waypoints", "a waypoint is out of range");
    }
    return {};
  }

  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  bool entity_mode_ = false;  // parse_entity_snapshot
  EvalScratch scratch_;  // frozen chains' evaluation
  ByteReader in_;
  const WorldTables& current_;
};

}  // namespace

std::vector<uint8_t> World::snapshot() const {
  const Impl& impl = *impl_;
  std::vector<uint8_t> out;
  ByteWriter w(out);
  for (uint8_t m : kMagic) w.u8(m);
  w.u32(kSnapshotVersion);
  w.u32(impl.options.tick_rate_hz);
  w.u64(impl.tick);
  w.u32(static_cast<uint32_t>(impl.tables.models.size()));
  for (const auto& model : impl.tables.models) {
    w.u64(model->content_hash);
    w.u16(static_cast<uint16_t>(model->rigs.size()));
    for (const Rig& rig : model->rigs) {
      w.u32(static_cast<uint32_t>(rig.skeleton.node_count()));
      w.u16(static_cast<uint16_t>(rig.clips.size()));
    }
  }
  w.u32(static_cast<uint32_t>(impl.tables.masks.size()));
  for (const JointMask& mask : impl.tables.masks) {
    w.u32(static_cast<uint32_t>(mask.name.size()));
    for (char c : mask.name) w.u8(static_cast<uint8_t>(c));
    w.u32(mask.model);
    w.u16(mask.rig);
    w.u32(static_cast<uint32_t>(mask.node_weights.size()));
    for (float f : mask.node_weights) w.f32(f);
  }
  w.u32(static_cast<uint32_t>(impl.tables.references.size()));
  for (const AdditiveReference& r : impl.tables.references) {
    w.u32(r.model);
    w.u16(r.rig);
    w.i32(r.clip);
    w.i64(r.time_us);
  }
  w.u32(static_cast<uint32_t>(impl.entities.size()));
  for (const Entity& entity : impl.entities) {
    const EntityState& e = entity.state;
    w.u32(e.id);
    w.u32(e.model);
    w.u16(e.rig);
    w.u8(static_cast<uint8_t>(e.layers.size()));
    for (const Layer& layer : e.layers) write_layer(w, layer);
    write_root(w, e);
  }
  w.u64(hash_bytes(out));
  return out;
}

Status World::restore(std::span<const uint8_t> bytes) {
  Impl& impl = *impl_;
  SnapshotParser parser(bytes, impl.tables);
  if (Status s = parser.parse(impl.options.tick_rate_hz); !s) return s;
  for (Entity& entity : parser.entities) Impl::prepare_entity(entity);
  impl.tables = std::move(parser.tables);
  impl.entities = std::move(parser.entities);
  ++impl.membership_version;
  impl.tick = parser.tick;
  impl.world_hash = 0;
  impl.tick_check = TickCheck{};
  impl.queue.clear();
  impl.due.clear();  // last_tick_commands() belongs to the replaced state
  impl.events.clear();  // and so does last_tick_events()
  impl.resize_scratch();
  return {};
}

std::vector<uint8_t> World::entity_snapshot(EntityId id) const {
  const Impl& impl = *impl_;
  std::vector<uint8_t> out;
  const std::size_t index = impl.find(id);
  if (index == impl.entities.size()) return out;
  const EntityState& e = impl.entities[index].state;
  ByteWriter w(out);
  w.u8(kEntitySnapshotVersion);
  w.u32(e.id);
  w.u64(impl.tables.models[e.model]->content_hash);
  w.u16(e.rig);
  w.u8(static_cast<uint8_t>(e.layers.size()));
  for (const Layer& layer : e.layers) write_layer(w, layer, /*frozen_as_chain=*/true);
  write_root(w, e);
  return out;
}

Result<EntityId> World::restore_entity(std::span<const uint8_t> bytes, std::optional<EntityId> only) {
  Impl& impl = *impl_;
  SnapshotParser parser(bytes, impl.tables);
  if (Status s = parser.parse_entity_snapshot(); !s) return s.error();
  Entity& entity = parser.entities.front();
  if (only && entity.state.id != *only) {
    return Error{"entity snapshot.id: " + num(entity.state.id) + " is not entity " + num(*only)};
  }
  Impl::prepare_entity(entity);
  const EntityId id = entity.state.id;
  const std::size_t index = impl.find(id);
  if (index != impl.entities.size()) {
    impl.entities[index] = std::move(entity);
  } else {
    const auto at = std::lower_bound(impl.entities.begin(), impl.entities.end(), id,
                                     [](const Entity& e, EntityId v) { return e.state.id < v; });
    impl.entities.insert(at, std::move(entity));
    ++impl.membership_version;
  }
  return id;
}

void World::set_tick_index(uint64_t tick) {
  Impl& impl = *impl_;
  impl.tick = tick;
  impl.world_hash = 0;
  impl.tick_check = TickCheck{};
  impl.due.clear();
  impl.events.clear();
}

}  // namespace posecast::sim
