#pragma once
// EntityRecord: the server's record of one World entity, kept by the PoseMirror in id order:
// identity (id, generation, model, rig), its position (the World root's) and owner, this tick's
// quantised pose, and the history of poses it was sent with (the baselines clients may
// reference). Its encoding cache belongs to the Replicator, which fills it while building
// snapshots and empties it when the tick's poses are committed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "posecast/protocol/messages.h"
#include "posecast/protocol/quantization.h"
#include "posecast/server/server_types.h"
#include "posecast/sim/animation_state.h"

namespace posecast::server {

using protocol::kNoTick;

// One quantised pose an entity was sent with, kept while some client may still reference it.
struct HistoryEntry {
  uint32_t tick = kNoTick;
  protocol::QuantizedPose pose;
  protocol::RootValue exact_root;  // the World's root at `tick` (pose.root is the held one)
};

// One cached encoding of this tick's pose against one (baseline, prior, older) reference.
struct EncodedVariant {
  uint32_t baseline_pose_tick = kNoTick;  // kNoTick: rest
  uint32_t prior_pose_tick = kNoTick;
  uint32_t older_pose_tick = kNoTick;
  uint32_t baseline_age = 0;
  uint32_t prior_age = 0;
  uint32_t older_age = 0;
  uint32_t offset = 0;  // into EntityRecord::encoded
  uint32_t size = 0;    // root bytes and pose bytes
  uint8_t root_size = 0;

  // Same references (offset and size aside).
  bool same_key(const EncodedVariant& other) const {
    return baseline_pose_tick == other.baseline_pose_tick && prior_pose_tick == other.prior_pose_tick &&
           older_pose_tick == other.older_pose_tick && baseline_age == other.baseline_age &&
           prior_age == other.prior_age && older_age == other.older_age;
  }
};
inline constexpr std::size_t kMaxEncodedVariants = 6;
inline constexpr std::size_t kMaxHistory = 64;

struct EntityRecord {
  sim::EntityId id = 0;
  uint16_t generation = 0;
  sim::ModelId model = 0;
  uint16_t rig = 0;
  uint32_t spawn_tick = 0;
  uint32_t changed_tick = kNoTick;  // last tick a command addressed it (PoseRecipe::steady_us)
  uint32_t format_index = 0;  // into PoseFormats::formats
  Vec3 position;  // where the World has its root this tick (interest)
  uint32_t owner = 0;  // client id; 0 = none

  // This tick's quantised pose (valid when current_tick == the tick being sent). After the
  // tick that sent it, the commit moves it into the history (current_in_history; the
  // history's newest entry then stays until the next pose arrives): last_quantized().
  protocol::QuantizedPose current;
  protocol::RootValue current_exact_root;  // the World's root behind current.root
  uint32_t current_tick = kNoTick;
  bool current_in_history = false;
  bool sent_this_tick = false;   // some client got a record: commit `current` to history
  // Poses this entity was sent with: a ring of history.size() slots holding history_size
  // entries, oldest at history_head; bounded (kMaxHistory), pruned by age and by what clients
  // can still reference. A ring so that dropping the oldest moves nothing (a HistoryEntry is
  // about 300 bytes); slots keep their capacity (no allocation when steady).
  std::vector<HistoryEntry> history;
  std::size_t history_head = 0;
  std::size_t history_size = 0;
  // The Replicator's encodings of this tick's pose (cleared at each commit).
  std::array<EncodedVariant, kMaxEncodedVariants> variants{};
  std::size_t variant_count = 0;
  std::vector<uint8_t> encoded;

  // The pose sent at `tick`, or nullptr when it is not in the history.
  const protocol::QuantizedPose* pose_at(uint32_t tick) const;
  // The pose quantised at current_tick (current_tick != kNoTick): `current`, or the newest
  // history entry once committed.
  const protocol::QuantizedPose& last_quantized() const;
  // The k-th oldest history entry, k < history_size.
  HistoryEntry& history_entry(std::size_t k);
  const HistoryEntry& history_entry(std::size_t k) const;
  // Drops the oldest history entry (history_size > 0).
  void drop_oldest_history();
  // A slot for a new newest entry (history_size < kMaxHistory), growing the ring when full.
  HistoryEntry& push_history();
  // Drops the history entries older than `oldest_needed`; the newest stays while it holds the
  // last quantised pose (current_in_history).
  void prune_history(uint32_t oldest_needed);
  // Moves `current` into the history as the pose sent at `tick` when sent_this_tick, prunes
  // what is older than `oldest_needed`, and empties the encoding cache.
  void commit_sent(uint32_t tick, uint32_t oldest_needed);
};

}  // namespace posecast::server
