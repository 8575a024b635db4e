// Writes seed files for fuzz_gltf_import, each a few hundred bytes to 2 KB so that mutations
// reach the importer's own checks: the tests' skinned triangle (two joints, inverse binds) with
// an animation of every interpolation, and one whose two LINEAR rotation tracks share a
// timeline (one rotation block), each as .gltf JSON and as .glb.
// Usage: fuzz_gltf_seeds <dir>

#include <cstdio>
#include <string>
#include <vector>

#include "gltf_builder.h"
#include "skinned_triangle.h"

namespace {

using posecast::testing::GltfBuilder;
using posecast::testing::SkinnedTriangle;

GltfBuilder every_interpolation() {
  GltfBuilder b = SkinnedTriangle(/*with_inverse_binds=*/true).b;
  b.add_animation({{0, "translation", {0.0f, 0.5f, 1.0f}, {0, 0, 0, 0, 1, 0, 0, 0, 0}},
                   {1, "rotation", {0.0f, 1.0f}, {0, 0, 0, 1, 0, 0.6f, 0, 0.8f}},
                   {0, "rotation", {0.0f, 1.0f}, {0, 0, 0, 1, 0.6f, 0, 0, 0.8f}, "STEP"},
                   {1, "scale", {0.0f, 1.0f}, {1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0, 1, 1, 1, 0, 0, 0},
                    "CUBICSPLINE"}},
                  "mix");
  return b;
}

GltfBuilder shared_rotation_timeline() {
  GltfBuilder b = SkinnedTriangle(/*with_inverse_binds=*/true).b;
  b.add_animation({{0, "rotation", {0.0f, 0.4f, 1.0f}, {0, 0, 0, 1, 0, 0.6f, 0, 0.8f, 0, 0, 0, 1}},
                   {1, "rotation", {0.0f, 0.4f, 1.0f}, {0, 0, 0, 1, 0.6f, 0, 0, 0.8f, 0, 0, 0.6f, 0.8f}}},
                  "sway");
  return b;
}

bool write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  const bool ok = out != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  if (out != nullptr) std::fclose(out);
  if (!ok) std::fprintf(stderr, "fuzz_gltf_seeds: cannot write %s\n", path.c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const GltfBuilder docs[] = {every_interpolation(), shared_rotation_timeline()};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string stem = dir + "/seed" + std::to_string(i);
    if (!write(stem + ".gltf", docs[i].to_gltf()) || !write(stem + ".glb", docs[i].to_glb())) return 1;
  }
  std::printf("fuzz_gltf_seeds: 4 seeds in %s\n", dir.c_str());
  return 0;
}
