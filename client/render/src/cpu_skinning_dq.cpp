#include "posecast/render/cpu_skinning.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace posecast::render {

namespace {

struct DVec4 {
  double x = 0.0, y = 0.0, z = 0.0, w = 0.0;
};

DVec4 widen(const glm::vec4& v) {
  return {static_cast<double>(v.x), static_cast<double>(v.y), static_cast<double>(v.z),
          static_cast<double>(v.w)};
}

double dot(const DVec4& a, const DVec4& b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

glm::dvec3 xyz(const DVec4& v) { return {v.x, v.y, v.z}; }

// rotate(q, v) = v + 2 q.xyz x (q.xyz x v + q.w v), for unit q.
glm::dvec3 rotate(const DVec4& q, const glm::dvec3& v) {
  const glm::dvec3 u = xyz(q);
  return v + 2.0 * glm::cross(u, glm::cross(u, v) + q.w * v);
}

// The influence with the largest weight (the first of equal ones).
int pivot_influence(const glm::vec4& weights) {
  int pivot = 0;
  for (int k = 1; k < 4; ++k)
    if (weights[k] > weights[pivot]) pivot = k;
  return pivot;
}

}  // namespace

bool skin_vertices_cpu_dq(const SkinnedMesh& mesh, std::span<const DualQuaternion> palette,
                          std::span<SkinnedVertex> out) {
  if (!skinning_inputs_fit(mesh, palette.size(), out.size())) return false;
  const std::size_t n = mesh.positions.size();
  std::vector<SkinnedVertex> result(n);
  for (std::size_t v = 0; v < n; ++v) {
    const int pivot = pivot_influence(mesh.weights[v]);
    const DVec4 pivot_real = widen(palette[mesh.joints[v][pivot]].real);
    DVec4 real;
    DVec4 dual;
    for (int k = 0; k < 4; ++k) {
      const double w = static_cast<double>(mesh.weights[v][k]);
      if (w == 0.0) continue;
      const DualQuaternion& dq = palette[mesh.joints[v][k]];
      const DVec4 r = widen(dq.real);
      const DVec4 d = widen(dq.dual);
      const double s = dot(r, pivot_real) < 0.0 ? -w : w;
      real = {real.x + s * r.x, real.y + s * r.y, real.z + s * r.z, real.w + s * r.w};
      dual = {dual.x + s * d.x, dual.y + s * d.y, dual.z + s * d.z, dual.w + s * d.w};
    }
    const double length = std::sqrt(dot(real, real));
    if (!(length > 0.0)) return false;
    const DVec4 r{real.x / length, real.y / length, real.z / length, real.w / length};
    const DVec4 d{dual.x / length, dual.y / length, dual.z / length, dual.w / length};
    const glm::dvec3 translation = 2.0 * (r.w * xyz(d) - d.w * xyz(r) + glm::cross(xyz(r), xyz(d)));
    const glm::dvec3 position = rotate(r, glm::dvec3(mesh.positions[v])) + translation;
    const glm::dvec3 normal = rotate(r, glm::dvec3(mesh.normals[v]));
    const double normal_length = glm::length(normal);
    result[v].position = glm::vec3(position);
    result[v].normal = normal_length > 0.0 ? glm::vec3(normal / normal_length) : glm::vec3(0.0f);
  }
  std::copy(result.begin(), result.end(), out.begin());
  return true;
}

}  // namespace posecast::render
