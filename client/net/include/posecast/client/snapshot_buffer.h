#pragma once
// SnapshotBuffer: the client's views of recent server ticks (docs/session.md, "Snapshots and
// acks"), decoded and ready to interpolate.
//
// The view of tick S holds, per entity, the quantised pose and its dequantised local TRS; its
// palette is computed on demand (PoseSample::compute_palette: bit-identical to the server's
// quantized_palette() of the same quantised pose). Records are decoded against the views of S's baseline_tick, prior_tick and
// older_tick (the reference poses of pose_codec.h), which must be complete. A view is complete when every part of S arrived and every record decoded;
// entities left out of S then get their baseline pose (the same pool slot, not a copy), so a
// complete view is S's full statement. Only complete views are acked and used as references;
// decoded records of incomplete views still serve interpolation.
//
// Capacity is a fixed number of views: a new tick evicts the oldest; ticks older than every
// held view are refused once full. Ticks are uint32 server ticks, assumed not to wrap (2.2
// years at 60 Hz). Not thread-safe.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "posecast/client/entity_registry.h"
#include "posecast/client/pose_pool.h"
#include "posecast/client/pose_track.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/quantization.h"

namespace posecast::client {

struct SnapshotBufferSettings {
  std::size_t capacity = 96;                 // views held (>= 2); 4.8 s at 20 Hz
  std::size_t max_entities_per_view = 4096;  // records beyond it are refused
};

struct ViewEntry {
  uint32_t entity_id = 0;
  uint16_t generation = 0;
  bool decoded = false;  // from a record of this tick (else carried from the baseline)
  uint32_t slot = PosePool::kNoSlot;
};

struct SnapshotView {
  uint32_t tick = protocol::kNoTick;
  int64_t time_us = 0;  // tick_time_us(tick), kept so lookups need no division
  uint32_t baseline_tick = protocol::kNoTick;
  uint32_t prior_tick = protocol::kNoTick;
  uint32_t older_tick = protocol::kNoTick;
  uint8_t part_count = 0;
  uint16_t parts_received = 0;
  uint64_t part_bits[4] = {0, 0, 0, 0};  // 256 part indices
  bool complete = false;
  bool failed = false;       // some record could not be decoded: never completes
  int64_t first_arrival_us = 0;
  std::vector<ViewEntry> entries;  // sorted by entity id

  const ViewEntry* find(uint32_t entity_id) const;
  // find(), trying entries[hint] first (the entity's position when the view holds the same
  // entities as the caller's list: the common case, one probe instead of a binary search).
  const ViewEntry* find(uint32_t entity_id, std::size_t hint) const;
};

// Where a render time falls among the held views: computed once per frame for every entity
// (SnapshotBuffer::locate), valid until the buffer changes.
struct ViewSplit {
  int64_t render_us = 0;
  std::size_t first_after = 0;  // index in tick order of the first view after render_us
};

enum class PartOutcome : uint8_t {
  kApplied,
  kDuplicate,     // this part of this tick was applied before
  kTooOld,        // older than every held view while the buffer is full
  kInconsistent,  // header disagrees with earlier parts of the same tick
};

// What apply() did with one Snapshot part. Record counters add up to the part's records.
struct PartResult {
  PartOutcome outcome = PartOutcome::kApplied;
  bool new_tick = false;   // first part seen of this tick
  bool completed = false;  // this part completed the view
  uint32_t decoded = 0;
  uint32_t unknown_entity = 0;     // no spawn seen (or a newer generation than known)
  uint32_t stale_generation = 0;   // older generation than known: ignored
  uint32_t missing_reference = 0;  // needs a reference pose the buffer lacks
  uint32_t decode_errors = 0;      // decode_pose failed
  uint32_t duplicate_records = 0;  // entity already in this view
  uint32_t over_capacity = 0;      // beyond max_entities_per_view
  std::string first_error;         // set on the first failure (for logs)
};

class SnapshotBuffer {
 public:
  explicit SnapshotBuffer(const SnapshotBufferSettings& settings = {});

  // Also re-times the held views.
  void set_tick_rate(uint32_t tick_rate_hz);
  uint32_t tick_rate() const { return tick_rate_hz_; }
  // Server time of a tick, in microseconds.
  int64_t tick_time_us(uint32_t tick) const {
    return static_cast<int64_t>(tick) * 1'000'000 / static_cast<int64_t>(tick_rate_hz_);
  }

  // Applies one part (a decoded Snapshot message). `registry` says which entities exist.
  PartResult apply(const protocol::Snapshot& part, const EntityRegistry& registry,
                   int64_t arrival_us);

  // The ack to send: newest complete view and the 32 ticks before it. newest_tick is kNoTick
  // when nothing is complete yet.
  protocol::Ack ack() const;
  uint32_t newest_complete_tick() const { return newest_complete_; }
  uint32_t newest_tick() const;  // newest view held, complete or not; kNoTick when empty

  // Usable samples of (entity, generation) around render time `render_us` (server us).
  SampleWindow window(uint32_t entity_id, uint16_t generation, int64_t render_us) const;
  // The same from a split found once per frame; `hint` as for SnapshotView::find (the
  // entity's index in the caller's id-ordered list). The result is the same for any hint.
  ViewSplit locate(int64_t render_us) const;
  SampleWindow window(uint32_t entity_id, uint16_t generation, const ViewSplit& split,
                      std::size_t hint) const;
  // The usable sample of one tick, or nullptr.
  const PoseSample* sample(uint32_t tick, uint32_t entity_id, uint16_t generation) const;
  // Views whose tick lies after `render_us`: how much is buffered ahead of the render time.
  std::size_t depth_after(int64_t render_us) const;

  const SnapshotView* view(uint32_t tick) const;
  std::size_t size() const { return order_.size(); }
  const SnapshotView& view_at(std::size_t i) const { return views_[order_[i]]; }  // tick order
  std::size_t pooled_poses() const { return pool_.live(); }
  void clear();

 private:
  bool usable(const SnapshotView& view, uint32_t entity_id, uint16_t generation,
              std::size_t hint, SampleRef& out) const;
  SnapshotView* find_view(uint32_t tick);
  SnapshotView* open_view(const protocol::Snapshot& part, int64_t arrival_us, PartResult& result);
  void release_view(SnapshotView& view);
  // The complete views a part's records are coded against (null: not held or not complete).
  struct ReferenceViews {
    const SnapshotView* baseline = nullptr;
    const SnapshotView* prior = nullptr;
    const SnapshotView* older = nullptr;
  };
  ReferenceViews reference_views(const SnapshotView& view) const;
  // The poses `record` is coded against, as this buffer holds them (null where it lacks one).
  protocol::PoseReference record_references(const SnapshotView& view,
                                            const ReferenceViews& references,
                                            const protocol::EntityPose& record,
                                            std::size_t hint) const;
  // A decoded record's locals (or their deferral) and recipe verdict.
  void finish_sample(PoseSample& sample, const ClientEntity& entity,
                     const protocol::PoseDecodeInfo& info);
  void decode_record(SnapshotView& view, const ReferenceViews& references,
                     const protocol::EntityPose& record, const EntityRegistry& registry,
                     PartResult& result);
  void try_complete(SnapshotView& view, const EntityRegistry& registry);

  SnapshotBufferSettings settings_;
  uint32_t tick_rate_hz_ = 60;
  std::vector<SnapshotView> views_;  // fixed capacity; slots recycled
  std::vector<uint32_t> free_views_;
  std::vector<uint32_t> order_;      // view slots sorted by tick
  PosePool pool_;
  protocol::QuantizedPose prediction_;  // the clip dictionary's prediction (decode scratch)
  uint32_t newest_complete_ = protocol::kNoTick;
};

}  // namespace posecast::client
