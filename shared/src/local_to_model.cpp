#include "posecast/local_to_model.h"

namespace posecast {

bool LocalToModelJob::Validate() const {
  if (skeleton == nullptr) return false;
  const std::size_t nodes = skeleton->node_count();
  if (locals.size() != nodes || models.size() != nodes) return false;
  // Parents must precede children (Skeleton::validate's invariant); checked here too because
  // Run() reads models[parent] and must never read outside what it has written.
  for (std::size_t i = 0; i < nodes; ++i) {
    const int parent = skeleton->parents[i];
    if (parent < kNoParent || parent >= static_cast<int>(i)) return false;
  }
  return true;
}

bool LocalToModelJob::Run() const {
  if (!Validate()) return false;
  const std::size_t nodes = skeleton->node_count();
  for (std::size_t i = 0; i < nodes; ++i) {
    const glm::mat4 local = to_matrix(locals[i]);
    const int parent = skeleton->parents[i];
    models[i] = parent == kNoParent ? local : affine_mul(models[parent], local);
  }
  return true;
}

}  // namespace posecast
