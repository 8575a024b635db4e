#include "posecast/render/cpu_skinning.h"

#include <cmath>

namespace posecast::render {

bool skinning_inputs_fit(const SkinnedMesh& mesh, std::size_t palette_size, std::size_t out_size) {
  const std::size_t n = mesh.positions.size();
  if (out_size != n || mesh.normals.size() != n || mesh.joints.size() != n || mesh.weights.size() != n) {
    return false;
  }
  for (std::size_t v = 0; v < n; ++v) {
    for (int k = 0; k < 4; ++k) {
      if (mesh.weights[v][k] != 0.0f && mesh.joints[v][k] >= palette_size) return false;
    }
  }
  return true;
}

bool skin_vertices_cpu(const SkinnedMesh& mesh, std::span<const glm::mat4> palette,
                       std::span<SkinnedVertex> out) {
  if (!skinning_inputs_fit(mesh, palette.size(), out.size())) return false;
  const std::size_t n = mesh.positions.size();
  for (std::size_t v = 0; v < n; ++v) {
    double skin[4][4] = {};  // [column][row]
    for (int k = 0; k < 4; ++k) {
      const double w = static_cast<double>(mesh.weights[v][k]);
      if (w == 0.0) continue;
      const glm::mat4& m = palette[mesh.joints[v][k]];
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) skin[c][r] += w * static_cast<double>(m[c][r]);
    }
    const glm::dvec3 p(mesh.positions[v]);  // exact widening, component by component
    const glm::dvec3 nrm(mesh.normals[v]);
    double position[3];
    double normal[3];
    for (int r = 0; r < 3; ++r) {
      position[r] = skin[0][r] * p[0] + skin[1][r] * p[1] + skin[2][r] * p[2] + skin[3][r];
      normal[r] = skin[0][r] * nrm[0] + skin[1][r] * nrm[1] + skin[2][r] * nrm[2];
    }
    const double length =
        std::sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
    SkinnedVertex& o = out[v];
    o.position = glm::vec3(static_cast<float>(position[0]), static_cast<float>(position[1]),
                           static_cast<float>(position[2]));
    o.normal = length > 0.0 ? glm::vec3(static_cast<float>(normal[0] / length),
                                        static_cast<float>(normal[1] / length),
                                        static_cast<float>(normal[2] / length))
                            : glm::vec3(0.0f);
  }
  return true;
}

}  // namespace posecast::render
