#include "gltf/mesh_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gltf/accessor_reader.h"

namespace posecast::gltf {
namespace {

constexpr uint32_t kAnyInteger =
    kByte | kByteNorm | kUByte | kUByteNorm | kShort | kShortNorm | kUShort | kUShortNorm;

struct Influence {
  uint32_t joint;
  float weight;
};

// What a primitive's material gives a SubMesh, and which TEXCOORD set its texture reads.
struct MaterialInfo {
  glm::vec4 base_color{1.0f, 1.0f, 1.0f, 1.0f};
  int32_t image = -1;
  int texcoord_set = 0;
  bool double_sided = false;  // material.doubleSided; the spec's default (and no material)
};

Result<MaterialInfo> material_info(const ImportContext& ctx, int material, const std::string& ppath,
                                   std::size_t image_count) {
  MaterialInfo info;
  if (material == -1) return info;
  const tinygltf::Model& m = ctx.gltf();
  if (material < 0 || static_cast<std::size_t>(material) >= m.materials.size())
    return ctx.error(ppath + ".material", "material index " + std::to_string(material) + " out of range");
  info.double_sided = m.materials[static_cast<std::size_t>(material)].doubleSided;
  const std::string mpath = at("materials", static_cast<std::size_t>(material)) + ".pbrMetallicRoughness";
  const tinygltf::PbrMetallicRoughness& pbr = m.materials[static_cast<std::size_t>(material)].pbrMetallicRoughness;
  if (pbr.baseColorFactor.size() != 4)
    return ctx.error(mpath + ".baseColorFactor", "expected 4 numbers");
  for (int i = 0; i < 4; ++i) {
    const double f = pbr.baseColorFactor[static_cast<std::size_t>(i)];
    if (!std::isfinite(f)) return ctx.error(mpath + ".baseColorFactor", "holds NaN or infinity");
    info.base_color[i] = static_cast<float>(f);
  }
  const int texture = pbr.baseColorTexture.index;
  if (texture == -1) return info;
  if (texture < 0 || static_cast<std::size_t>(texture) >= m.textures.size())
    return ctx.error(mpath + ".baseColorTexture.index", "texture index " + std::to_string(texture) + " out of range");
  if (pbr.baseColorTexture.texCoord < 0)
    return ctx.error(mpath + ".baseColorTexture.texCoord", "negative");
  info.texcoord_set = pbr.baseColorTexture.texCoord;
  const int source = m.textures[static_cast<std::size_t>(texture)].source;
  if (source == -1) return info;  // no image (an extension may provide one): untextured
  if (source < 0 || static_cast<std::size_t>(source) >= m.images.size())
    return ctx.error(at("textures", static_cast<std::size_t>(texture)) + ".source",
                     "image index " + std::to_string(source) + " out of range");
  info.image = static_cast<std::size_t>(source) < image_count ? source : -1;
  return info;
}

// Reads attribute `name` if the primitive has it; `out` stays empty otherwise.
Status read_attribute(const ImportContext& ctx, const tinygltf::Primitive& prim, const std::string& ppath,
                      const std::string& name, int type, uint32_t storages, std::size_t vertex_count,
                      std::vector<float>& out) {
  auto it = prim.attributes.find(name);
  if (it == prim.attributes.end()) return {};
  const AccessorUse use{ppath + ".attributes." + name, it->second, type, storages};
  Result<std::vector<float>> data = read_floats(ctx, use);
  if (!data) return data.error();
  const std::size_t comps = type == TINYGLTF_TYPE_VEC2 ? 2 : type == TINYGLTF_TYPE_VEC3 ? 3 : 4;
  if (data.value().size() / comps != vertex_count)
    return ctx.error(use.path, std::to_string(data.value().size() / comps) + " elements, but POSITION has " +
                                   std::to_string(vertex_count));
  for (std::size_t i = 0; i < data.value().size(); ++i)
    if (!std::isfinite(data.value()[i]))
      return ctx.error(use.path, "element " + std::to_string(i / comps) + " is not finite");
  out = std::move(data).value();
  return {};
}

// The four largest influences of one vertex, renormalised; root binding when all are zero.
void fold_influences(std::vector<Influence>& all, uint32_t root_joint, glm::u16vec4& joints,
                     glm::vec4& weights) {
  // Merge equal joints (a joint listed in two slots counts once, with the summed weight).
  std::sort(all.begin(), all.end(), [](const Influence& a, const Influence& b) { return a.joint < b.joint; });
  std::size_t merged = 0;
  for (const Influence& inf : all) {
    if (merged > 0 && all[merged - 1].joint == inf.joint) {
      all[merged - 1].weight += inf.weight;
    } else {
      all[merged++] = inf;
    }
  }
  all.resize(merged);
  std::sort(all.begin(), all.end(), [](const Influence& a, const Influence& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.joint < b.joint;
  });
  joints = glm::u16vec4(0);
  weights = glm::vec4(0.0f);
  float sum = 0.0f;
  const std::size_t kept = std::min<std::size_t>(all.size(), 4);
  for (std::size_t i = 0; i < kept; ++i) sum += all[i].weight;
  if (!(sum > 0.0f)) {
    joints[0] = static_cast<uint16_t>(root_joint);
    weights[0] = 1.0f;
    return;
  }
  for (std::size_t i = 0; i < kept; ++i) {
    if (all[i].weight == 0.0f) break;
    joints[static_cast<int>(i)] = static_cast<uint16_t>(all[i].joint);
    weights[static_cast<int>(i)] = all[i].weight / sum;
  }
}

Status read_influences(const ImportContext& ctx, const tinygltf::Primitive& prim, const std::string& ppath,
                       std::size_t vertex_count, std::size_t joint_count, uint32_t root_joint,
                       SkinnedMesh& mesh) {
  std::vector<std::vector<uint32_t>> joint_sets;
  std::vector<std::vector<float>> weight_sets;
  for (int set = 0;; ++set) {
    const std::string jname = "JOINTS_" + std::to_string(set);
    const std::string wname = "WEIGHTS_" + std::to_string(set);
    auto jit = prim.attributes.find(jname);
    auto wit = prim.attributes.find(wname);
    if (jit == prim.attributes.end() && wit == prim.attributes.end()) break;
    if (jit == prim.attributes.end())
      return ctx.error(ppath + ".attributes." + wname, "present without " + jname);
    if (wit == prim.attributes.end())
      return ctx.error(ppath + ".attributes." + jname, "present without " + wname);
    const AccessorUse juse{ppath + ".attributes." + jname, jit->second, TINYGLTF_TYPE_VEC4, kUByte | kUShort};
    Result<std::vector<uint32_t>> j = read_uints(ctx, juse);
    if (!j) return j.error();
    if (j.value().size() / 4 != vertex_count)
      return ctx.error(juse.path, std::to_string(j.value().size() / 4) + " elements, but POSITION has " +
                                      std::to_string(vertex_count));
    std::vector<float> w;
    if (Status s = read_attribute(ctx, prim, ppath, wname, TINYGLTF_TYPE_VEC4,
                                  kFloat | kUByteNorm | kUShortNorm, vertex_count, w);
        !s)
      return s;
    for (std::size_t i = 0; i < j.value().size(); ++i) {
      if (j.value()[i] >= joint_count)
        return ctx.error(juse.path, "vertex " + std::to_string(i / 4) + " uses joint " +
                                        std::to_string(j.value()[i]) + ", the skin has " +
                                        std::to_string(joint_count) + " joints");
      if (w[i] < 0.0f)
        return ctx.error(ppath + ".attributes." + wname,
                         "vertex " + std::to_string(i / 4) + " has a negative weight");
    }
    joint_sets.push_back(std::move(j).value());
    weight_sets.push_back(std::move(w));
  }
  std::vector<Influence> all;
  all.reserve(joint_sets.size() * 4);
  for (std::size_t v = 0; v < vertex_count; ++v) {
    all.clear();
    for (std::size_t s = 0; s < joint_sets.size(); ++s)
      for (std::size_t c = 0; c < 4; ++c)
        if (weight_sets[s][v * 4 + c] > 0.0f)
          all.push_back({joint_sets[s][v * 4 + c], weight_sets[s][v * 4 + c]});
    glm::u16vec4 joints;
    glm::vec4 weights;
    fold_influences(all, root_joint, joints, weights);
    mesh.joints.push_back(joints);
    mesh.weights.push_back(weights);
  }
  return {};
}

Status add_primitive(const ImportContext& ctx, std::size_t mesh_index, std::size_t p, std::size_t joint_count,
                     uint32_t root_joint, std::size_t image_count, SkinnedMesh& mesh) {
  const tinygltf::Primitive& prim = ctx.gltf().meshes[mesh_index].primitives[p];
  const std::string ppath = at("meshes", mesh_index) + "." + at("primitives", p);
  if (prim.mode != TINYGLTF_MODE_TRIANGLES)
    return ctx.error(ppath + ".mode", "only TRIANGLES (4) is supported, not " + std::to_string(prim.mode));
  auto pos = prim.attributes.find("POSITION");
  if (pos == prim.attributes.end()) return ctx.error(ppath + ".attributes", "no POSITION attribute");

  const uint32_t q = ctx.mesh_quantization ? kAnyInteger : 0u;
  const AccessorUse puse{ppath + ".attributes.POSITION", pos->second, TINYGLTF_TYPE_VEC3, kFloat | q};
  Result<std::size_t> count = accessor_count(ctx, puse);
  if (!count) return count.error();
  const std::size_t n = count.value();
  std::vector<float> positions, normals, uvs;
  if (Status s = read_attribute(ctx, prim, ppath, "POSITION", TINYGLTF_TYPE_VEC3, kFloat | q, n, positions); !s)
    return s;
  const uint32_t qn = ctx.mesh_quantization ? (kByteNorm | kShortNorm) : 0u;
  if (Status s = read_attribute(ctx, prim, ppath, "NORMAL", TINYGLTF_TYPE_VEC3, kFloat | qn, n, normals); !s)
    return s;
  Result<MaterialInfo> material = material_info(ctx, prim.material, ppath, image_count);
  if (!material) return material.error();
  const std::string uv_name = "TEXCOORD_" + std::to_string(material.value().texcoord_set);
  if (Status s = read_attribute(ctx, prim, ppath, uv_name, TINYGLTF_TYPE_VEC2,
                                kFloat | kUByteNorm | kUShortNorm | q, n, uvs);
      !s)
    return s;

  const std::size_t base = mesh.positions.size();
  if (n > std::numeric_limits<uint32_t>::max() - base)
    return ctx.error(ppath, "more than 2^32 - 1 vertices in one mesh");
  for (std::size_t v = 0; v < n; ++v) {
    mesh.positions.emplace_back(positions[v * 3], positions[v * 3 + 1], positions[v * 3 + 2]);
    mesh.normals.push_back(normals.empty() ? glm::vec3(0.0f)
                                           : glm::vec3(normals[v * 3], normals[v * 3 + 1], normals[v * 3 + 2]));
    mesh.uvs.push_back(uvs.empty() ? glm::vec2(0.0f) : glm::vec2(uvs[v * 2], uvs[v * 2 + 1]));
  }
  if (Status s = read_influences(ctx, prim, ppath, n, joint_count, root_joint, mesh); !s) return s;

  SubMesh sub;
  sub.first_index = static_cast<uint32_t>(mesh.indices.size());
  sub.base_color = material.value().base_color;
  sub.base_color_image = material.value().image;
  sub.double_sided = material.value().double_sided;
  if (prim.indices == -1) {
    if (n % 3 != 0)
      return ctx.error(ppath + ".attributes.POSITION", std::to_string(n) +
                                                           " vertices without indices, not a multiple of 3");
    for (std::size_t v = 0; v < n; ++v) mesh.indices.push_back(static_cast<uint32_t>(base + v));
    sub.index_count = static_cast<uint32_t>(n);
  } else {
    const AccessorUse iuse{ppath + ".indices", prim.indices, TINYGLTF_TYPE_SCALAR, kUByte | kUShort | kUInt};
    Result<std::vector<uint32_t>> indices = read_uints(ctx, iuse);
    if (!indices) return indices.error();
    const std::vector<uint32_t>& idx = indices.value();
    if (idx.size() % 3 != 0)
      return ctx.error(iuse.path, std::to_string(idx.size()) + " indices, not a multiple of 3");
    if (idx.size() > std::numeric_limits<uint32_t>::max() - mesh.indices.size())
      return ctx.error(iuse.path, "more than 2^32 - 1 indices in one mesh");
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (idx[k] >= n)
        return ctx.error(iuse.path, "index " + std::to_string(k) + " is " + std::to_string(idx[k]) +
                                        ", out of range for " + std::to_string(n) + " vertices");
      mesh.indices.push_back(static_cast<uint32_t>(base + idx[k]));
    }
    sub.index_count = static_cast<uint32_t>(idx.size());
  }
  mesh.submeshes.push_back(sub);
  return {};
}

}  // namespace

Result<std::vector<SkinnedMesh>> build_skin_meshes(const ImportContext& ctx, const NodeGraph& graph,
                                                   std::size_t skin_index, std::size_t image_count) {
  const tinygltf::Model& m = ctx.gltf();
  const tinygltf::Skin& skin = m.skins[skin_index];
  std::vector<bool> is_joint(m.nodes.size(), false);
  for (int j : skin.joints) is_joint[static_cast<std::size_t>(j)] = true;
  // The skin's root joint: the first joint in skin order whose parent is not a joint.
  uint32_t root_joint = 0;
  for (std::size_t j = 0; j < skin.joints.size(); ++j) {
    const int parent = graph.parent[static_cast<std::size_t>(skin.joints[j])];
    if (parent == -1 || !is_joint[static_cast<std::size_t>(parent)]) {
      root_joint = static_cast<uint32_t>(j);
      break;
    }
  }
  std::vector<SkinnedMesh> meshes;
  std::vector<bool> built(m.meshes.size(), false);
  for (const tinygltf::Node& node : m.nodes) {
    if (node.skin != static_cast<int>(skin_index) || node.mesh < 0) continue;
    const auto mesh_index = static_cast<std::size_t>(node.mesh);
    if (built[mesh_index]) continue;
    built[mesh_index] = true;
    SkinnedMesh mesh;
    mesh.name = m.meshes[mesh_index].name;
    mesh.source_mesh = static_cast<int32_t>(mesh_index);
    for (std::size_t p = 0; p < m.meshes[mesh_index].primitives.size(); ++p)
      if (Status s = add_primitive(ctx, mesh_index, p, skin.joints.size(), root_joint, image_count, mesh); !s)
        return s.error();
    meshes.push_back(std::move(mesh));
  }
  return meshes;
}

}  // namespace posecast::gltf
