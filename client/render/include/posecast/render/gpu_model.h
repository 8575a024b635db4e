#pragma once
// A Model's meshes uploaded to the GPU once: per SkinnedMesh one vertex array (positions,
// normals, UVs, joint indices as an integer attribute, weights; identical vertices welded into
// one) and one index buffer, drawn per SubMesh; base colour images decoded and uploaded as
// sRGB textures. Also the CPU-side data the renderer needs per rig (bind-pose bounds, bone
// segments for skeleton lines).
//
// Vertex attribute locations match shaders/skinned.vert.glsl: 0 position, 1 normal, 2 uv,
// 3 joints (uvec4 via glVertexAttribIPointer from uint16), 4 weights.

#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "posecast/model.h"
#include "posecast/render/gl.h"
#include "posecast/result.h"

namespace posecast::render {

struct Aabb {
  glm::vec3 min{1e30f};
  glm::vec3 max{-1e30f};
  bool empty() const { return min.x > max.x; }
  void add(const glm::vec3& p);
  void add(const Aabb& other);
  glm::vec3 center() const { return (min + max) * 0.5f; }
  glm::vec3 size() const { return empty() ? glm::vec3(0.0f) : max - min; }
};

// The axis-aligned box around the eight corners of `box` transformed by `m`.
Aabb transform_aabb(const glm::mat4& m, const Aabb& box);

struct GpuSubMesh {
  uint32_t first_index = 0;
  uint32_t index_count = 0;
  glm::vec4 base_color{1.0f};
  GLuint texture = 0;  // 0: untextured
  bool double_sided = false;  // SubMesh::double_sided: no back-face culling
};

struct GpuMesh {
  GLuint vertex_array = 0;
  GLuint buffers[6] = {};  // positions, normals, uvs, joints, weights, indices
  uint32_t vertex_count = 0;  // uploaded (welded) vertices
  // Per SkinnedMesh vertex, the uploaded vertex that holds it (identical vertices are
  // uploaded once, vertex_welding.h).
  std::vector<uint32_t> vertex_of_source;
  std::vector<GpuSubMesh> submeshes;
};

struct GpuRig {
  uint32_t joint_count = 0;
  std::vector<GpuMesh> meshes;
  Aabb bind_bounds;  // palette space: mesh vertices, or joint positions when there is no mesh
  // Skeleton lines: joint j's origin in palette space is palette[j] * joint_bind_origin[j]
  // (the translation of inverse(inverse_bind[j])); joint_parent[j] is the nearest ancestor that
  // is a joint, or -1.
  std::vector<glm::vec4> joint_bind_origin;
  std::vector<int32_t> joint_parent;
};

// Owns the GL objects of one model; move-only; needs a current context for its whole life.
class GpuModel {
 public:
  GpuModel() = default;
  ~GpuModel();
  GpuModel(GpuModel&& other) noexcept;
  GpuModel& operator=(GpuModel&& other) noexcept;
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  // Uploads every rig's meshes. Errors: a rig with more joints than `max_joints` (the shader's
  // palette size), a joint index or an index out of range, an inverse bind that cannot be
  // inverted. An image that cannot be decoded is not an error: the submesh draws untextured
  // and the reason is appended to `warnings` (when given).
  static Result<GpuModel> upload(const Model& model, uint32_t max_joints,
                                 std::vector<std::string>* warnings = nullptr);

  const std::vector<GpuRig>& rigs() const { return rigs_; }

 private:
  void release();
  std::vector<GpuRig> rigs_;
  std::vector<GLuint> textures_;
};

}  // namespace posecast::render
