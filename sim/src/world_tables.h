#pragma once
// Internal: the World's shared, immutable-once-registered tables and its entities.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <glm/mat4x4.hpp>

#include "posecast/model.h"
#include "posecast/sim/animation_state.h"
#include "posecast/sim/joint_mask.h"
#include "cache_line_allocator.h"
#include "palette_buffer.h"

namespace posecast::sim {

// The reference pose of additive layers: a clip sampled at one time, shared by every layer
// that names the same (model, rig, clip, time).
struct AdditiveReference {
  ModelId model = 0;
  uint16_t rig = 0;
  int32_t clip = 0;
  int64_t time_us = 0;
  std::vector<Transform> pose;  // node count entries
};

struct WorldTables {
  std::vector<std::shared_ptr<const Model>> models;
  std::vector<JointMask> masks;
  std::vector<AdditiveReference> references;
  std::size_t max_nodes = 0;  // over every registered rig: sizes the scratch buffers

  const Rig* rig(ModelId model, uint16_t rig_index) const {
    if (model >= models.size() || rig_index >= models[model]->rigs.size()) return nullptr;
    return &models[model]->rigs[rig_index];
  }
};

// One entity of the World. Kept small: the evaluation pass streams every entity through the
// cache each tick (at 10,000 Fox, 96 more bytes an entity cost 3.4-3.9 % of the tick).
struct Entity {
  EntityState state;
  const Rig* rig = nullptr;          // owned by WorldTables::models; set by bind_rig
  // Joint count entries: the last tick's output, a matrix per cache line.
  PaletteBuffer palette;
  uint64_t palette_hash = 0;
  bool failed = false;               // the last tick could not compute the palette
  // Spawned or targeted by a command this tick: its palette joins the tick check.
  bool palette_due = false;
  // A clip of *rig has markers: only then does the entity's advance look for crossed ones.
  bool rig_has_markers = false;

  void bind_rig(const Rig* bound) {
    rig = bound;
    rig_has_markers = bound != nullptr && std::any_of(bound->clips.begin(), bound->clips.end(),
                                                      [](const Clip& c) { return !c.markers.empty(); });
  }
};

// Assigns every active clip slot (layers in order; target, then a live source) its range of
// sampling cursors and zeroes them. Allocates only when the total grows.
void layout_cursors(EntityState& state, const Rig& rig);

}  // namespace posecast::sim
