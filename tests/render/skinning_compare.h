#pragma once
// Compares GPU-skinned vertices with the CPU reference and names the worst vertex.

#include <glm/geometric.hpp>

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "posecast/render/cpu_skinning.h"

namespace posecast::render::testing {

// Relative position error: |gpu - cpu| / max(|cpu|, floor), where `floor` (a small fraction of
// the model's size) keeps vertices that pass near the origin from dividing by ~0. Normals are
// unit vectors: their absolute error is already relative.
struct SkinningDifference {
  double worst_position = 0.0;
  std::size_t worst_position_vertex = 0;
  double worst_normal = 0.0;
  std::size_t worst_normal_vertex = 0;

  std::string describe() const {
    std::ostringstream out;
    out << "worst position error " << worst_position << " (relative) at vertex "
        << worst_position_vertex << ", worst normal error " << worst_normal << " at vertex "
        << worst_normal_vertex;
    return out.str();
  }
};

inline SkinningDifference compare_skinning(const std::vector<SkinnedVertex>& cpu,
                                           const std::vector<SkinnedVertex>& gpu, double floor) {
  SkinningDifference d;
  for (std::size_t v = 0; v < std::min(cpu.size(), gpu.size()); ++v) {
    const double scale = std::max(static_cast<double>(glm::length(cpu[v].position)), floor);
    const double position =
        static_cast<double>(glm::length(gpu[v].position - cpu[v].position)) / scale;
    if (position > d.worst_position) {
      d.worst_position = position;
      d.worst_position_vertex = v;
    }
    const double normal = static_cast<double>(glm::length(gpu[v].normal - cpu[v].normal));
    if (normal > d.worst_normal) {
      d.worst_normal = normal;
      d.worst_normal_vertex = v;
    }
  }
  return d;
}

}  // namespace posecast::render::testing
