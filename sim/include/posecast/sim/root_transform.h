#pragma once
// Where an entity stands and how it moves over the ground (docs/movement.md). Conventions: Y up,
// the ground is the XZ plane, yaw is a rotation about +Y in radians (0 faces +Z, positive yaw
// turns +Z towards +X), distances in model units. Plain data: part of EntityState, snapshots
// and hashes; every change to it is deterministic (float + - * /, det_math only).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace posecast::sim {

struct RootTransform {
  float x = 0.0f, y = 0.0f, z = 0.0f;  // model units; y is carried, the World keeps it 0
  float yaw = 0.0f;                    // radians, always wrapped to [-pi, pi) (det_wrap_angle)
};
static_assert(sizeof(RootTransform) == 16, "RootTransform stays padding-free");

// |x| and |z| stay within this: a command or spawn beyond it is refused, and motion stops
// at it (the World clamps the position).
inline constexpr float kWorldHalfExtent = 16384.0f;
inline constexpr float kMaxMoveSpeed = 4096.0f;    // units per second
inline constexpr float kMaxTurnRate = 12.566371f;  // radians per second (two turns a second)
// Queued move_to targets per entity (MoveToCommand::queue); more are refused.
inline constexpr std::size_t kMaxWaypoints = 64;

enum class LocomotionMode : uint8_t {
  kNone = 0,    // layer 0 plays what play/crossfade started; no steering
  kMove = 1,    // forward at `speed`, turning at `turn_rate`
  kMoveTo = 2,  // towards (target_x, target_z) at `speed`, then the queued waypoints, then idle
};
inline constexpr uint8_t kLocomotionModeCount = 3;

// What a move / move_to command asked for; the World turns the entity each tick and drives
// layer 0's locomotion blend from it (sim/src/locomotion.cpp).
struct Locomotion {
  float speed = 0.0f;      // commanded forward speed, 0..kMaxMoveSpeed units/s
  float turn_rate = 0.0f;  // kMove: rad/s, |.| <= kMaxTurnRate
  float target_x = 0.0f;   // kMoveTo: the point walked to
  float target_z = 0.0f;
  LocomotionMode mode = LocomotionMode::kNone;
  uint8_t reserved[3] = {0, 0, 0};
};
static_assert(sizeof(Locomotion) == 20, "Locomotion stays padding-free");

// A queued move_to target (EntityState::waypoints) and the speed to walk to it at.
struct Waypoint {
  float x = 0.0f;
  float z = 0.0f;
  float speed = 0.0f;
  bool operator==(const Waypoint&) const = default;
};

// The queued waypoints of an entity, in order: a value (copies copy the queue) in one word,
// where a std::vector takes three. Nearly every entity has none, and every tick streams every
// entity's state through the cache. Allocates on its first push; clear() keeps the capacity.
class WaypointQueue {
 public:
  WaypointQueue() = default;
  WaypointQueue(const WaypointQueue& other)
      : items_(other.items_ ? std::make_unique<std::vector<Waypoint>>(*other.items_) : nullptr) {}
  WaypointQueue(WaypointQueue&&) noexcept = default;
  WaypointQueue& operator=(const WaypointQueue& other) {
    if (this != &other) items_ = other.items_ ? std::make_unique<std::vector<Waypoint>>(*other.items_) : nullptr;
    return *this;
  }
  WaypointQueue& operator=(WaypointQueue&&) noexcept = default;

  std::size_t size() const { return items_ ? items_->size() : 0; }
  bool empty() const { return size() == 0; }
  std::size_t capacity() const { return items_ ? items_->capacity() : 0; }
  const Waypoint* begin() const { return items_ ? items_->data() : nullptr; }
  const Waypoint* end() const { return begin() + size(); }
  Waypoint* begin() { return items_ ? items_->data() : nullptr; }
  Waypoint* end() { return begin() + size(); }
  const Waypoint& front() const { return items_->front(); }  // precondition: !empty()

  void push_back(const Waypoint& w) { storage().push_back(w); }
  void pop_front() { items_->erase(items_->begin()); }  // precondition: !empty(); no allocation
  void resize(std::size_t n) {
    if (n > 0 || items_) storage().resize(n);
  }
  void clear() {
    if (items_) items_->clear();
  }
  bool operator==(const WaypointQueue& other) const {
    return std::equal(begin(), end(), other.begin(), other.end());
  }

 private:
  std::vector<Waypoint>& storage() {
    if (!items_) items_ = std::make_unique<std::vector<Waypoint>>();
    return *items_;
  }
  std::unique_ptr<std::vector<Waypoint>> items_;
};

}  // namespace posecast::sim
