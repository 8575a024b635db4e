// Skeletons from glTF skins and node hierarchies: membership, order, rest TRS, inverse binds,
// and every hierarchy/skin error.

#include <glm/gtc/matrix_transform.hpp>

#include "import_test_util.h"

namespace posecast::testing {
namespace {

using ::testing::HasSubstr;

TEST(ImportSkeleton, SkinnedTriangleHasJointsMeshNodeAndIdentityInverseBinds) {
  SkinnedTriangle t;
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rigs.size(), 1u);
  EXPECT_TRUE(r->has_skins);
  const Skeleton& s = r->rigs[0].skeleton;
  EXPECT_EQ(s.node_count(), 3u);
  ASSERT_EQ(s.joint_count(), 2u);
  EXPECT_EQ(s.names[s.joint_nodes[0]], "root");
  EXPECT_EQ(s.names[s.joint_nodes[1]], "tip");
  ASSERT_GE(s.mesh_node, 0);
  EXPECT_EQ(s.names[static_cast<std::size_t>(s.mesh_node)], "body");
  EXPECT_EQ(s.source_skin, 0);
  for (const glm::mat4& m : s.inverse_bind) EXPECT_EQ(m, glm::mat4(1.0f));
  EXPECT_EQ(parent_name(s, node_named(s, "tip")), "root");
  EXPECT_EQ(s.rest[static_cast<std::size_t>(node_named(s, "tip"))].translation, glm::vec3(0, 1, 0));
  EXPECT_TRUE(s.validate().ok());
}

TEST(ImportSkeleton, InverseBindMatricesComeFromTheAccessor) {
  SkinnedTriangle t(/*with_inverse_binds=*/true);
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Skeleton& s = r->rigs[0].skeleton;
  EXPECT_EQ(s.inverse_bind[0], glm::translate(glm::mat4(1.0f), glm::vec3(0, -1, 0)));
  EXPECT_EQ(s.inverse_bind[1], glm::translate(glm::mat4(1.0f), glm::vec3(0, -2, 0)));
}

TEST(ImportSkeleton, InverseBindLastRowWithinToleranceIsMadeExact) {
  SkinnedTriangle t;
  const int ibm = t.b.add_floats({1, 0, 0, 0.00005f, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1.00005f,
                                  1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
                                 "MAT4");
  t.b.json()["skins"][0]["inverseBindMatrices"] = ibm;
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const glm::mat4& m = r->rigs[0].skeleton.inverse_bind[0];
  EXPECT_EQ(m[0].w, 0.0f);
  EXPECT_EQ(m[3].w, 1.0f);
}

// The same hierarchy written parents-first and children-first gives the same structure.
TEST(ImportSkeleton, NodeOrderInTheFileDoesNotChangeTheStructure) {
  auto build = [](bool children_first) {
    GltfBuilder b;
    // hips -> spine -> head, hips -> leg; body (mesh) separate.
    std::vector<nlohmann::json> nodes = {
        {{"name", "hips"}, {"translation", {0.0, 1.0, 0.0}}},
        {{"name", "spine"}, {"translation", {0.0, 0.5, 0.0}}},
        {{"name", "head"}, {"translation", {0.0, 0.4, 0.0}}},
        {{"name", "leg"}, {"translation", {0.2, -0.5, 0.0}}},
    };
    // Indices of hips, spine, head, leg in the file.
    std::vector<int> at = children_first ? std::vector<int>{3, 1, 0, 2} : std::vector<int>{0, 1, 2, 3};
    std::vector<nlohmann::json> file(4);
    for (int i = 0; i < 4; ++i) file[static_cast<std::size_t>(at[static_cast<std::size_t>(i)])] = nodes[static_cast<std::size_t>(i)];
    file[static_cast<std::size_t>(at[0])]["children"] = {at[1], at[3]};
    file[static_cast<std::size_t>(at[1])]["children"] = {at[2]};
    for (auto& n : file) b.add_node(n);
    b.add_skin({at[0], at[1], at[2], at[3]});
    const int pos = b.add_floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
    b.add_mesh({{"primitives", {{{"attributes", {{"POSITION", pos}}}}}}});
    b.add_node({{"name", "body"}, {"mesh", 0}, {"skin", 0}});
    return b;
  };
  Result<Model> a = import_doc(build(false));
  Result<Model> c = import_doc(build(true));
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Skeleton& sa = a->rigs[0].skeleton;
  const Skeleton& sc = c->rigs[0].skeleton;
  ASSERT_EQ(sa.node_count(), sc.node_count());
  for (std::size_t i = 0; i < sc.node_count(); ++i) EXPECT_LT(sc.parents[i], static_cast<int>(i));
  for (const char* name : {"hips", "spine", "head", "leg", "body"}) {
    const int ia = node_named(sa, name), ic = node_named(sc, name);
    ASSERT_GE(ia, 0);
    ASSERT_GE(ic, 0);
    EXPECT_EQ(parent_name(sa, ia), parent_name(sc, ic)) << name;
    EXPECT_EQ(sa.rest[static_cast<std::size_t>(ia)].translation, sc.rest[static_cast<std::size_t>(ic)].translation);
  }
  // Joint j is the same named node in both (skin order is kept).
  for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(sa.names[sa.joint_nodes[j]], sc.names[sc.joint_nodes[j]]);
}

TEST(ImportSkeleton, MatrixGivenJointsAreDecomposedIntoRestTrs) {
  SkinnedTriangle t;
  const glm::mat4 m = glm::translate(glm::mat4(1.0f), glm::vec3(1, 2, 3)) *
                      glm::mat4_cast(glm::quat(0.8f, 0.0f, 0.6f, 0.0f)) *
                      glm::scale(glm::mat4(1.0f), glm::vec3(2, 2, 2));
  std::vector<float> flat;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) flat.push_back(m[c][r]);
  nlohmann::json& tip = t.b.json()["nodes"][1];
  tip.erase("translation");
  tip["matrix"] = flat;
  Result<Model> r = import_doc(t.b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Skeleton& s = r->rigs[0].skeleton;
  const Transform& rest = s.rest[static_cast<std::size_t>(node_named(s, "tip"))];
  EXPECT_NEAR(rest.translation.x, 1.0f, 1e-6f);
  EXPECT_NEAR(rest.translation.z, 3.0f, 1e-6f);
  EXPECT_NEAR(rest.scale.y, 2.0f, 1e-5f);
  EXPECT_NEAR(std::fabs(rest.rotation.y), 0.6f, 1e-5f);
  const glm::mat4 back = to_matrix(rest);
  for (int c = 0; c < 4; ++c)
    for (int r2 = 0; r2 < 4; ++r2) EXPECT_NEAR(back[c][r2], m[c][r2], 1e-5f);
}

// Non-joint ancestors and the mesh node (with its own ancestors) belong to the skeleton.
TEST(ImportSkeleton, ParentedSkinKeepsNonJointAncestorsAndTheMeshNodeChain) {
  GltfBuilder b;
  b.add_node({{"name", "scene_root"}, {"scale", {0.01, 0.01, 0.01}}, {"children", {1, 4}}});  // 0
  b.add_node({{"name", "armature"}, {"rotation", {0.0, 0.0, 0.7071068, 0.7071068}}, {"children", {2}}});  // 1
  b.add_node({{"name", "hip"}, {"children", {3}}});                                           // 2 joint
  b.add_node({{"name", "knee"}, {"translation", {0.0, -1.0, 0.0}}});                          // 3 joint
  b.add_node({{"name", "mesh_parent"}, {"translation", {5.0, 0.0, 0.0}}, {"children", {5}}}); // 4
  b.add_node({{"name", "body"}, {"translation", {0.0, 2.0, 0.0}}, {"mesh", 0}, {"skin", 0}}); // 5
  b.add_node({{"name", "unrelated"}});                                                         // 6
  b.add_skin({2, 3});
  const int pos = b.add_floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
  b.add_mesh({{"primitives", {{{"attributes", {{"POSITION", pos}}}}}}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Skeleton& s = r->rigs[0].skeleton;
  EXPECT_EQ(s.node_count(), 6u);
  EXPECT_EQ(node_named(s, "unrelated"), -1);
  EXPECT_EQ(parent_name(s, node_named(s, "hip")), "armature");
  EXPECT_EQ(parent_name(s, node_named(s, "armature")), "scene_root");
  EXPECT_EQ(parent_name(s, node_named(s, "body")), "mesh_parent");
  EXPECT_EQ(s.mesh_node, node_named(s, "body"));
  EXPECT_EQ(s.rest[static_cast<std::size_t>(s.mesh_node)].translation, glm::vec3(0, 2, 0));
  EXPECT_NEAR(s.rest[static_cast<std::size_t>(node_named(s, "armature"))].rotation.z, 0.7071068f, 1e-6f);
  EXPECT_EQ(s.source_nodes[static_cast<std::size_t>(node_named(s, "mesh_parent"))], 4);
  EXPECT_EQ(s.names[s.joint_nodes[0]], "hip");
}

TEST(ImportSkeleton, TwoSkinsGiveTwoRigsWithTheirOwnNodes) {
  GltfBuilder b;
  b.add_node({{"name", "a_root"}, {"children", {1}}});  // 0
  b.add_node({{"name", "a_tip"}});                       // 1
  b.add_node({{"name", "b_root"}});                      // 2
  b.add_node({{"name", "a_body"}, {"mesh", 0}, {"skin", 0}});
  b.add_node({{"name", "b_body"}, {"mesh", 0}, {"skin", 1}});
  b.add_skin({0, 1});
  b.add_skin({2});
  b.json()["skins"][1]["name"] = "second";
  const int pos = b.add_floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
  b.add_mesh({{"primitives", {{{"attributes", {{"POSITION", pos}}}}}}});
  b.add_animation({{1, "translation", {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0}},
                   {2, "scale", {0.0f, 2.0f}, {1, 1, 1, 2, 2, 2}}},
                  "move");
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rigs.size(), 2u);
  EXPECT_EQ(r->rigs[0].skeleton.joint_count(), 2u);
  EXPECT_EQ(r->rigs[1].skeleton.joint_count(), 1u);
  EXPECT_EQ(r->rigs[1].skeleton.skin_name, "second");
  EXPECT_EQ(node_named(r->rigs[1].skeleton, "a_tip"), -1);
  // Each rig gets the clip, with only its own tracks, and the same duration.
  ASSERT_EQ(r->rigs[0].clips.size(), 1u);
  ASSERT_EQ(r->rigs[1].clips.size(), 1u);
  EXPECT_EQ(r->rigs[0].clips[0].name, "move");
  EXPECT_EQ(r->rigs[1].clips[0].name, "move");
  ASSERT_EQ(r->rigs[0].clips[0].tracks.size(), 1u);
  ASSERT_EQ(r->rigs[1].clips[0].tracks.size(), 1u);
  EXPECT_EQ(r->rigs[0].clips[0].tracks[0].target, TrackTarget::kTranslation);
  EXPECT_EQ(r->rigs[1].clips[0].tracks[0].target, TrackTarget::kScale);
  EXPECT_EQ(r->rigs[0].clips[0].duration_seconds, 2.0f);
  EXPECT_EQ(r->rigs[1].clips[0].duration_seconds, 2.0f);
  EXPECT_EQ(r->rigs[0].meshes.size(), 1u);
  EXPECT_EQ(r->rigs[1].meshes.size(), 1u);
}

TEST(ImportSkeleton, FileWithoutSkinsGetsOneRigOverEveryNodeInNodeOrder) {
  GltfBuilder b;
  // Child listed first: palette entries stay in node order, nodes are sorted parents first.
  b.add_node({{"name", "child"}, {"translation", {1.0, 0.0, 0.0}}});
  b.add_node({{"name", "parent"}, {"children", {0}}});
  b.add_node({{"name", "loner"}});
  Result<Model> r = import_doc(b);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->has_skins);
  ASSERT_EQ(r->rigs.size(), 1u);
  const Skeleton& s = r->rigs[0].skeleton;
  EXPECT_EQ(s.source_skin, -1);
  EXPECT_EQ(s.mesh_node, -1);
  ASSERT_EQ(s.joint_count(), 3u);
  EXPECT_EQ(s.names[s.joint_nodes[0]], "child");
  EXPECT_EQ(s.names[s.joint_nodes[1]], "parent");
  EXPECT_EQ(s.names[s.joint_nodes[2]], "loner");
  EXPECT_EQ(parent_name(s, node_named(s, "child")), "parent");
  EXPECT_LT(node_named(s, "parent"), node_named(s, "child"));
  for (const glm::mat4& m : s.inverse_bind) EXPECT_EQ(m, glm::mat4(1.0f));
}

// --- errors ---------------------------------------------------------------------------------

TEST(ImportSkeletonErrors, JointIndexOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["skins"][0]["joints"][1] = 42;
  EXPECT_IMPORT_ERROR(t.b, "skins[0].joints[1]", "node index 42 out of range");
}

TEST(ImportSkeletonErrors, DuplicateJoint) {
  SkinnedTriangle t;
  t.b.json()["skins"][0]["joints"][1] = 0;
  EXPECT_IMPORT_ERROR(t.b, "skins[0].joints[1]", "nodes[0] is listed twice");
}

TEST(ImportSkeletonErrors, EmptySkin) {
  SkinnedTriangle t;
  t.b.json()["skins"][0]["joints"] = nlohmann::json::array();
  EXPECT_IMPORT_ERROR(t.b, "skins[0].joints", "at least one joint");
}

TEST(ImportSkeletonErrors, MoreJointsThanMaxJoints) {
  SkinnedTriangle t;
  ImportOptions options;
  options.max_joints = 1;
  const std::string message = import_error(t.b, options);
  EXPECT_THAT(message, HasSubstr("test.gltf: skins[0].joints: 2 joints, more than max_joints 1"));
}

TEST(ImportSkeletonErrors, NodeCycle) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1]["children"] = {0};
  EXPECT_IMPORT_ERROR(t.b, "nodes[0].children", "cycle");
}

TEST(ImportSkeletonErrors, NodeIsItsOwnChild) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1]["children"] = {1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[1].children[0]", "cycle");
}

TEST(ImportSkeletonErrors, NodeWithTwoParents) {
  SkinnedTriangle t;
  t.b.json()["nodes"][2]["children"] = {1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[2].children[0]", "nodes[1] has two parents, nodes[0] and nodes[2]");
}

TEST(ImportSkeletonErrors, ChildIndexOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1]["children"] = {7};
  EXPECT_IMPORT_ERROR(t.b, "nodes[1].children[0]", "node index 7 out of range");
}

TEST(ImportSkeletonErrors, InverseBindNotAffine) {
  SkinnedTriangle t;
  const int ibm = t.b.add_floats({1, 0, 0, 0.5f, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
                                  1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
                                 "MAT4");
  t.b.json()["skins"][0]["inverseBindMatrices"] = ibm;
  EXPECT_IMPORT_ERROR(t.b, "skins[0].inverseBindMatrices", "matrix 0 is not affine");
}

TEST(ImportSkeletonErrors, TooFewInverseBindMatrices) {
  SkinnedTriangle t;
  const int ibm = t.b.add_floats({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, "MAT4");
  t.b.json()["skins"][0]["inverseBindMatrices"] = ibm;
  EXPECT_IMPORT_ERROR(t.b, "skins[0].inverseBindMatrices", "1 matrices for 2 joints");
}

TEST(ImportSkeletonErrors, InverseBindAccessorOfTheWrongType) {
  SkinnedTriangle t;
  t.b.json()["skins"][0]["inverseBindMatrices"] = t.positions;
  EXPECT_IMPORT_ERROR(t.b, "skins[0].inverseBindMatrices", "is VEC3, expected MAT4");
}

TEST(ImportSkeletonErrors, MatrixWithShear) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1].erase("translation");
  t.b.json()["nodes"][1]["matrix"] = {1, 0, 0, 0, 0.5, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[1].matrix", "shear");
}

TEST(ImportSkeletonErrors, MatrixWithZeroScale) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1].erase("translation");
  t.b.json()["nodes"][1]["matrix"] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[1].matrix", "not decomposable");
}

TEST(ImportSkeletonErrors, MatrixWithProjectiveRow) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1].erase("translation");
  t.b.json()["nodes"][1]["matrix"] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[1].matrix", "not decomposable");
}

TEST(ImportSkeletonErrors, MatrixTogetherWithTrs) {
  SkinnedTriangle t;
  t.b.json()["nodes"][1]["matrix"] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[1]", "has both matrix and translation");
}

TEST(ImportSkeletonErrors, RotationOfWrongLength) {
  SkinnedTriangle t;
  t.b.json()["nodes"][0]["rotation"] = {0, 0, 1};
  EXPECT_IMPORT_ERROR(t.b, "nodes[0].rotation", "expected 4 numbers");
}

TEST(ImportSkeletonErrors, ZeroRotation) {
  SkinnedTriangle t;
  t.b.json()["nodes"][0]["rotation"] = {0, 0, 0, 0};
  EXPECT_IMPORT_ERROR(t.b, "nodes[0].rotation", "zero-length quaternion");
}

TEST(ImportSkeletonErrors, NodeSkinOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["nodes"][2]["skin"] = 3;
  EXPECT_IMPORT_ERROR(t.b, "nodes[2].skin", "skin index 3 out of range");
}

TEST(ImportSkeletonErrors, NodeWithSkinButNoMesh) {
  SkinnedTriangle t;
  t.b.json()["nodes"][2].erase("mesh");
  EXPECT_IMPORT_ERROR(t.b, "nodes[2].skin", "must also have a mesh");
}

TEST(ImportSkeletonErrors, NodeMeshOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["nodes"][2]["mesh"] = 5;
  EXPECT_IMPORT_ERROR(t.b, "nodes[2].mesh", "mesh index 5 out of range");
}

TEST(ImportSkeletonErrors, SkinSkeletonRootOutOfRange) {
  SkinnedTriangle t;
  t.b.json()["skins"][0]["skeleton"] = 9;
  EXPECT_IMPORT_ERROR(t.b, "skins[0].skeleton", "node index 9 out of range");
}

}  // namespace
}  // namespace posecast::testing
