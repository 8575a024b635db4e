#pragma once
// Test-side float64 evaluation of glTF 2.0 animation and skinning, written from the spec and
// independent of posecast's code: documents are read with tinygltf (not posecast's importer),
// sampled in double (LINEAR rotations slerp along the shortest path with libm's acos/sin,
// CUBICSPLINE cubic Hermite with tangents scaled by the key interval, STEP holds the key,
// translations and scales lerp; times outside the keys clamp), and the palette is
//     palette[j] = inverse(world(mesh node)) * world(joint j) * inverseBindMatrices[j]
// over the whole node hierarchy (non-joint ancestors included), the mesh node being the first
// node in file order that uses the skin. A file without skins gives one "rig" over every node
// in node order with palette = world matrix (docs/architecture.md, posecast eval --help).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <tiny_gltf.h>

namespace posecast::test {

using Mat4d = std::array<double, 16>;  // column-major, m[c * 4 + r]

// Loads a .gltf/.glb file, or .glb bytes; images are left undecoded. Throws std::runtime_error
// naming the file and tinygltf's error on failure.
tinygltf::Model load_gltf_file(const std::string& path);
tinygltf::Model load_glb_bytes(const std::vector<uint8_t>& bytes, const std::string& name);

class ReferenceEvaluator {
 public:
  explicit ReferenceEvaluator(const tinygltf::Model& model);

  // Rigs: one per skin, or one over every node when the file has none.
  std::size_t rig_count() const;
  std::size_t joint_count(std::size_t rig) const;
  std::size_t animation_count() const { return model_.animations.size(); }
  // Every input (key time) of animation `a`, as read from the file.
  std::vector<double> key_times(std::size_t a) const;

  // The palette of `rig` playing animation `a` at `seconds` (nodes it does not animate keep
  // their rest TRS or matrix).
  // `float_locals`: each node's sampled local translation, rotation (normalised) and scale
  // rounded to float before the chain, which stays in double: the error floor of any
  // evaluation that holds local poses as float32 (posecast's Transform).
  std::vector<Mat4d> palette(std::size_t rig, std::size_t a, double seconds, bool float_locals = false) const;

 private:
  std::vector<Mat4d> world_matrices(std::size_t a, double seconds, bool float_locals) const;

  const tinygltf::Model& model_;
  std::vector<int> parent_;  // per node, -1 for roots
  std::vector<int> order_;   // nodes, parents before children
};

}  // namespace posecast::test
