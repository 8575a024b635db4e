#include "posecast/hit_geometry.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>

#include "posecast/det_math.h"
#include "posecast/local_to_model.h"
#include "posecast/pose_evaluation.h"
#include "posecast/transform.h"

namespace posecast {
namespace {

bool finite(const glm::vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// Distance from p to segment [0, tip].
float distance_to_bone(const glm::vec3& p, const glm::vec3& tip) {
  const float len2 = glm::dot(tip, tip);
  float s = len2 > 0.0f ? glm::dot(p, tip) / len2 : 0.0f;
  s = std::clamp(s, 0.0f, 1.0f);
  return glm::length(p - tip * s);
}

// The skin joint whose node is the nearest joint ancestor of `node`, or -1.
int parent_joint(const Skeleton& skeleton, const std::vector<int>& joint_of_node, int node) {
  for (int n = skeleton.parents[node]; n != kNoParent; n = skeleton.parents[n]) {
    if (joint_of_node[n] >= 0) return joint_of_node[n];
  }
  return -1;
}

// Bind-local positions of the vertices each joint weighs most (largest weight; ties: the
// first influence).
std::vector<std::vector<glm::vec3>> dominant_vertices(const Rig& rig) {
  const Skeleton& skeleton = rig.skeleton;
  std::vector<std::vector<glm::vec3>> out(skeleton.joint_count());
  for (const SkinnedMesh& mesh : rig.meshes) {
    const std::size_t n = std::min({mesh.positions.size(), mesh.joints.size(), mesh.weights.size()});
    for (std::size_t v = 0; v < n; ++v) {
      int best = 0;
      for (int i = 1; i < 4; ++i) {
        if (mesh.weights[v][i] > mesh.weights[v][best]) best = i;
      }
      const uint16_t joint = mesh.joints[v][best];
      if (joint >= out.size() || !(mesh.weights[v][best] > 0.0f)) continue;
      out[joint].push_back(affine_point(skeleton.inverse_bind[joint], mesh.positions[v]));
    }
  }
  return out;
}

// One joint's capsules: one per child joint (each vertex measured against its nearest bone),
// or, for a leaf, one to the centre of its vertices.
void joint_capsules(uint16_t joint, uint16_t node, const std::vector<glm::vec3>& tips,
                    const std::vector<glm::vec3>& vertices, const HitRigOptions& options,
                    std::vector<JointCapsule>& out) {
  std::vector<glm::vec3> bones = tips;
  if (bones.empty()) {
    glm::vec3 centre(0.0f);
    for (const glm::vec3& p : vertices) centre += p;
    if (!vertices.empty()) centre /= static_cast<float>(vertices.size());
    bones.push_back(centre);
  }
  std::vector<float> radius(bones.size(), -1.0f);
  for (const glm::vec3& p : vertices) {
    std::size_t nearest = 0;
    float best = distance_to_bone(p, bones[0]);
    for (std::size_t k = 1; k < bones.size(); ++k) {
      const float d = distance_to_bone(p, bones[k]);
      if (d < best) best = d, nearest = k;
    }
    radius[nearest] = std::max(radius[nearest], best);
  }
  for (std::size_t k = 0; k < bones.size(); ++k) {
    float r = radius[k];
    if (r < 0.0f) r = options.fallback_radius_fraction * glm::length(bones[k]);
    out.push_back(JointCapsule{joint, node, bones[k], std::max(r, options.min_radius)});
  }
}

// Largest distance from the entity's root of any capsule point over the rest pose and
// kBoundSamples times of every clip.
float pose_extent(const Rig& rig, const HitRig& hit) {
  PoseBuffers buffers;
  SamplingCursor cursor;
  std::vector<PosedCapsule> posed(hit.capsules.size());
  float extent = 0.0f;
  auto measure = [&](int clip, int64_t time_us) {
    if (!evaluate_pose(rig, clip, time_us, cursor, buffers)) return;
    if (!pose_capsules(hit, buffers.models, glm::mat4(1.0f), posed)) return;
    for (const PosedCapsule& c : posed) {
      extent = std::max({extent, glm::length(c.a) + c.radius, glm::length(c.b) + c.radius});
    }
  };
  measure(kRestPose, 0);
  for (std::size_t c = 0; c < rig.clips.size(); ++c) {
    for (int s = 0; s <= kBoundSamples; ++s) {
      measure(static_cast<int>(c), rig.clips[c].duration_us * s / kBoundSamples);
    }
  }
  return extent;
}

}  // namespace

const char* to_string(RayCheck check) {
  switch (check) {
    case RayCheck::kOk: return "ok";
    case RayCheck::kNotFinite: return "not finite";
    case RayCheck::kZeroDirection: return "zero direction";
    case RayCheck::kZeroLength: return "zero length";
    case RayCheck::kTooLong: return "too long";
  }
  return "?";
}

RayCheck check_ray(HitRay& ray, float max_length) {
  if (!finite(ray.origin) || !finite(ray.direction) || !std::isfinite(ray.length)) return RayCheck::kNotFinite;
  if (!(ray.length > 0.0f)) return RayCheck::kZeroLength;
  if (ray.length > max_length) return RayCheck::kTooLong;
  const float len = glm::length(ray.direction);
  if (!(len >= 1e-6f) || !std::isfinite(len)) return RayCheck::kZeroDirection;
  ray.direction /= len;
  return RayCheck::kOk;
}

bool ray_sphere(const HitRay& ray, const glm::vec3& center, float radius, float& t) {
  const glm::vec3 oc = ray.origin - center;
  const float c = glm::dot(oc, oc) - radius * radius;
  if (c <= 0.0f) {
    t = 0.0f;
    return true;
  }
  const float b = glm::dot(oc, ray.direction);
  const float h = b * b - c;
  if (h < 0.0f || b > 0.0f) return false;  // misses, or the sphere lies behind the origin
  const float hit = -b - std::sqrt(h);
  if (hit < 0.0f || hit > ray.length) return false;
  t = hit;
  return true;
}

bool ray_capsule(const HitRay& ray, const glm::vec3& a, const glm::vec3& b, float radius, float& t) {
  const glm::vec3 ba = b - a;
  const float baba = glm::dot(ba, ba);
  if (distance_to_bone(ray.origin - a, ba) <= radius) {
    t = 0.0f;
    return true;
  }
  bool hit = false;
  float best = ray.length;
  // The cylinder's side (Inigo Quilez's capsule intersection), kept only between the caps.
  const glm::vec3 oa = ray.origin - a;
  const float bard = glm::dot(ba, ray.direction);
  const float baoa = glm::dot(ba, oa);
  const float rdoa = glm::dot(ray.direction, oa);
  const float oaoa = glm::dot(oa, oa);
  const float qa = baba - bard * bard;
  if (baba > 0.0f && qa > 1e-12f * baba) {
    const float qb = baba * rdoa - baoa * bard;
    const float qc = baba * oaoa - baoa * baoa - radius * radius * baba;
    const float h = qb * qb - qa * qc;
    if (h >= 0.0f) {
      const float side = (-qb - std::sqrt(h)) / qa;
      const float y = baoa + side * bard;
      if (side >= 0.0f && side <= best && y > 0.0f && y < baba) best = side, hit = true;
    }
  }
  float cap = 0.0f;
  if (ray_sphere(ray, a, radius, cap) && cap <= best) best = cap, hit = true;
  if (ray_sphere(ray, b, radius, cap) && cap <= best) best = cap, hit = true;
  if (hit) t = best;
  return hit;
}

Result<HitRig> build_hit_rig(const Rig& rig, const HitRigOptions& options) {
  const Skeleton& skeleton = rig.skeleton;
  if (skeleton.joint_count() == 0) return Error{"hit rig: the rig has no joints"};
  if (!(options.min_radius >= 0.0f) || !std::isfinite(options.min_radius) ||
      !(options.fallback_radius_fraction >= 0.0f) || !std::isfinite(options.fallback_radius_fraction)) {
    return Error{"hit rig: radius options must be finite and >= 0"};
  }
  for (const auto& [name, r] : options.radius_by_name) {
    if (!(r >= 0.0f) || !std::isfinite(r)) return Error{"hit rig: radius of '" + name + "' must be finite and >= 0"};
  }
  std::vector<int> joint_of_node(skeleton.node_count(), -1);
  std::vector<glm::mat4> bind(skeleton.joint_count());  // joint -> mesh space at bind time
  for (std::size_t j = 0; j < skeleton.joint_count(); ++j) {
    joint_of_node[skeleton.joint_nodes[j]] = static_cast<int>(j);
    if (!affine_inverse(skeleton.inverse_bind[j], bind[j])) {
      return Error{"hit rig: joint " + std::to_string(j) + ": inverse bind matrix is singular"};
    }
  }
  std::vector<std::vector<glm::vec3>> tips(skeleton.joint_count());
  for (std::size_t k = 0; k < skeleton.joint_count(); ++k) {
    const int parent = parent_joint(skeleton, joint_of_node, skeleton.joint_nodes[k]);
    if (parent < 0) continue;
    tips[parent].push_back(affine_point(skeleton.inverse_bind[parent], glm::vec3(bind[k][3])));
  }
  const std::vector<std::vector<glm::vec3>> vertices = dominant_vertices(rig);
  HitRig hit;
  for (std::size_t j = 0; j < skeleton.joint_count(); ++j) {
    const uint16_t node = skeleton.joint_nodes[j];
    const std::size_t first = hit.capsules.size();
    joint_capsules(static_cast<uint16_t>(j), node, tips[j], vertices[j], options, hit.capsules);
    for (const auto& [name, r] : options.radius_by_name) {
      if (skeleton.names[node] != name) continue;
      for (std::size_t c = first; c < hit.capsules.size(); ++c) hit.capsules[c].radius = r;
    }
  }
  for (const JointCapsule& c : hit.capsules) {
    if (!finite(c.tip) || !std::isfinite(c.radius)) return Error{"hit rig: joint " + std::to_string(c.joint) + ": capsule not finite"};
  }
  hit.bound_radius = 1.25f * pose_extent(rig, hit);
  return hit;
}

glm::mat4 entity_matrix(float x, float y, float z, float yaw) {
  float s = 0.0f, c = 1.0f;
  det_sin_cos(yaw, s, c);
  glm::mat4 m(1.0f);
  m[0] = glm::vec4(c, 0.0f, -s, 0.0f);
  m[2] = glm::vec4(s, 0.0f, c, 0.0f);
  m[3] = glm::vec4(x, y, z, 1.0f);
  return m;
}

bool pose_capsules(const HitRig& rig, std::span<const glm::mat4> node_models, const glm::mat4& entity,
                   std::span<PosedCapsule> out) {
  if (out.size() != rig.capsules.size()) return false;
  for (std::size_t i = 0; i < rig.capsules.size(); ++i) {
    const JointCapsule& c = rig.capsules[i];
    if (c.node >= node_models.size()) return false;
    const glm::mat4 m = affine_mul(entity, node_models[c.node]);
    out[i] = PosedCapsule{glm::vec3(m[3]), affine_point(m, c.tip), c.radius};
  }
  return true;
}

bool ray_capsules(const HitRay& ray, std::span<const PosedCapsule> capsules, std::size_t& index, float& t) {
  bool hit = false;
  float best = 0.0f;
  for (std::size_t i = 0; i < capsules.size(); ++i) {
    float d = 0.0f;
    if (!ray_capsule(ray, capsules[i].a, capsules[i].b, capsules[i].radius, d)) continue;
    if (!hit || d < best) best = d, index = i, hit = true;
  }
  if (hit) t = best;
  return hit;
}

}  // namespace posecast
