#include "posecast/render/gpu_model.h"

#include <stb_image.h>

#include <algorithm>
#include <utility>

#include "posecast/render/vertex_welding.h"
#include "posecast/transform.h"

namespace posecast::render {

void Aabb::add(const glm::vec3& p) {
  min = glm::min(min, p);
  max = glm::max(max, p);
}

void Aabb::add(const Aabb& other) {
  if (other.empty()) return;
  add(other.min);
  add(other.max);
}

Aabb transform_aabb(const glm::mat4& m, const Aabb& box) {
  Aabb out;
  if (box.empty()) return out;
  for (int corner = 0; corner < 8; ++corner) {
    const glm::vec3 p((corner & 1) ? box.max.x : box.min.x, (corner & 2) ? box.max.y : box.min.y,
                      (corner & 4) ? box.max.z : box.min.z);
    out.add(glm::vec3(m * glm::vec4(p, 1.0f)));
  }
  return out;
}

namespace {

template <class T>
GLuint upload_buffer(GLenum target, const std::vector<T>& data) {
  GLuint buffer = 0;
  glGenBuffers(1, &buffer);
  glBindBuffer(target, buffer);
  glBufferData(target, static_cast<GLsizeiptr>(data.size() * sizeof(T)),
               data.empty() ? nullptr : data.data(), GL_STATIC_DRAW);
  return buffer;
}

// Decodes a PNG/JPEG with stb_image and uploads it as an sRGB texture with mipmaps.
// Returns 0 (and the reason) when the bytes do not decode.
GLuint upload_texture(const EncodedImage& image, std::string& why) {
  if (image.bytes.empty()) {
    why = "empty image";
    return 0;
  }
  int width = 0;
  int height = 0;
  int channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(image.bytes.data(), static_cast<int>(image.bytes.size()),
                                          &width, &height, &channels, 4);
  if (!pixels) {
    why = stbi_failure_reason() ? stbi_failure_reason() : "decode failed";
    return 0;
  }
  GLuint texture = 0;
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  // glTF's UV origin is the image's first row, which is also where glTexImage2D puts t = 0,
  // so the rows are uploaded as stored (no flip).
  glTexImage2D(GL_TEXTURE_2D, 0, GL_SRGB8_ALPHA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
               pixels);
  stbi_image_free(pixels);
  glGenerateMipmap(GL_TEXTURE_2D);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_REPEAT);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_REPEAT);
  return texture;
}

void release_mesh(GpuMesh& mesh) {
  if (mesh.vertex_array) glDeleteVertexArrays(1, &mesh.vertex_array);
  glDeleteBuffers(6, mesh.buffers);
  mesh = GpuMesh{};
}

Status check_mesh(const SkinnedMesh& mesh, const std::string& where, uint32_t joint_count) {
  const std::size_t n = mesh.positions.size();
  if (mesh.normals.size() != n || mesh.uvs.size() != n || mesh.joints.size() != n ||
      mesh.weights.size() != n) {
    return Error{where + ": vertex attribute arrays differ in length"};
  }
  for (std::size_t v = 0; v < n; ++v) {
    for (int k = 0; k < 4; ++k) {
      if (mesh.joints[v][k] >= joint_count && mesh.weights[v][k] != 0.0f) {
        return Error{where + ": vertex " + std::to_string(v) + " uses joint " +
                     std::to_string(mesh.joints[v][k]) + " of " + std::to_string(joint_count)};
      }
    }
  }
  for (uint32_t index : mesh.indices) {
    if (index >= n) return Error{where + ": index " + std::to_string(index) + " out of range"};
  }
  for (const SubMesh& sub : mesh.submeshes) {
    if (static_cast<uint64_t>(sub.first_index) + sub.index_count > mesh.indices.size()) {
      return Error{where + ": submesh index range out of bounds"};
    }
  }
  return {};
}

}  // namespace

GpuModel::~GpuModel() { release(); }

GpuModel::GpuModel(GpuModel&& other) noexcept
    : rigs_(std::move(other.rigs_)), textures_(std::move(other.textures_)) {
  other.rigs_.clear();
  other.textures_.clear();
}

GpuModel& GpuModel::operator=(GpuModel&& other) noexcept {
  if (this != &other) {
    release();
    rigs_ = std::move(other.rigs_);
    textures_ = std::move(other.textures_);
    other.rigs_.clear();
    other.textures_.clear();
  }
  return *this;
}

void GpuModel::release() {
  for (GpuRig& rig : rigs_)
    for (GpuMesh& mesh : rig.meshes) release_mesh(mesh);
  rigs_.clear();
  if (!textures_.empty()) glDeleteTextures(static_cast<GLsizei>(textures_.size()), textures_.data());
  textures_.clear();
}

Result<GpuModel> GpuModel::upload(const Model& model, uint32_t max_joints,
                                  std::vector<std::string>* warnings) {
  GpuModel out;
  // Textures first, one per image that some submesh uses; 0 where decoding failed.
  out.textures_.assign(model.images.size(), 0u);
  std::vector<bool> image_tried(model.images.size(), false);

  for (std::size_t r = 0; r < model.rigs.size(); ++r) {
    const Rig& rig = model.rigs[r];
    const Skeleton& skeleton = rig.skeleton;
    const std::string rig_name = model.source + ": skin " + std::to_string(r);
    const uint32_t joint_count = static_cast<uint32_t>(skeleton.joint_count());
    if (joint_count > max_joints) {
      return Error{rig_name + ": " + std::to_string(joint_count) +
                   " joints, more than the shader's palette holds (" +
                   std::to_string(max_joints) + ")"};
    }
    // In out.rigs_ from the start, so an error part-way releases what was uploaded.
    GpuRig& gpu_rig = out.rigs_.emplace_back();
    gpu_rig.joint_count = joint_count;

    // Skeleton lines: bind-pose joint origins and nearest joint ancestors.
    std::vector<int32_t> joint_of_node(skeleton.node_count(), -1);
    for (uint32_t j = 0; j < joint_count; ++j) joint_of_node[skeleton.joint_nodes[j]] =
        static_cast<int32_t>(j);
    gpu_rig.joint_bind_origin.resize(joint_count);
    gpu_rig.joint_parent.assign(joint_count, -1);
    Aabb joint_bounds;
    for (uint32_t j = 0; j < joint_count; ++j) {
      glm::mat4 bind(1.0f);
      if (!affine_inverse(skeleton.inverse_bind[j], bind)) {
        return Error{rig_name + ": joint " + std::to_string(j) + ": singular inverse bind matrix"};
      }
      gpu_rig.joint_bind_origin[j] = bind[3];
      joint_bounds.add(glm::vec3(bind[3]));
      int32_t node = skeleton.parents[skeleton.joint_nodes[j]];
      while (node >= 0 && joint_of_node[static_cast<std::size_t>(node)] < 0) {
        node = skeleton.parents[static_cast<std::size_t>(node)];
      }
      if (node >= 0) gpu_rig.joint_parent[j] = joint_of_node[static_cast<std::size_t>(node)];
    }

    for (std::size_t m = 0; m < rig.meshes.size(); ++m) {
      const SkinnedMesh& mesh = rig.meshes[m];
      const std::string where = rig_name + ": mesh '" + mesh.name + "'";
      if (Status status = check_mesh(mesh, where, joint_count); !status) return status.error();
      GpuMesh& gpu = gpu_rig.meshes.emplace_back();
      for (const glm::vec3& p : mesh.positions) gpu_rig.bind_bounds.add(p);

      // An unused influence (weight 0) may name any joint; the shader still reads its matrix
      // (0 * NaN would poison the sum), so such indices are sent as joint 0.
      std::vector<glm::u16vec4> joints = mesh.joints;
      for (std::size_t v = 0; v < joints.size(); ++v)
        for (int k = 0; k < 4; ++k)
          if (joints[v][k] >= joint_count) joints[v][k] = 0;
      // Identical vertices are uploaded once (vertex_welding.h): the same triangles, fewer
      // vertex shader runs.
      WeldedVertices welded = weld_vertices(mesh, joints);
      gpu.vertex_count = static_cast<uint32_t>(welded.positions.size());
      gpu.vertex_of_source = std::move(welded.welded_of_source);

      glGenVertexArrays(1, &gpu.vertex_array);
      glBindVertexArray(gpu.vertex_array);
      gpu.buffers[0] = upload_buffer(GL_ARRAY_BUFFER, welded.positions);
      glEnableVertexAttribArray(0);
      glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
      gpu.buffers[1] = upload_buffer(GL_ARRAY_BUFFER, welded.normals);
      glEnableVertexAttribArray(1);
      glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, nullptr);
      gpu.buffers[2] = upload_buffer(GL_ARRAY_BUFFER, welded.uvs);
      glEnableVertexAttribArray(2);
      glVertexAttribPointer(2, 2, GL_FLOAT, GL_FALSE, 0, nullptr);
      gpu.buffers[3] = upload_buffer(GL_ARRAY_BUFFER, welded.joints);
      glEnableVertexAttribArray(3);
      glVertexAttribIPointer(3, 4, GL_UNSIGNED_SHORT, 0, nullptr);
      gpu.buffers[4] = upload_buffer(GL_ARRAY_BUFFER, welded.weights);
      glEnableVertexAttribArray(4);
      glVertexAttribPointer(4, 4, GL_FLOAT, GL_FALSE, 0, nullptr);
      gpu.buffers[5] = upload_buffer(GL_ELEMENT_ARRAY_BUFFER, welded.indices);
      glBindVertexArray(0);

      for (const SubMesh& sub : mesh.submeshes) {
        GpuSubMesh gpu_sub{sub.first_index, sub.index_count, sub.base_color, 0u, sub.double_sided};
        const int32_t image = sub.base_color_image;
        if (image >= 0 && static_cast<std::size_t>(image) < model.images.size()) {
          const auto i = static_cast<std::size_t>(image);
          if (!image_tried[i]) {
            image_tried[i] = true;
            std::string why;
            out.textures_[i] = upload_texture(model.images[i], why);
            if (!out.textures_[i] && warnings) {
              warnings->push_back(model.source + ": images[" + std::to_string(i) +
                                  "]: not decoded (" + why + "), drawn untextured");
            }
          }
          gpu_sub.texture = out.textures_[i];
        }
        gpu.submeshes.push_back(gpu_sub);
      }
    }
    if (gpu_rig.bind_bounds.empty()) gpu_rig.bind_bounds = joint_bounds;
  }
  return out;
}

}  // namespace posecast::render
