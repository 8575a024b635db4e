#pragma once
// Hit geometry: per-joint capsules built once per rig from its skin, posed from a pose's node
// matrices, and the ray tests a hit query runs on them (docs/hit-queries.md).
//
// A capsule is a bone: a segment from a joint to its child joint (one per child joint), or,
// for a joint with no child joint, from the joint to the centre of the vertices it weighs most;
// its radius is the farthest distance of those vertices (the ones whose largest skin weight is
// this joint) from the segment, or a configured radius. Segments are kept in the joint's
// bind-local space (the space the inverse bind matrix maps the mesh into), so posing one is
// two matrix-point products: entity * node_model * point. Immutable once built; shared by
// every entity of the rig.

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "posecast/model.h"
#include "posecast/result.h"

namespace posecast {

// A segment of a ray: points origin + t * direction for t in [0, length]; direction unit.
struct HitRay {
  glm::vec3 origin{0.0f};
  glm::vec3 direction{0.0f, 0.0f, 1.0f};
  float length = 0.0f;
};

enum class RayCheck : uint8_t {
  kOk,
  kNotFinite,      // a NaN or infinity in origin, direction or length
  kZeroDirection,  // a direction too short to normalise (|d| < 1e-6)
  kZeroLength,     // length <= 0
  kTooLong,        // length > the caller's bound
};
const char* to_string(RayCheck check);

// Checks `ray` and normalises its direction (in place) when it passes. `max_length` > 0.
RayCheck check_ray(HitRay& ray, float max_length);

// Smallest t in [0, ray.length] where the ray is inside the sphere (0 when it starts inside);
// false when it never is. ray.direction unit.
bool ray_sphere(const HitRay& ray, const glm::vec3& center, float radius, float& t);

// The same for the capsule of segment [a, b] and `radius` (a == b: a sphere).
bool ray_capsule(const HitRay& ray, const glm::vec3& a, const glm::vec3& b, float radius, float& t);

// One bone's capsule in its joint's bind-local space.
struct JointCapsule {
  uint16_t joint = 0;  // skin joint index (palette order)
  uint16_t node = 0;   // the joint's skeleton node (whose model matrix poses the capsule)
  glm::vec3 tip{0.0f};  // far end; the near end is the joint's origin
  float radius = 0.0f;
};

struct HitRigOptions {
  // Radius of a joint whose vertices give none (no mesh, no vertex weighs it most), as a
  // fraction of its bone's length, and at least min_radius.
  float fallback_radius_fraction = 0.2f;
  float min_radius = 0.01f;
  // Radii set by joint node name (the rig config's word over the skin's): every capsule of
  // the named joint gets this radius.
  std::vector<std::pair<std::string, float>> radius_by_name;
};

struct HitRig {
  std::vector<JointCapsule> capsules;  // in joint order, a joint's bones in child order
  // Broad phase: every capsule of every pose the rig's clips show (sampled at kBoundSamples
  // times per clip, and the rest pose) lies within bound_radius of the entity's root, with a
  // margin of 25 % (docs/hit-queries.md: poses far outside the clips' are not covered).
  float bound_radius = 0.0f;
  std::size_t byte_size() const { return sizeof(HitRig) + capsules.capacity() * sizeof(JointCapsule); }
};
inline constexpr int kBoundSamples = 32;

// Builds the capsules of `rig` (its first mesh's skin weights; all meshes' vertices count).
// Errors: a rig with no joints, a non-finite inverse bind, a non-finite or negative radius
// in the options.
Result<HitRig> build_hit_rig(const Rig& rig, const HitRigOptions& options = {});

// The entity's matrix from its root transform: translate(x, y, z) * rotate about +Y by yaw
// (det_sin_cos: the same bits everywhere).
glm::mat4 entity_matrix(float x, float y, float z, float yaw);

// A capsule in world space.
struct PosedCapsule {
  glm::vec3 a{0.0f}, b{0.0f};
  float radius = 0.0f;
};

// Poses every capsule of `rig` with the pose's node model matrices (LocalToModelJob's output)
// under `entity` (entity_matrix). out: rig.capsules.size() entries. False on a size mismatch.
bool pose_capsules(const HitRig& rig, std::span<const glm::mat4> node_models, const glm::mat4& entity,
                   std::span<PosedCapsule> out);

// The first capsule the ray enters: its index and distance. False when it enters none.
// Ties go to the lower index.
bool ray_capsules(const HitRay& ray, std::span<const PosedCapsule> capsules, std::size_t& index, float& t);

}  // namespace posecast
