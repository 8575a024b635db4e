#include "posecast/local_to_model.h"

#include "affine_kernels.h"

namespace posecast {

bool LocalToModelJob::Validate() const {
  if (skeleton == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  if (locals.size() != nodes || models.size() != nodes) return false;
  if (assets_validated) return true;  // Skeleton::validate checked the order below
  // Parents must precede children (Skeleton::validate's invariant); checked here too because
  // Run() reads models[parent] and must never read outside what it has written.
  for (std::size_t i = 0; i < nodes; ++i) {
    const int parent = skeleton->parents[i];
    if (parent < kNoParent || parent >= static_cast<int>(i)) return false;
  }
  return true;
}

namespace {

// Same bits as models[i] = affine_mul(models[parent], to_matrix(locals[i])), computed with
// the inline vector twins (affine_kernels.h) and without materialising the local matrix.
// Its AVX2 clone spills one column of the register-carried parent (16 vector registers),
// which puts a store and reload back on the chain; the v4 clone does not (simd4.h).
POSECAST_HOT_CLONES
void local_to_model(const int16_t* parents, const Transform* locals, glm::mat4* models,
                    std::size_t nodes) {
  // The previous node's matrix stays in registers: a node whose parent is the node just before
  // it (18 of Fox's 26 nodes, most of a chain-ordered skeleton) multiplies it from there
  // instead of reloading what was just stored (a store-to-load forwarding delay on the
  // chain's critical path). The same bits either way: load_affine(models[i]) == model.
  detail::Affine8 previous{};
  for (std::size_t i = 0; i < nodes; ++i) {
    const int parent = parents[i];
    detail::Affine8 model;
    if (parent == kNoParent) {
      model = detail::to_matrix8(locals[i]);
    } else if (static_cast<std::size_t>(parent) + 1u == i) {
      model = detail::affine_mul_trs(detail::left_factor(previous), locals[i]);
    } else {
      model = detail::affine_mul_trs(detail::left_factor(models[parent]), locals[i]);
    }
    detail::store_affine(models[i], model);
    previous = model;
  }
}

}  // namespace

bool LocalToModelJob::Run() const {
  if (!Validate()) return false;
  local_to_model(skeleton->parents.data(), locals.data(), models.data(), skeleton->node_count());
  return true;
}

}  // namespace posecast
