#pragma once
// World: the deterministic animation simulation. No I/O, no networking, no clocks: time moves
// only when tick() is called, by exactly one tick of 1/tick_rate_hz seconds in integer
// microseconds (playback_time.h).
//
// One tick():
//   1. applies the queued commands due at this tick, in command_order (command_queue.h);
//   2. evaluates every entity at its current playback state: sample -> blend layers ->
//      local-to-model -> palette (-> palette hash), spread over the worker threads by fixed
//      index ranges, each worker with its own scratch buffers, so the bits never depend on the
//      thread count;
//   3. advances every entity's clip phases and crossfades by the tick's duration.
// So a command for tick n shows in tick n's palette, and a clip started at offset 0 shows its
// first frame.
//
// Assets are immutable and shared (std::shared_ptr<const Model>); each entity holds only a
// small EntityState. Steady-state ticks do not allocate; applying commands may.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/result.h"
#include "posecast/sim/animation_event.h"
#include "posecast/sim/animation_state.h"
#include "posecast/sim/command_queue.h"
#include "posecast/sim/commands.h"
#include "posecast/sim/evaluation_fault.h"
#include "posecast/sim/joint_mask.h"
#include "posecast/sim/tick_check.h"

namespace posecast::sim {

struct WorldOptions {
  uint32_t tick_rate_hz = 60;  // 1..1000000
  unsigned threads = 1;        // evaluation threads, >= 1 (the caller of tick() is one of them)
  // Per-entity palette hashes and the world hash each tick (regression runs, recording).
  // Benchmarks of the pose path alone turn it off. Implies `palettes`.
  bool hash_palettes = true;
  // Local-to-model and the skinning palette of every entity each tick. Off (with hash_palettes
  // off too), a tick evaluates local poses only, and only for the pose observer: the entities
  // it asks for (set_local_pose_observer), none without an observer. Clip times, fades and
  // commands advance for every entity all the same, so what is evaluated is what every tick
  // would have given. palette() then keeps the identity matrices an entity is spawned with,
  // and world_hash_of_palettes() hashes those.
  bool palettes = true;
  // A TickCheck each tick (tick_check.h): every entity's state hash and the palette hashes of
  // the rotating share, summed in the evaluation pass (recording; a replay that verifies).
  // Implies `palettes`. Costs about a state hash per entity and a palette hash per 16.
  bool tick_checks = false;
  // Test seam (evaluation_fault.h): flips a bit of one entity's evaluation or state. Not owned;
  // null in every product.
  const EvaluationFault* fault = nullptr;
};

struct WorldStats {
  uint64_t commands_applied = 0;
  uint64_t commands_rejected = 0;  // invalid for the world's state (unknown entity, clip, ...)
  uint64_t commands_late = 0;      // queued for a tick already run; applied at the next one
  uint64_t evaluation_failures = 0;  // entity-ticks whose palette could not be computed
  uint64_t poses_evaluated = 0;      // entity-ticks whose local pose was evaluated
  // Entity-ticks whose palette was written past the caches: a World that does not hash writes
  // them so once a tick's palettes outgrow the caches (world.cpp, kStreamingPaletteBytes).
  // Counted where asked for; a target without non-temporal stores writes them as usual.
  uint64_t palettes_streamed = 0;
  std::string last_rejection;       // why the last rejected command was rejected
};

// A typed hook into the World's evaluation pass (World::set_local_pose_observer): the server
// quantises each pose once, inside the parallel pass. Both calls run on the evaluation threads
// (worker < World::threads()); each index is visited by exactly one worker, so an observer that
// writes only per-index and per-worker data needs no locks. `index` is the entity's index in id
// order (as World::entity_id_at) after this tick's commands.
class LocalPoseObserver {
 public:
  // Which entities a World without palettes (WorldOptions) evaluates this tick: asked before
  // the entity is evaluated. A World computing palettes evaluates (and observes) every entity
  // whatever it says. The default wants every entity.
  virtual bool wants_pose(std::size_t index, EntityId id) const;
  // Called for every entity tick() evaluates successfully, with the local pose (node count TRS)
  // it just computed, before its palette. The span is valid only during the call.
  virtual void observe_pose(std::size_t index, EntityId id, std::span<const Transform> local_pose,
                            unsigned worker) = 0;
  virtual ~LocalPoseObserver() = default;
};

class World {
 public:
  explicit World(const WorldOptions& options = {});
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Registers a shared, immutable model; ids count from 0 in registration order. Errors: a null
  // model, no rig, a rig whose skeleton or clips fail validation, more than 65535 clips, a clip
  // longer than kMaxClipDurationUs.
  Result<ModelId> add_model(std::shared_ptr<const Model> model);
  std::size_t model_count() const;
  const Model* model(ModelId id) const;  // nullptr when unknown

  // Registers a mask; ids count from 0. Errors: unknown model or rig, wrong node count,
  // non-finite weights.
  Result<int32_t> add_mask(JointMask mask);
  std::size_t mask_count() const;
  int32_t find_mask(const std::string& name) const;  // kNoMask when absent

  // Queues a command (thread-safe; see command_queue.h for the order and the submitter rule).
  void submit(uint32_t submitter, Command command);
  std::size_t pending_commands() const;

  // Runs one tick (see the top of this file). Call from one thread at a time.
  void tick();
  // Runs one tick without step 2: applies the due commands and advances every entity exactly
  // as tick() does, but evaluates no pose. The entity state afterwards is bit-identical to
  // tick()'s, because evaluation never feeds back into state (a command that needs the current
  // pose, e.g. an interrupted crossfade freezing it, evaluates it from the state itself).
  // Palettes and palette hashes keep the values of the last evaluated tick, world_hash() is 0,
  // and the local-pose observer is not called, until the next tick(). For seeking: re-simulate
  // with this up to the tick before the target, then one tick() (replay/replayer.h).
  void fast_forward_tick();
  uint64_t tick_index() const;  // the tick the next tick() runs; 0 for a new world
  uint32_t tick_rate_hz() const;
  // The commands the last tick() took from the queue, in the order it applied them
  // (command_order), each with its submitter and its own tick (earlier than the tick when it
  // came late); rejected ones included (stats() counts them). Valid until the next tick() or
  // restore(); empty before the first tick and after restore(). A recorder logs exactly these:
  // resubmitted with the same submitters, in this order, just before the same tick, they are
  // applied in the same order (replay/recorder.h).
  std::span<const QueuedCommand> last_tick_commands() const;
  // The animation events the last tick() or fast_forward_tick() emitted (docs/events.md): every
  // marker a clip crossed while its share of the pose was at least kEventWeightThreshold, in
  // entity id order. Folded into world_hash() (when there are any), so goldens and recordings
  // check them. Valid until the next tick; empty after restore().
  std::span<const AnimationEvent> last_tick_events() const;

  // Optional hook into the evaluation pass (LocalPoseObserver, above); nullptr removes it.
  // Set between ticks, from the thread that ticks; the observer must outlive its use.
  void set_local_pose_observer(LocalPoseObserver* observer);

  unsigned threads() const;
  void set_threads(unsigned threads);  // takes effect at once; results do not change

  // --- Results of the last tick() (entities in id order; index i is the i-th smallest id) ---
  std::size_t entity_count() const;
  EntityId entity_id_at(std::size_t index) const;
  // Changes whenever an entity is spawned or despawned or the world is restored (not part of
  // the world's state: never saved, never hashed). Equal values mean the same entities at the
  // same indices, so a mirror of the id list need not compare it id by id.
  uint64_t membership_version() const;
  // Hash over entities in id order of (entity id, palette hash, root transform's x, y, z, yaw
  // bits), then, when the tick emitted any, its events (count, then entity, clip << 16 | marker
  // and layer of each); 0 before the first tick and
  // after restore() until the next tick. Needs hash_palettes.
  uint64_t world_hash() const;
  std::span<const glm::mat4> palette_at(std::size_t index) const;
  uint64_t palette_hash_at(std::size_t index) const;
  std::span<const glm::mat4> palette(EntityId id) const;  // empty when unknown
  // world_hash() when the World hashes; otherwise the same value computed here from the last
  // evaluated tick's palettes (for Worlds run with hash_palettes off, as the server runs its
  // World; after fast_forward_tick() these are older than the state).
  uint64_t world_hash_of_palettes() const;
  // True when ticks compute palettes (WorldOptions::palettes, hash_palettes or tick_checks).
  bool computes_palettes() const;
  // The last tick()'s TickCheck (WorldOptions::tick_checks; all zero without it, before the
  // first tick, after fast_forward_tick() and after restore()).
  const TickCheck& tick_check() const;
  bool computes_tick_checks() const;
  // The state hash of the entity at `index` (hash_entity_state of its state now: after the last
  // tick(), the one its tick check summed; 0 when the World computes no tick checks).
  uint64_t state_hash_at(std::size_t index) const;

  // Read-only state of one entity (nullptr when unknown), for tools and tests.
  const EntityState* find_entity(EntityId id) const;
  // The same by index in id order (as entity_id_at; nullptr past the end): no search, for a
  // pose observer, which is given the index (find_entity's binary search over 10,000 entity
  // records is a cache miss per probe).
  const EntityState* entity_at(std::size_t index) const;
  const Rig* entity_rig(EntityId id) const;
  // The local pose (node count entries) the entity shows at its current playback state: what
  // the next tick() evaluates if no command changes it. False for an unknown entity or a wrong
  // size. Allocates on first use only.
  bool evaluate_local_pose(EntityId id, std::span<Transform> out);

  const WorldStats& stats() const;

  // --- Snapshot / restore (docs/determinism.md, "Snapshots") ---
  // The whole animation world at a tick boundary, as versioned little-endian bytes: tick index
  // and rate, model identities (content hashes), masks, additive references, and every entity's
  // full state. Not included: queued commands (inputs, not state: a replay resubmits them),
  // sampling cursors (they never change output), statistics, the last tick's palettes.
  std::vector<uint8_t> snapshot() const;
  // Replaces the world's state with a snapshot's. The same models must be registered in the
  // same order (checked by content hash). Queued commands are dropped. On error nothing
  // changes and the message says what is wrong and where ("snapshot: entities[2].layers[0]
  // .target.slots[1].clip: 9 out of range (3 clips)").
  Status restore(std::span<const uint8_t> bytes);

  // --- One entity's state (client prediction: docs/client.md, "Prediction") ---
  // The entity's full state at this tick boundary as little-endian bytes (sim/src/snapshot.cpp:
  // the world snapshot's entity record, its model named by content hash so that another World
  // holding the same model reads it, a frozen pose with a chain stored as the chain): about
  // 100-300 bytes; a frozen pose without a chain adds 40 bytes a node. Empty when
  // the entity is unknown. Equal bytes mean equal deterministic state.
  std::vector<uint8_t> entity_snapshot(EntityId id) const;
  // Replaces the entity's state with the bytes' (adds the entity when absent) and returns its
  // id. The model must be registered here (by content hash); masks and additive references
  // are this World's ids (an entity using them is portable only between Worlds with the same
  // tables). Checked as restore() checks; on error nothing changes and the message says where.
  // Queued commands and the other entities are untouched. With `only`, bytes of another
  // entity are refused too.
  Result<EntityId> restore_entity(std::span<const uint8_t> bytes, std::optional<EntityId> only = std::nullopt);
  // Sets tick_index() without changing any state (a predicting client re-simulating from the
  // server's state at another tick). Clears the last tick's results (events, world hash,
  // tick check); queued commands stay.
  void set_tick_index(uint64_t tick);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace posecast::sim
