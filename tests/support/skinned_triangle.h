#pragma once
// A small skinned character built with GltfBuilder: the starting point of the importer tests'
// hand-crafted cases and of fuzz_gltf_seeds' seed documents.

#include "gltf_builder.h"

namespace posecast::testing {

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

}  // namespace posecast::testing
