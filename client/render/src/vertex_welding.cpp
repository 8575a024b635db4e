#include "posecast/render/vertex_welding.h"

#include <cstring>
#include <string>
#include <unordered_map>

namespace posecast::render {
namespace {

// One vertex's attributes as bytes: the welding key.
constexpr std::size_t kKeyBytes = sizeof(glm::vec3) * 2 + sizeof(glm::vec2) +
                                  sizeof(glm::u16vec4) + sizeof(glm::vec4);

template <class T>
char* append(char* out, const T& value) {
  std::memcpy(out, &value, sizeof(T));
  return out + sizeof(T);
}

}  // namespace

WeldedVertices weld_vertices(const SkinnedMesh& mesh, std::span<const glm::u16vec4> joints) {
  const std::size_t count = mesh.positions.size();
  WeldedVertices out;
  // assign(), not resize(): GCC 12 reports a false -Wnull-dereference for resize() here.
  out.welded_of_source.assign(count, 0u);
  std::unordered_map<std::string, uint32_t> seen;
  seen.reserve(count);
  // Sized for the worst case (nothing welds) and trimmed after: no growth in the loop.
  out.positions.assign(count, glm::vec3(0.0f));
  out.normals.assign(count, glm::vec3(0.0f));
  out.uvs.assign(count, glm::vec2(0.0f));
  out.joints.assign(count, glm::u16vec4(0));
  out.weights.assign(count, glm::vec4(0.0f));
  uint32_t welded = 0;
  std::string key(kKeyBytes, '\0');
  for (std::size_t v = 0; v < count; ++v) {
    char* p = key.data();
    p = append(p, mesh.positions[v]);
    p = append(p, mesh.normals[v]);
    p = append(p, mesh.uvs[v]);
    p = append(p, joints[v]);
    append(p, mesh.weights[v]);
    const auto [it, inserted] = seen.try_emplace(key, welded);
    if (inserted) {
      out.positions[welded] = mesh.positions[v];
      out.normals[welded] = mesh.normals[v];
      out.uvs[welded] = mesh.uvs[v];
      out.joints[welded] = joints[v];
      out.weights[welded] = mesh.weights[v];
      ++welded;
    }
    out.welded_of_source[v] = it->second;
  }
  out.positions.resize(welded);
  out.normals.resize(welded);
  out.uvs.resize(welded);
  out.joints.resize(welded);
  out.weights.resize(welded);
  out.indices.reserve(mesh.indices.size());
  for (const uint32_t index : mesh.indices) out.indices.push_back(out.welded_of_source[index]);
  return out;
}

}  // namespace posecast::render
