#pragma once
// Local-to-model and palette for up to eight entities that share one skeleton, the entities
// side by side in the lanes of eight-float vectors (structure of arrays across entities).
//
// The same bits as LocalToModelJob followed by PaletteJob for each entity: every lane performs
// the scalar operations of to_matrix() and affine_mul() (transform.cpp) in their order, so
// nothing depends on which entities share a batch or on the lane an entity lands in
// (tests/sampling/palette_batch_test.cpp compares them bit for bit).
//
// Why: per entity, those two jobs spend most of their instructions moving lanes (each matrix
// product broadcasts and shuffles its columns); across entities every lane already holds the
// right value, so a product is 36 multiplications and 27 additions for eight entities at once.

#include <glm/mat4x4.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast {

inline constexpr std::size_t kPaletteBatchSize = 8;

struct PaletteBatchJob {
  const Skeleton* skeleton = nullptr;
  // 1..kPaletteBatchSize entities. locals[e]: node_count() local transforms of entity e;
  // palettes[e]: joint_count() matrices, written. Palettes must not overlap each other or any
  // input.
  std::span<const std::span<const Transform>> locals;
  std::span<const std::span<glm::mat4>> palettes;
  // Work space for the entities' world matrices, at least scratch_floats(*skeleton) floats;
  // its contents on entry do not matter.
  std::span<float> scratch;
  // As in LocalToModelJob / PaletteJob: true only for a skeleton checked once with
  // Skeleton::validate() that cannot change afterwards; Validate() then skips its per-node loops.
  bool assets_validated = false;
  // Writes the palettes with non-temporal stores (x86 movntps), which go to memory past the
  // caches and read nothing first: for palettes nobody reads soon and too many to stay in the
  // cache anyway (the World's large ticks without hashing, sim/src/world.cpp). The same values
  // either way. Run() fences (sfence) before it returns, so another thread sees them after the
  // usual release/acquire hand-over. Pays only for palettes aligned to 64 bytes (a matrix per
  // cache line); regular stores where the target has no such store or a palette is not 16-byte
  // aligned.
  bool streaming_stores = false;
  // Optional, empty or one per entity: each entity's mesh-node world matrix, written whether or
  // not its palette is (the bits of LocalToModelJob's models[mesh_node]; the identity for a
  // skeleton without a mesh node). Where the skinned mesh sits, without a second LocalToModelJob.
  std::span<glm::mat4> mesh_models{};

  static std::size_t scratch_floats(const Skeleton& skeleton);
  static std::size_t scratch_floats(std::size_t node_count);  // the same, by node count

  bool Validate() const;
  // Returns a bit mask of the entities whose palette was written (bit e: palettes[e]): all of
  // them, except an entity whose mesh node's world matrix has no inverse (PaletteJob fails for
  // it too), whose palette is left as it was. 0, writing nothing, when Validate() fails.
  // Never allocates.
  uint32_t Run() const;
};

}  // namespace posecast
