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
#include "skinned_triangle.h"

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
