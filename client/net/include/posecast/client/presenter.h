#pragma once
// Presenter: what a client shows, apart from how the bytes arrive. It holds the entities
// (EntityRegistry), the decoded snapshots (SnapshotBuffer), the playout clock and each entity's
// PoseTrack, and every present() turns them into a palette per entity at the render time
// (interpolated, a render-time recipe, or briefly extrapolated and then converged without a
// pop). No sockets and no clock: time is passed in (microseconds on any monotonic clock), and
// messages come from whoever holds the transport: posecast's own Connection (NetClient
// composes the two), or a game's transport:
//
//   posecast::client::Presenter presenter(settings);
//   // once the server's Welcome is in (its manifest bound to local models):
//   presenter.start(welcome.tick_rate_hz, welcome.send_rate_hz, std::move(binding));
//   // every datagram payload from the server, dated by its arrival:
//   presenter.receive(payload, arrival_us);     // or on_snapshot / on_spawn / on_despawn
//   // the game's transport acks what presenter.ack() says, as often as it sends
//   // every frame:
//   presenter.present(now_us);  for (auto& e : presenter.entities()) draw(e.palette);
//
// One thread drives a presenter. Not for concurrent use.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/client/asset_library.h"
#include "posecast/client/entity_registry.h"
#include "posecast/client/event_queue.h"
#include "posecast/client/playout_clock.h"
#include "posecast/client/predictor.h"
#include "posecast/client/pose_track.h"
#include "posecast/client/snapshot_buffer.h"
#include "posecast/protocol/messages.h"

namespace posecast::client {

struct PresenterSettings {
  SnapshotBufferSettings buffer;
  PlayoutSettings playout;
  PresentSettings present;
  PredictionSettings prediction;
};

// The presenter's share of a client's statistics (docs/client.md says how each is made).
struct PresenterStats {
  double loss_percent = 0.0;       // snapshots lost, over the last 2 s
  double jitter_ms = 0.0;          // 95th percentile arrival spread, last 2 s
  double delay_ms = 0.0;           // newest server time - render time, now
  double target_delay_ms = 0.0;    // what the delay is steering to
  int loss_cover = 0;              // consecutive lost snapshots the delay rides out
  std::size_t buffer_depth = 0;    // buffered snapshot ticks after the render time

  // Counters since construction.
  uint64_t snapshot_parts = 0, snapshot_ticks = 0, snapshots_complete = 0, records_decoded = 0;
  uint64_t decode_errors = 0, missing_reference = 0, unknown_entity = 0, stale_records = 0;
  uint64_t duplicate_parts = 0, inconsistent_parts = 0, too_old_parts = 0, duplicate_records = 0;
  uint64_t spawns = 0, despawns = 0, unknown_model_spawns = 0;
  // Animation events (event_queue.h): distinct ones received, repeated copies, fired; waiting
  // for their render time (or a missing predecessor) now.
  uint64_t events_received = 0, events_duplicates = 0, events_fired = 0;
  std::size_t events_waiting = 0;
  uint64_t corrections = 0;         // converging fades started
  std::size_t extrapolating = 0;    // entities extrapolating (or stalled) at the last present
  std::size_t from_recipes = 0;     // entities shown from a render-time recipe at the last present
  // Presented entities whose derived frame (interpolated, extrapolated) could not use a recipe,
  // indexed by RecipeMiss (no recipe, unverified, not derivable; index 0 counts presented
  // entities with no miss).
  uint64_t recipe_misses[4] = {0, 0, 0, 0};
};

// One entity as shown at the last present()'s render time. Spans stay valid until the next
// present() or until the entity is removed.
struct PresentedEntity {
  uint32_t id = 0;
  uint16_t generation = 0;
  uint32_t model_id = 0;
  uint16_t rig_index = 0;
  const Model* model = nullptr;
  const Skeleton* skeleton = nullptr;
  PresentMode mode = PresentMode::kNone;
  bool correcting = false;
  bool from_recipe = false;  // the server's clips evaluated at the render time (pose_track.h)
  std::span<const Transform> locals;
  std::span<const glm::mat4> palette;  // skeleton->joint_count() matrices
  RecipeMiss recipe_miss = RecipeMiss::kNone;  // why a derived frame was not from a recipe
  // The mesh node's model-space matrix of this pose (identity for a skeleton without a mesh
  // node): the same bits as LocalToModelJob's, taken from the palette's own evaluation. Never
  // null for a presented entity; valid as long as the spans. A pointer: a frame writes every
  // PresentedEntity, and a matrix would double its size.
  const glm::mat4* mesh_model = nullptr;
  // Where it stands at the render time (RootTrack: interpolated between the server's held
  // roots, dead-reckoned at most PresentSettings::max_extrapolation_us past the newest).
  protocol::RootValue root;
};

// An animation event fired at the render time of its tick (docs/events.md), with its clip and
// marker when the entity's model is known here (null otherwise; valid while the model is).
struct FiredEvent {
  uint32_t sequence = 0;
  protocol::WireEvent event;
  int64_t time_us = 0;               // its tick's server time
  const Clip* clip = nullptr;
  const ClipMarker* marker = nullptr;
};

// What the presenter made of a raw payload (receive()).
enum class PayloadOutcome : uint8_t {
  kTaken,       // a Snapshot, EntitySpawn, EntityDespawn or AnimationEvents, handed to its on_ call
  kMalformed,   // not a message (protocol::decode_message failed)
  kNotPresentable,  // a valid message of another kind (handshake, status, disconnect)
};

class Presenter {
 public:
  explicit Presenter(const PresenterSettings& settings = {});

  // Starts a session with the server's rates (both > 0) and its manifest bound to local models:
  // forgets every entity and snapshot. The binding's models must outlive the presenter.
  void start(uint32_t tick_rate_hz, uint32_t send_rate_hz, AssetBinding binding);
  // Forgets every entity, snapshot and presented entity (and the binding). Counters stay.
  void clear();

  // Server messages, in any order and any number of times (duplicates, reordering and loss
  // are the presenter's to ride out). `arrival_us`: when the datagram arrived, on the clock
  // present() is given. The returned PartResult says what the part did (for acks and RTT).
  PartResult on_snapshot(const protocol::Snapshot& part, int64_t arrival_us);
  void on_spawn(const protocol::EntitySpawn& spawn);
  void on_despawn(const protocol::EntityDespawn& despawn);
  // Animation events (repeated by the server until acked): each kept once, fired by present().
  void on_events(const protocol::AnimationEvents& events);
  // A raw datagram payload (one encoded protocol message): decodes it and hands a Snapshot,
  // EntitySpawn or EntityDespawn to the call above. Payloads over net's datagram limit are
  // the transport's to refuse; any bytes are safe here.
  PayloadOutcome receive(std::span<const uint8_t> payload, int64_t arrival_us);

  // The Ack the server needs next (newest complete tick and the mask of those before it); the
  // caller sends it (protocol::Ack::echo_us is the caller's to stamp).
  protocol::Ack ack() const {
    protocol::Ack ack = buffer_.ack();
    ack.events_received = events_.received_through();
    return ack;
  }

  // Advances the render time to `now_us` and presents every entity at it.
  void present(int64_t now_us);

  // After present(): the render time (server us) and what each entity shows at it, by id.
  int64_t render_time_us() const { return playout_.render_time_us(); }
  std::span<const PresentedEntity> entities() const { return presented_; }
  // The animation events the last present() fired: those whose tick's time the render time
  // reached, each once over the session, in the server's order.
  std::span<const FiredEvent> fired_events() const { return fired_events_; }
  const EventQueue& events() const { return events_; }
  const PresentedEntity* find(uint32_t entity_id) const;

  // After present(): shows the owned entity `view.id` (of its generation) from the client's
  // prediction (predictor.h) instead of the snapshot stream: mode kPredicted, its locals,
  // palette, mesh matrix and root (the view's spans must outlive the frame). False, nothing
  // changed, when the entity is not presented or the palette's size is not its skeleton's.
  bool show_predicted(const PredictedView& view);

  // An OwnerState (docs/client.md, "Prediction"): to the predictor. `owned`: the session says
  // this client owns the entity (else dropped and counted).
  bool on_owner_state(const protocol::OwnerState& state, bool owned, int64_t now_us) {
    return predictor_.on_owner_state(state, owned, now_us);
  }
  // After present(): runs the prediction to server time `present_us` (Predictor::advance) and
  // shows each owned entity it predicts from it (show_predicted).
  void present_predicted(int64_t present_us, int64_t now_us);
  Predictor& predictor() { return predictor_; }
  const Predictor& predictor() const { return predictor_; }

  // The palette of an entity at any render time from the buffer alone (interpolation or
  // bounded extrapolation, no correction fade). kNone when there is nothing to show.
  // `palette` must have the entity's joint count.
  PresentMode evaluate_at(uint32_t entity_id, int64_t render_us, std::span<glm::mat4> palette);

  // Counters, and the playout figures at `now_us`.
  PresenterStats stats(int64_t now_us) const;
  const SnapshotBuffer& buffer() const { return buffer_; }
  const EntityRegistry& registry() const { return registry_; }
  const PlayoutClock& playout() const { return playout_; }
  const AssetBinding& binding() const { return binding_; }

 private:
  // The render time's tick, for retiring despawned entities.
  uint32_t render_tick(int64_t render_us) const;
  // Presents each entity's pose, palettes left pending; fills shown_indices_ and
  // palette_indices_.
  void present_poses(int64_t render_us);
  // Runs PaletteBatchJob over the entities in palette_indices_, eight of a skeleton at a time.
  void compute_pending_palettes(std::span<ClientEntity> entities);
  // presented_ from shown_indices_, with the frame's counters.
  void publish_presented();
  // fired_events_: the queue's events due at the render time, with their clips and markers.
  void fire_events(int64_t render_us);

  PresenterSettings settings_;
  AssetBinding binding_;
  Predictor predictor_;
  EntityRegistry registry_;
  SnapshotBuffer buffer_;
  PlayoutClock playout_;
  PresenterStats counters_;
  std::vector<PresentedEntity> presented_;
  EventQueue events_;
  std::vector<QueuedEvent> due_events_;   // present()'s scratch
  std::vector<FiredEvent> fired_events_;  // the last present()'s
  PoseTrack scratch_track_;
  PresentScratch scratch_;  // shared by every entity's PoseTrack in present()
  // present(): registry indices of the entities presented this frame, in order, and of those
  // whose palette is still to compute; PaletteBatchJob's world-matrix scratch.
  std::vector<std::size_t> shown_indices_;
  std::vector<std::size_t> palette_indices_;
  std::vector<float> batch_scratch_;
};

}  // namespace posecast::client
