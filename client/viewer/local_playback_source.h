#pragma once
// LocalPlaybackSource: --model mode. Plays one clip (or the rest pose) of one model on N
// entities laid out in a square grid on the ground, each at a different phase, evaluating
// palettes with posecast::evaluate_pose (sample -> local-to-model -> palette).

#include <memory>
#include <vector>

#include "pose_source.h"
#include "posecast/pose_evaluation.h"

namespace posecast::viewer {

class LocalPlaybackSource final : public PoseSource {
 public:
  // clip_index: an index into Model::rigs[*].clips, or kRestPose. count >= 1.
  // Errors: a clip index out of range, a model without rigs.
  static Result<std::unique_ptr<LocalPlaybackSource>> create(std::shared_ptr<const Model> model,
                                                             int clip_index, uint32_t count);

  std::size_t model_count() const override { return 1; }
  const Model& model(std::size_t) const override { return *model_; }
  Status update(int64_t now_us) override;
  std::span<const render::RenderEntity> entities() const override { return entities_; }
  std::string describe() const override;

  // Phase offset of entity i as a fraction of the clip in [0, 1), in 1/65536 steps: the
  // golden-ratio sequence, so neighbours never move in step. Entity 0 has phase 0.
  static uint32_t phase_fraction_q16(uint32_t entity);

 private:
  LocalPlaybackSource() = default;

  struct Instance {
    uint32_t rig = 0;
    glm::mat4 placement{1.0f};
    int64_t phase_us = 0;
    SamplingCursor cursor;
    PoseBuffers pose;
  };

  std::shared_ptr<const Model> model_;
  int clip_index_ = kRestPose;
  uint32_t count_ = 0;
  std::vector<Instance> instances_;  // count_ * rigs, entity-major
  std::vector<render::RenderEntity> entities_;
};

}  // namespace posecast::viewer
