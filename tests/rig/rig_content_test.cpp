// The generated rig's scene: exactly N joints, the node hierarchy, the material.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "glb_test_reader.h"

namespace posecast::rig {
namespace {

using test::rig_file;

std::vector<int> skin_joints(const test::GlbFile& file) {
  return file.json.at("skins").at(0).at("joints").get<std::vector<int>>();
}

TEST(RigContent, SkinHasExactlyTheRequestedJointCountForEveryN) {
  std::vector<uint32_t> counts;
  for (uint32_t n = 2; n <= 40; ++n) counts.push_back(n);
  for (uint32_t n : {63u, 64u, 100u, 128u, 255u, 256u, 257u, 300u, 511u, 512u}) counts.push_back(n);
  for (uint32_t n : counts) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    ASSERT_EQ(file.json.at("skins").size(), 1u);
    const std::vector<int> joints = skin_joints(file);
    EXPECT_EQ(joints.size(), n);
    EXPECT_EQ(std::set<int>(joints.begin(), joints.end()).size(), n) << "joint nodes repeat";
    std::set<std::string> names;
    for (int j : joints) names.insert(file.json.at("nodes").at(static_cast<std::size_t>(j)).at("name").get<std::string>());
    EXPECT_EQ(names.size(), n) << "joint names repeat";
    // Inverse bind matrices: one per joint.
    const int ibm = file.json.at("skins")[0].at("inverseBindMatrices").get<int>();
    EXPECT_EQ(file.json.at("accessors").at(static_cast<std::size_t>(ibm)).at("count").get<uint32_t>(), n);
    EXPECT_EQ(file.json.at("accessors").at(static_cast<std::size_t>(ibm)).at("type"), "MAT4");
  }
}

TEST(RigContent, MeshNodeIsASiblingOfTheRootJointUnderTheSceneRoot) {
  for (uint32_t n : {2u, 24u, 128u}) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    const auto& json = file.json;
    ASSERT_EQ(json.at("scenes").size(), 1u);
    const auto scene_nodes = json.at("scenes")[0].at("nodes").get<std::vector<int>>();
    ASSERT_EQ(scene_nodes.size(), 1u);
    const int scene_root = scene_nodes[0];
    const auto& root = json.at("nodes").at(static_cast<std::size_t>(scene_root));
    EXPECT_FALSE(root.contains("translation") || root.contains("rotation") || root.contains("scale") ||
                 root.contains("matrix"));

    const std::vector<int> parents = test::node_parents(file);
    const int skeleton = json.at("skins")[0].at("skeleton").get<int>();
    EXPECT_EQ(parents.at(static_cast<std::size_t>(skeleton)), scene_root) << "skeleton root hangs from the scene root";
    // Every joint descends from the skeleton root.
    for (int j : skin_joints(file)) {
      int node = j;
      while (node != skeleton && node >= 0) node = parents.at(static_cast<std::size_t>(node));
      EXPECT_EQ(node, skeleton) << "joint node " << j;
    }
    // Exactly one mesh node, skinned, untransformed, beside the root joint.
    int mesh_nodes = 0;
    for (std::size_t i = 0; i < json.at("nodes").size(); ++i) {
      const auto& node = json.at("nodes")[i];
      if (!node.contains("mesh")) continue;
      ++mesh_nodes;
      EXPECT_EQ(node.at("skin"), 0);
      EXPECT_EQ(parents.at(i), scene_root);
      EXPECT_FALSE(node.contains("translation") || node.contains("rotation") || node.contains("matrix"));
    }
    EXPECT_EQ(mesh_nodes, 1);
  }
}

TEST(RigContent, JointsAreListedParentsFirst) {
  for (uint32_t n : {2u, 7u, 15u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    const test::GlbFile& file = rig_file(n);
    const std::vector<int> parents = test::node_parents(file);
    for (int j : skin_joints(file)) EXPECT_LT(parents.at(static_cast<std::size_t>(j)), j);
  }
}

TEST(RigContent, TwoJointRigIsRootAndBody) {
  const test::GlbFile& file = rig_file(2);
  const std::vector<int> joints = skin_joints(file);
  ASSERT_EQ(joints.size(), 2u);
  EXPECT_EQ(file.json.at("nodes").at(static_cast<std::size_t>(joints[0])).at("name"), "hips");
  EXPECT_EQ(file.json.at("nodes").at(static_cast<std::size_t>(joints[1])).at("name"), "spine");
}

TEST(RigContent, FullRigsKeepTheHumanoidCoreAndGrowChains) {
  const char* core[] = {"hips", "spine", "chest", "upper_chest", "neck", "head", "shoulder_l", "upper_arm_l",
                        "forearm_l", "hand_l", "shoulder_r", "upper_arm_r", "forearm_r", "hand_r", "thigh_l",
                        "shin_l", "foot_l", "toe_l", "thigh_r", "shin_r", "foot_r", "toe_r"};
  for (uint32_t n : {22u, 24u, 128u, 512u}) {
    SCOPED_TRACE(n);
    for (const char* name : core) EXPECT_GE(test::find_node(rig_file(n), name), 0) << name;
  }
  EXPECT_GE(test::find_node(rig_file(24), "tail_00"), 0);
  for (const char* chain : {"tail_00", "antenna_l_00", "antenna_r_00", "finger_l0_00", "finger_r3_00"})
    EXPECT_GE(test::find_node(rig_file(128), chain), 0) << chain;
}

TEST(RigContent, MaterialHasABaseColourAndAnEmbeddedPngTexture) {
  const test::GlbFile& file = rig_file(24);
  const auto& json = file.json;
  ASSERT_EQ(json.at("materials").size(), 1u);
  const auto& pbr = json.at("materials")[0].at("pbrMetallicRoughness");
  const auto factor = pbr.at("baseColorFactor").get<std::vector<float>>();
  ASSERT_EQ(factor.size(), 4u);
  EXPECT_EQ(factor[3], 1.0f);
  EXPECT_LT(factor[2], factor[0]) << "a warm, not white, base colour";
  const int texture = pbr.at("baseColorTexture").at("index").get<int>();
  const int image = json.at("textures").at(static_cast<std::size_t>(texture)).at("source").get<int>();
  const auto& img = json.at("images").at(static_cast<std::size_t>(image));
  EXPECT_EQ(img.at("mimeType"), "image/png");
  const auto& view = json.at("bufferViews").at(img.at("bufferView").get<std::size_t>());
  const std::size_t offset = test::size_or(view, "byteOffset", 0);
  ASSERT_GT(view.at("byteLength").get<std::size_t>(), 8u);
  const uint8_t signature[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(file.bin.at(offset + i), signature[i]);
  // Every primitive uses that material.
  for (const auto& primitive : json.at("meshes")[0].at("primitives")) EXPECT_EQ(primitive.at("material"), 0);
}

}  // namespace
}  // namespace posecast::rig
