#pragma once
// Helpers shared by the importer tests: importing a GltfBuilder document, reading asset paths,
// and a small skinned character to start hand-crafted cases from.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gltf_builder.h"
#include "posecast/gltf_import.h"

namespace posecast::testing {

inline constexpr const char* kTestName = "test.gltf";

inline Result<Model> import_doc(const GltfBuilder& b, const ImportOptions& options = {}) {
  return import_gltf_memory(b.to_gltf(), kTestName, options);
}

inline Result<Model> import_glb(const GltfBuilder& b, const ImportOptions& options = {}) {
  return import_gltf_memory(b.to_glb(), "test.glb", options);
}

// The error message of a failed import ("" and a test failure when it succeeded).
inline std::string import_error(const GltfBuilder& b, const ImportOptions& options = {}) {
  Result<Model> r = import_doc(b, options);
  EXPECT_FALSE(r.ok()) << "the import succeeded but an error was expected";
  return r.ok() ? std::string() : r.error().message;
}

// Asserts a failed import whose message starts with the file name and names `path`, and
// contains `reason`.
#define EXPECT_IMPORT_ERROR(builder, path, reason)                                    \
  do {                                                                                \
    const std::string message_ = ::posecast::testing::import_error(builder);          \
    EXPECT_THAT(message_, ::testing::StartsWith(std::string("test.gltf: ") + (path) + ": ")); \
    EXPECT_THAT(message_, ::testing::HasSubstr(reason));                              \
  } while (0)

inline std::string asset_path(const std::string& name) { return std::string(POSECAST_ASSETS_DIR) + "/" + name; }

#define SKIP_WITHOUT_ASSET(name)                                                   \
  do {                                                                             \
    if (!std::filesystem::exists(::posecast::testing::asset_path(name)))           \
      GTEST_SKIP() << "sample asset " << (name) << " not found in " POSECAST_ASSETS_DIR; \
  } while (0)

// A skinned triangle: node 0 "root" (joint 0, translation (0,1,0), child 1), node 1 "tip"
// (joint 1, translation (0,1,0)), node 2 "body" (mesh 0, skin 0). Three vertices, each bound
// to one joint; identity inverse binds unless `with_inverse_binds`.
struct SkinnedTriangle {
  GltfBuilder b;
  int positions = -1, joints = -1, weights = -1, indices = -1;

  explicit SkinnedTriangle(bool with_inverse_binds = false) {
    b.add_node({{"name", "root"}, {"translation", {0.0, 1.0, 0.0}}, {"children", {1}}});
    b.add_node({{"name", "tip"}, {"translation", {0.0, 1.0, 0.0}}});
    b.add_node({{"name", "body"}, {"mesh", 0}, {"skin", 0}});
    positions = b.add_floats({0, 0, 0, 1, 0, 0, 0, 1, 0}, "VEC3");
    joints = b.add_ints({0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}, kUnsignedByte, "VEC4");
    weights = b.add_floats({1, 0, 0, 0, 1, 0, 0, 0, 0.5f, 0.5f, 0, 0}, "VEC4");
    indices = b.add_ints({0, 1, 2}, kUnsignedShort, "SCALAR");
    b.add_mesh({{"name", "tri"},
                {"primitives",
                 {{{"attributes", {{"POSITION", positions}, {"JOINTS_0", joints}, {"WEIGHTS_0", weights}}},
                   {"indices", indices}}}}});
    int ibm = -1;
    if (with_inverse_binds) {
      ibm = b.add_floats({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1,   // inverse of T(0,1,0)
                          1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -2, 0, 1},  // inverse of T(0,2,0)
                         "MAT4");
    }
    b.add_skin({0, 1}, ibm);
  }

  nlohmann::json& primitive() { return b.json()["meshes"][0]["primitives"][0]; }
  nlohmann::json& attributes() { return primitive()["attributes"]; }
};

// Skeleton node index of the node named `name`, or -1.
inline int node_named(const Skeleton& s, const std::string& name) {
  for (std::size_t i = 0; i < s.names.size(); ++i)
    if (s.names[i] == name) return static_cast<int>(i);
  return -1;
}

// Name of a node's parent ("" for a root), to compare structures independent of order.
inline std::string parent_name(const Skeleton& s, int node) {
  const int p = s.parents[static_cast<std::size_t>(node)];
  return p < 0 ? std::string() : s.names[static_cast<std::size_t>(p)];
}

}  // namespace posecast::testing
