#pragma once
// PoseMirror: the server's mirror of the World, one EntityRecord per entity in id order, and
// the quantisation of their poses. It is the World's LocalPoseObserver: on ticks that send
// snapshots it asks the World for the poses some due client may receive (want*, then
// observe_next_tick) and quantises each inside the World's parallel evaluation pass, per
// worker and per world index, without locks. After the tick, sync() brings the records in
// line with the World (spawns, despawns, ids reused within a tick, a World moved by the
// embedder) and takes the staged poses; commit_sent() keeps the poses that went out as
// history. It also holds what the embedder sets per entity: position and owner.
//
// Tick thread only, except wants_pose/observe_pose (the World's evaluation threads, reading
// the records, writing only per-index and per-worker staging).

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "entity_record.h"
#include "pose_formats.h"
#include "posecast/protocol/quantization.h"
#include "posecast/sim/world.h"

namespace posecast::server {

// An entity the mirror dropped in sync(): clients that were sent it owe a despawn.
struct RetiredEntity {
  sim::EntityId id = 0;
  uint16_t generation = 0;
};

class PoseMirror final : public sim::LocalPoseObserver {
 public:
  using PoseCallback =
      std::function<void(uint32_t tick, sim::EntityId, uint16_t generation, const protocol::QuantizedPose&)>;

  // `world` and `formats` must outlive the mirror. attach_recipes: ServerOptions'.
  // root_reference_ticks (>= 1): the default send interval in ticks; each tick's held root is
  // decided against the history entry that many ticks old, the baseline a client acking in time
  // decodes against (hold_root_for).
  PoseMirror(sim::World& world, const PoseFormats& formats, uint32_t tick_rate_hz, bool attach_recipes,
             uint32_t root_reference_ticks);
  ~PoseMirror() override;
  PoseMirror(const PoseMirror&) = delete;
  PoseMirror& operator=(const PoseMirror&) = delete;

  std::vector<EntityRecord>& records() { return records_; }
  const std::vector<EntityRecord>& records() const { return records_; }
  // The index of the record of `id`, or records().size() when absent.
  std::size_t find(sim::EntityId id) const;

  // ---- The embedder's per-entity settings (unknown ids are ignored).
  void set_owner(sim::EntityId id, uint32_t client);  // 0: none
  void release_owned_by(uint32_t client);
  // Bumped whenever an owner changes (a grant, a revoke, a client leaving, an owned entity
  // retired), so per-client owned lists are rebuilt only then.
  uint64_t ownership_version() const { return ownership_version_; }

  // ---- Which poses the next World tick quantises: clear_wanted, want*, observe_next_tick;
  // or skip_next_tick on a tick that sends nothing.
  void clear_wanted();
  void want_all();
  void want(sim::EntityId id);
  void want_within(const Vec3& center, float radius);
  // Sets this mirror as the World's observer for the next tick (also quantising entities
  // spawned by that tick's commands, which have no record yet).
  void observe_next_tick();
  void skip_next_tick();
  // Detaches from the World (after its tick).
  void end_world_tick();
  // Whether this tick quantised poses (observe_next_tick was called for it).
  bool quantizing() const { return quantize_this_tick_; }

  // After the World's tick `tick`: records follow the World (retired ones appended to
  // `retired`, in id order), commands mark their entities changed, and, on a quantising tick,
  // the staged poses become the records' current poses (on_pose_quantized sees each).
  // world_moved: the embedder moved the World since the last tick (see Server::tick).
  void sync(uint32_t tick, bool world_moved, std::vector<RetiredEntity>& retired);
  // For the records at `indices` (emptied): the pose sent this tick moves into the history,
  // history older than `oldest_needed` goes, the encoding cache empties.
  void commit_sent(std::vector<uint32_t>& indices, uint32_t tick, uint32_t oldest_needed);
  // Prunes a slice of all records, so every record is pruned within kHistorySweepTicks calls
  // (the records sent in a tick are pruned by commit_sent).
  void sweep_history(uint32_t oldest_needed);

  void on_pose_quantized(PoseCallback callback) { pose_callback_ = std::move(callback); }
  uint64_t poses_quantized() const { return poses_quantized_; }

  // sim::LocalPoseObserver (evaluation threads).
  bool wants_pose(std::size_t index, sim::EntityId id) const override;
  void observe_pose(std::size_t index, sim::EntityId id, std::span<const Transform> pose,
                    unsigned worker) override;

  static constexpr std::size_t kHistorySweepTicks = 16;

 private:
  // A pose quantised in the evaluation pass, by world index.
  struct Staged {
    protocol::QuantizedPose pose;  // root: the exact codes of exact_root
    protocol::RootValue exact_root;
    sim::EntityId id = 0;
    bool valid = false;
  };
  void mark_wanted(std::size_t record);
  // The record of the World's entity `index` with `id`, or records_.size().
  std::size_t record_of(std::size_t index, sim::EntityId id) const;
  // The format of the World's entity `index` with `id` and the reference its quantisation
  // keeps axes stable against; false when it is not to be quantised.
  bool quantize_setup(std::size_t index, sim::EntityId id, uint32_t& format,
                      const protocol::QuantizedPose*& reference) const;
  // Ids despawned and spawned again by the last tick (or whose model or rig changed under
  // them in a moved World), sorted, into respawned_.
  void find_respawned(bool world_moved);
  // Rebuilds records_ from the World's ids when membership changed; retired ones to `retired`.
  void rebuild_records(uint32_t tick, std::vector<RetiredEntity>& retired);
  // Every record's position from its entity's root transform (interest follows the World).
  void refresh_positions();
  EntityRecord new_record(sim::EntityId id, uint32_t tick);
  void mark_changed(uint32_t tick, bool world_moved);
  void take_staged(uint32_t tick);

  sim::World& world_;
  const PoseFormats& formats_;
  uint32_t tick_rate_hz_;
  uint32_t root_reference_ticks_;
  bool attach_recipes_;

  std::vector<EntityRecord> records_;  // in id order
  // records_[i].id for every i, packed: find() searches these 4-byte ids instead of touching
  // a record of several hundred bytes per probe (each a cache miss at 10,000 entities).
  std::vector<sim::EntityId> ids_;
  // wanted_[i] != 0: quantise records_[i] on this tick. Packed beside the records, as ids_,
  // for the evaluation threads to read.
  std::vector<uint8_t> wanted_;
  std::vector<uint32_t> wanted_indices_;  // where wanted_ is set (cleared by the next clear)
  std::size_t history_sweep_next_ = 0;    // the next record sweep_history prunes
  std::map<sim::EntityId, uint16_t> last_generation_;  // every id ever used (ordered: deterministic)
  std::vector<sim::EntityId> respawned_, despawned_now_;  // sync scratch
  uint64_t ownership_version_ = 0;

  std::vector<Staged> staged_;  // by world index
  // The world indices each World worker staged this tick ([worker]); sync takes the staged
  // poses from these instead of scanning every entry.
  std::vector<std::vector<uint32_t>> staged_indices_;
  std::vector<uint32_t> staged_order_;  // sync scratch: staged_indices_ merged, sorted
  uint64_t synced_membership_version_ = ~uint64_t{0};  // the World's at the last sync
  std::vector<std::vector<std::unique_ptr<protocol::PoseQuantizer>>> quantizers_;  // [worker][format]
  bool quantize_this_tick_ = false;
  bool quantize_unknown_ = false;  // entities without a record yet (spawned this tick)
  std::atomic<uint64_t> staged_overflow_{0};

  PoseCallback pose_callback_;
  uint64_t poses_quantized_ = 0;
};

}  // namespace posecast::server
