#include "rig_document.h"

#include <algorithm>
#include <array>
#include <string>

#include "glb_writer.h"
#include "rig_texture.h"

namespace posecast::rig::detail {

namespace {

template <class T, std::size_t N>
std::vector<T> flatten(const std::vector<std::array<T, N>>& items) {
  std::vector<T> out;
  out.reserve(items.size() * N);
  for (const auto& item : items) out.insert(out.end(), item.begin(), item.end());
  return out;
}

Json float_array(std::span<const float> values) {
  Json a = Json::array();
  for (float v : values) a.push_back(v);
  return a;
}

// POSITION accessors must carry min and max.
Json position_bounds(const std::vector<std::array<float, 3>>& positions) {
  std::array<float, 3> lo = positions.front(), hi = positions.front();
  for (const auto& p : positions) {
    for (std::size_t i = 0; i < 3; ++i) {
      lo[i] = std::min(lo[i], p[i]);
      hi[i] = std::max(hi[i], p[i]);
    }
  }
  return {{"min", float_array(lo)}, {"max", float_array(hi)}};
}

const char* interpolation_name(ClipInterpolation i) {
  switch (i) {
    case ClipInterpolation::kStep: return "STEP";
    case ClipInterpolation::kCubicSpline: return "CUBICSPLINE";
    case ClipInterpolation::kLinear: break;
  }
  return "LINEAR";
}

// The skinned mesh: one primitive, one material. Returns the glTF "meshes" array.
Json write_mesh(const RigMesh& mesh, std::size_t joint_count, GlbBuilder& glb) {
  const std::size_t vertices = mesh.positions.size();
  Json attributes;
  attributes["POSITION"] = glb.add_accessor(glb.add_view(flatten(mesh.positions), kArrayBuffer), 0,
                                            kFloat, vertices, "VEC3", position_bounds(mesh.positions));
  attributes["NORMAL"] =
      glb.add_accessor(glb.add_view(flatten(mesh.normals), kArrayBuffer), 0, kFloat, vertices, "VEC3");
  attributes["TEXCOORD_0"] =
      glb.add_accessor(glb.add_view(flatten(mesh.uvs), kArrayBuffer), 0, kFloat, vertices, "VEC2");
  // Joint indices as bytes while they fit (up to 256 joints), 16-bit beyond: both are valid
  // JOINTS_0 types, and the byte form keeps the common rigs small.
  glb.begin_view();
  int joint_type = kUnsignedShort;
  if (joint_count <= 256u) {
    std::vector<uint8_t> narrow;
    for (const auto& influence : mesh.joints)
      for (uint16_t j : influence) narrow.push_back(static_cast<uint8_t>(j));
    glb.append(std::span<const uint8_t>(narrow));
    joint_type = kUnsignedByte;
  } else {
    glb.append(std::span<const uint16_t>(flatten(mesh.joints)));
  }
  attributes["JOINTS_0"] = glb.add_accessor(glb.end_view(kArrayBuffer), 0, joint_type, vertices, "VEC4");
  attributes["WEIGHTS_0"] =
      glb.add_accessor(glb.add_view(flatten(mesh.weights), kArrayBuffer), 0, kFloat, vertices, "VEC4");

  // 16-bit indices while every vertex fits (up to a few hundred joints), 32-bit beyond.
  glb.begin_view();
  int index_type = kUnsignedInt;
  if (vertices <= 65535u) {
    std::vector<uint16_t> narrow;
    for (uint32_t index : mesh.indices) narrow.push_back(static_cast<uint16_t>(index));
    glb.append(std::span<const uint16_t>(narrow));
    index_type = kUnsignedShort;
  } else {
    glb.append(std::span<const uint32_t>(mesh.indices));
  }
  const int indices =
      glb.add_accessor(glb.end_view(kElementArrayBuffer), 0, index_type, mesh.indices.size(), "SCALAR");

  Json primitive = {{"attributes", attributes}, {"indices", indices}, {"material", 0}, {"mode", 4}};
  return Json::array({{{"name", "creature_body"}, {"primitives", Json::array({primitive})}}});
}

// Rest world translation of every joint, accumulated in float from the root exactly as a
// parent * local product with identity rotations does (t_world = t_parent_world + t_local).
std::vector<std::array<float, 3>> rest_world_translations(const RigLayout& layout) {
  std::vector<std::array<float, 3>> world(layout.joints.size());
  for (std::size_t j = 0; j < layout.joints.size(); ++j) {
    const RigJoint& joint = layout.joints[j];
    world[j] = joint.translation;
    if (joint.parent >= 0) {
      const auto& parent = world[static_cast<std::size_t>(joint.parent)];
      for (std::size_t i = 0; i < 3; ++i) world[j][i] = joint.translation[i] + parent[i];
    }
  }
  return world;
}

int write_inverse_binds(const RigLayout& layout, GlbBuilder& glb) {
  std::vector<float> matrices;
  for (const auto& t : rest_world_translations(layout)) {
    // Column-major translate(-t): rest rotations are identity and scales one.
    matrices.insert(matrices.end(), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -t[0], -t[1], -t[2], 1});
  }
  return glb.add_accessor(glb.add_view(matrices), 0, kFloat, layout.joints.size(), "MAT4");
}

Json write_animations(const std::vector<RigClip>& clips, GlbBuilder& glb) {
  Json animations = Json::array();
  for (const RigClip& clip : clips) {
    const int input = glb.add_accessor(
        glb.add_view(clip.times), 0, kFloat, clip.times.size(), "SCALAR",
        {{"min", Json::array({clip.times.front()})}, {"max", Json::array({clip.times.back()})}});
    // All outputs of a clip share one bufferView.
    glb.begin_view();
    std::vector<std::size_t> offsets;
    for (const ClipTrack& track : clip.tracks) offsets.push_back(glb.append(std::span<const float>(track.values)));
    const int view = glb.end_view();
    Json samplers = Json::array(), channels = Json::array();
    for (std::size_t t = 0; t < clip.tracks.size(); ++t) {
      const ClipTrack& track = clip.tracks[t];
      const bool rotation = track.path == ClipPath::kRotation;
      const std::size_t components = rotation ? 4 : 3;
      const int output = glb.add_accessor(view, offsets[t], kFloat, track.values.size() / components,
                                          rotation ? "VEC4" : "VEC3");
      samplers.push_back({{"input", input}, {"output", output}, {"interpolation", interpolation_name(clip.interpolation)}});
      channels.push_back({{"sampler", t},
                          {"target", {{"node", track.joint + 1}, {"path", rotation ? "rotation" : "translation"}}}});
    }
    Json animation = {{"name", clip.name}, {"samplers", samplers}, {"channels", channels}};
    if (!clip.markers.empty()) {
      Json events = Json::array();
      for (const RigMarker& marker : clip.markers)
        events.push_back({{"name", marker.name}, {"time", marker.time_seconds}});
      animation["extras"] = {{"posecast_events", events}};
    }
    animations.push_back(std::move(animation));
  }
  return animations;
}

Json write_nodes(const RigLayout& layout) {
  const std::size_t joint_count = layout.joints.size();
  const int mesh_node = static_cast<int>(joint_count) + 1;
  Json nodes = Json::array();
  nodes.push_back({{"name", "rig_root"}, {"children", Json::array({1, mesh_node})}});
  for (std::size_t j = 0; j < joint_count; ++j) {
    const RigJoint& joint = layout.joints[j];
    Json node = {{"name", joint.name}, {"translation", float_array(joint.translation)}};
    Json children = Json::array();
    for (std::size_t c = j + 1; c < joint_count; ++c)
      if (layout.joints[c].parent == static_cast<int>(j)) children.push_back(c + 1);
    if (!children.empty()) node["children"] = std::move(children);
    nodes.push_back(std::move(node));
  }
  nodes.push_back({{"name", "creature_body"}, {"mesh", 0}, {"skin", 0}});
  return nodes;
}

}  // namespace

std::vector<uint8_t> write_rig_glb(const RigLayout& layout, const RigMesh& mesh,
                                   const std::vector<RigClip>& clips) {
  GlbBuilder glb;
  Json doc;
  doc["asset"] = {{"version", "2.0"}, {"generator", "posecast rig generator"}};
  doc["scene"] = 0;
  doc["scenes"] = Json::array({{{"name", "creature"}, {"nodes", Json::array({0})}}});
  doc["nodes"] = write_nodes(layout);
  doc["meshes"] = write_mesh(mesh, layout.joints.size(), glb);

  Json joints = Json::array();
  for (std::size_t j = 0; j < layout.joints.size(); ++j) joints.push_back(j + 1);
  doc["skins"] = Json::array(
      {{{"name", "creature_skin"}, {"inverseBindMatrices", write_inverse_binds(layout, glb)}, {"skeleton", 1}, {"joints", joints}}});
  doc["animations"] = write_animations(clips, glb);

  const std::vector<uint8_t> png = make_rig_texture_png();
  glb.begin_view();
  glb.append(std::span<const uint8_t>(png));
  doc["images"] = Json::array({{{"name", "creature_scales"}, {"mimeType", "image/png"}, {"bufferView", glb.end_view()}}});
  doc["samplers"] = Json::array({{{"magFilter", 9729}, {"minFilter", 9987}, {"wrapS", 10497}, {"wrapT", 10497}}});
  doc["textures"] = Json::array({{{"source", 0}, {"sampler", 0}}});
  doc["materials"] = Json::array({{{"name", "creature_skin"},
                                   {"pbrMetallicRoughness",
                                    {{"baseColorFactor", Json::array({0.8f, 0.55f, 0.35f, 1.0f})},
                                     {"baseColorTexture", {{"index", 0}}},
                                     {"metallicFactor", 0.0f},
                                     {"roughnessFactor", 0.7f}}}}});

  doc["bufferViews"] = glb.buffer_views();
  doc["accessors"] = glb.accessors();
  doc["buffers"] = Json::array({{{"byteLength", glb.bin().size() + (4u - glb.bin().size() % 4u) % 4u}}});
  return pack_glb(doc.dump(), glb.bin());
}

}  // namespace posecast::rig::detail
