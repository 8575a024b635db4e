// posecast info MODEL: skins, joint tree, clips, meshes.

#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "posecast/rig/model_source.h"

namespace posecast::cli {

namespace {
int fail(const std::string& why, int code) {
  std::fprintf(stderr, "posecast info: %s\n", why.c_str());
  return code;
}

std::string node_label(const Skeleton& s, std::size_t node) {
  const std::string& name = s.names[node];
  return (name.empty() ? std::string("(unnamed)") : name) + " [node " +
         std::to_string(s.source_nodes[node]) + "]";
}

void print_tree(const Skeleton& s) {
  // Depth of each node from its parent's; nodes are parents-first, so one forward pass works.
  std::vector<int> depth(s.node_count(), 0);
  std::vector<int> joint_of_node(s.node_count(), -1);
  for (std::size_t j = 0; j < s.joint_count(); ++j) joint_of_node[s.joint_nodes[j]] = static_cast<int>(j);
  // Print in depth-first order so the indentation reads as a tree.
  std::vector<std::vector<std::size_t>> children(s.node_count());
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < s.node_count(); ++i) {
    if (s.parents[i] == kNoParent) roots.push_back(i);
    else children[static_cast<std::size_t>(s.parents[i])].push_back(i);
  }
  std::vector<std::pair<std::size_t, int>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.emplace_back(*it, 0);
  while (!stack.empty()) {
    auto [node, d] = stack.back();
    stack.pop_back();
    std::string role = joint_of_node[node] >= 0 ? "joint " + std::to_string(joint_of_node[node])
                       : static_cast<int32_t>(node) == s.mesh_node ? "mesh node"
                                                                    : "ancestor";
    std::printf("    %*s%s  (%s)\n", 2 * d, "", node_label(s, node).c_str(), role.c_str());
    for (auto it = children[node].rbegin(); it != children[node].rend(); ++it) stack.emplace_back(*it, d + 1);
  }
}

void print_clips(const Rig& rig) {
  std::printf("  clips: %zu\n", rig.clips.size());
  for (std::size_t c = 0; c < rig.clips.size(); ++c) {
    const Clip& clip = rig.clips[c];
    int by_interp[3] = {0, 0, 0};
    int by_target[3] = {0, 0, 0};
    std::size_t keys = 0;
    for (const Track& t : clip.tracks) {
      ++by_interp[static_cast<int>(t.interpolation)];
      ++by_target[static_cast<int>(t.target)];
      keys += t.key_count;
    }
    std::printf("    [%zu] %-20s %8.4f s  %3zu channels (T %d, R %d, S %d; STEP %d, LINEAR %d, CUBICSPLINE %d), %zu keys\n",
                c, clip.name.c_str(), static_cast<double>(clip.duration_seconds), clip.tracks.size(),
                by_target[0], by_target[1], by_target[2], by_interp[0], by_interp[1], by_interp[2], keys);
  }
}

void print_meshes(const Rig& rig) {
  for (const SkinnedMesh& m : rig.meshes) {
    std::printf("  mesh %s [mesh %d]: %zu vertices, %zu triangles, %zu primitives\n",
                m.name.empty() ? "(unnamed)" : m.name.c_str(), m.source_mesh, m.positions.size(),
                m.indices.size() / 3, m.submeshes.size());
  }
}


int info(const std::string& source) {
  Result<Model> model = rig::load_model_source(source);
  if (!model) return fail(model.error().message, kExitFailure);

  std::printf("model %s\n  content hash %016llx\n  skins: %s\n  images: %zu\n", model->source.c_str(),
              static_cast<unsigned long long>(model->content_hash),
              model->has_skins ? std::to_string(model->rigs.size()).c_str() : "none (one rig over every node)",
              model->images.size());
  for (std::size_t r = 0; r < model->rigs.size(); ++r) {
    const Rig& rig = model->rigs[r];
    const Skeleton& s = rig.skeleton;
    std::printf("rig %zu: skin %d %s: %zu joints, %zu nodes evaluated\n", r, s.source_skin,
                s.skin_name.empty() ? "(unnamed)" : s.skin_name.c_str(), s.joint_count(), s.node_count());
    print_tree(s);
    print_clips(rig);
    print_meshes(rig);
  }
  return kExitOk;
}

}  // namespace

Command add_info_command(CommandLine& command_line) {
  CLI::App* app = command_line.add_command(
      "info", "print a model's skins, joint tree, clips and meshes",
      "Prints the skins with their joint trees, the clips (duration, channels by interpolation\n"
      "and target) and mesh statistics.");
  auto source = std::make_shared<std::string>();
  app->add_option("MODEL", *source, "a .gltf/.glb path or gen-rig:N")->required();
  return {app, [source] { return info(*source); }};
}

}  // namespace posecast::cli
