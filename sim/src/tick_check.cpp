#include "posecast/sim/tick_check.h"

#include <bit>
#include <cstring>

#include "posecast/transform.h"

namespace posecast::sim {
namespace {

// Four multiply lanes over 64-bit words, word i to lane i % 4 of its block of 16: each step
// (lane ^ w) * odd is a bijection of the lane, so a single changed word always changes its
// lane, and the four chains run in parallel (one chain is a multiply's latency per word; a
// one-layer entity is about ten words). Then a splitmix64 finaliser, so that the sums over
// entities (tick_check.h) do not add hashes linear in the fields.
class StateHasher {
 public:
  void add(uint64_t w) {
    words_[count_++] = w;
    if (count_ == kBlock) fold();
  }
  void add2(uint32_t lo, uint32_t hi) { add(uint64_t{lo} | (uint64_t{hi} << 32)); }
  void add_floats(float lo, float hi) { add2(std::bit_cast<uint32_t>(lo), std::bit_cast<uint32_t>(hi)); }
  uint64_t value() {
    fold();
    uint64_t z = lanes_[0] ^ std::rotl(lanes_[1], 17) ^ std::rotl(lanes_[2], 31) ^ std::rotl(lanes_[3], 47);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  static constexpr std::size_t kBlock = 16;
  static constexpr uint64_t kOdd[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                                       0xd6e8feb86659fd93ull};
  void fold() {
    for (std::size_t i = 0; i < count_; ++i) lanes_[i % 4] = (lanes_[i % 4] ^ words_[i]) * kOdd[i % 4];
    count_ = 0;
  }
  uint64_t words_[kBlock];
  std::size_t count_ = 0;
  uint64_t lanes_[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
};

void add_motion(StateHasher& h, const Motion& m) {
  h.add2(static_cast<uint32_t>(m.speed), uint32_t{m.count} | (uint32_t{static_cast<uint8_t>(m.wrap)} << 8) |
                                             (uint32_t{m.root_motion} << 16) | (uint32_t{m.sync} << 24));
  const int count = m.count < kMaxBlendClips ? m.count : kMaxBlendClips;
  for (int i = 0; i < count; ++i) {
    const ClipSlot& s = m.slots[static_cast<std::size_t>(i)];
    h.add(static_cast<uint64_t>(s.phase));
    h.add2(std::bit_cast<uint32_t>(s.weight), s.clip);
  }
}

void add_layer(StateHasher& h, const Layer& l) {
  h.add2(std::bit_cast<uint32_t>(l.weight), static_cast<uint32_t>(l.mask));
  h.add2(static_cast<uint32_t>(l.reference),
         uint32_t{static_cast<uint8_t>(l.fade_source)} | (uint32_t{static_cast<uint8_t>(l.mode)} << 8));
  add_motion(h, l.target);
  if (l.fade_source == FadeSource::kNone) return;
  h.add(static_cast<uint64_t>(l.fade_elapsed_us));
  h.add(static_cast<uint64_t>(l.fade_duration_us));
  if (l.fade_source == FadeSource::kMotion) add_motion(h, l.source);
  if (l.fade_source != FadeSource::kFrozenPose) return;
  h.add(l.frozen.size());
  for (const Transform& t : l.frozen) {
    h.add_floats(t.translation.x, t.translation.y);
    h.add_floats(t.translation.z, t.rotation.x);
    h.add_floats(t.rotation.y, t.rotation.z);
    h.add_floats(t.rotation.w, t.scale.x);
    h.add_floats(t.scale.y, t.scale.z);
  }
}

}  // namespace

uint8_t check_sum_count(bool any, EntityId max_id) {
  return static_cast<uint8_t>(1 + (any ? std::bit_width(max_id) : 0));
}

uint64_t hash_entity_state(const EntityState& state) {
  StateHasher h;
  h.add2(state.model, uint32_t{state.rig} | (static_cast<uint32_t>(state.layers.size()) << 16));
  for (const Layer& layer : state.layers) add_layer(h, layer);
  h.add_floats(state.root.x, state.root.y);
  h.add_floats(state.root.z, state.root.yaw);
  const Locomotion& loco = state.locomotion;
  h.add2(std::bit_cast<uint32_t>(state.sway), static_cast<uint32_t>(loco.mode));
  if (loco.mode != LocomotionMode::kNone) {
    h.add_floats(loco.speed, loco.turn_rate);
    h.add_floats(loco.target_x, loco.target_z);
  }
  h.add(state.waypoints.size());
  for (const Waypoint& w : state.waypoints) {
    h.add_floats(w.x, w.z);
    h.add(std::bit_cast<uint32_t>(w.speed));
  }
  return h.value();
}

bool same_as_recorded(const CheckSums& replayed, const CheckSums& recorded, uint64_t total_mask) {
  if (((replayed.sums[0] ^ recorded.sums[0]) & total_mask) != 0) return false;
  for (std::size_t i = 1; i < kMaxCheckSums; ++i) {
    if (((replayed.sums[i] ^ recorded.sums[i]) & kLocatorMask) != 0) return false;
  }
  return true;
}

std::optional<EntityId> locate_entity(const CheckSums& a, const CheckSums& b) {
  const uint64_t total = (a.sums[0] - b.sums[0]) & kLocatorMask;
  if (total == 0) return std::nullopt;  // equal, cancelling, or 0 in the locator bits
  EntityId id = 0;
  for (std::size_t bit = 0; bit + 1 < kMaxCheckSums; ++bit) {
    const uint64_t d = (a.sums[bit + 1] - b.sums[bit + 1]) & kLocatorMask;
    if (d == total) {
      id |= EntityId{1} << bit;
    } else if (d != 0) {
      return std::nullopt;  // a bit's sum differs by part of the total: several entities
    }
  }
  return id;
}

}  // namespace posecast::sim
