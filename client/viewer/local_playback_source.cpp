#include "local_playback_source.h"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

namespace posecast::viewer {

namespace {

// Bind-pose extent of a rig on the ground plane, in the rig's world (mesh node at rest).
struct Footprint {
  glm::vec3 min{1e30f};
  glm::vec3 max{-1e30f};
  void add(const glm::vec3& p) {
    min = glm::min(min, p);
    max = glm::max(max, p);
  }
  bool empty() const { return min.x > max.x; }
};

Footprint rest_footprint(const Rig& rig) {
  Footprint box;
  SamplingCursor cursor;
  PoseBuffers rest;
  if (!evaluate_pose(rig, kRestPose, 0, cursor, rest)) return box;
  const glm::mat4 mesh_world =
      rig.skeleton.mesh_node >= 0 ? rest.models[static_cast<std::size_t>(rig.skeleton.mesh_node)]
                                  : glm::mat4(1.0f);
  for (const SkinnedMesh& mesh : rig.meshes)
    for (const glm::vec3& p : mesh.positions) box.add(glm::vec3(mesh_world * glm::vec4(p, 1.0f)));
  if (box.empty())
    for (const glm::mat4& m : rest.models) box.add(glm::vec3(m[3]));
  return box;
}

}  // namespace

uint32_t LocalPlaybackSource::phase_fraction_q16(uint32_t entity) {
  return (entity * 40503u) & 0xFFFFu;  // 40503 / 65536 ~ golden ratio - 1
}

Result<std::unique_ptr<LocalPlaybackSource>> LocalPlaybackSource::create(
    std::shared_ptr<const Model> model, int clip_index, uint32_t count) {
  if (!model || model->rigs.empty()) {
    return Error{(model ? model->source : std::string("model")) + ": nothing to show (no rigs)"};
  }
  if (count == 0) return Error{"entity count must be at least 1"};
  for (const Rig& rig : model->rigs) {
    if (clip_index != kRestPose &&
        (clip_index < 0 || static_cast<std::size_t>(clip_index) >= rig.clips.size())) {
      return Error{model->source + ": no clip " + std::to_string(clip_index)};
    }
  }
  std::unique_ptr<LocalPlaybackSource> source(new LocalPlaybackSource());
  source->model_ = std::move(model);
  source->clip_index_ = clip_index;
  source->count_ = count;

  Footprint all;
  for (const Rig& rig : source->model_->rigs) {
    const Footprint f = rest_footprint(rig);
    if (!f.empty()) {
      all.add(f.min);
      all.add(f.max);
    }
  }
  if (all.empty()) all.add(glm::vec3(0.0f));
  const glm::vec3 size = all.max - all.min;
  const float spacing = std::max({size.x, size.z, size.y * 0.5f, 1e-3f}) * 1.5f;
  const glm::vec3 center = (all.min + all.max) * 0.5f;
  const auto columns = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(count))));
  const uint32_t rows = (count + columns - 1) / columns;

  const std::size_t rigs = source->model_->rigs.size();
  source->instances_.resize(static_cast<std::size_t>(count) * rigs);
  source->entities_.resize(source->instances_.size());
  for (uint32_t e = 0; e < count; ++e) {
    const float x = (static_cast<float>(e % columns) - static_cast<float>(columns - 1) * 0.5f) * spacing;
    const float z = (static_cast<float>(e / columns) - static_cast<float>(rows - 1) * 0.5f) * spacing;
    const glm::mat4 placement =
        glm::translate(glm::mat4(1.0f), glm::vec3(x - center.x, 0.0f, z - center.z));
    for (std::size_t r = 0; r < rigs; ++r) {
      Instance& instance = source->instances_[e * rigs + r];
      instance.rig = static_cast<uint32_t>(r);
      instance.placement = placement;
      const Rig& rig = source->model_->rigs[r];
      const int64_t duration =
          clip_index == kRestPose ? 0 : rig.clips[static_cast<std::size_t>(clip_index)].duration_us;
      instance.phase_us = (duration * static_cast<int64_t>(phase_fraction_q16(e))) >> 16;
      render::RenderEntity& entity = source->entities_[e * rigs + r];
      entity.model = 0;
      entity.rig = instance.rig;
    }
  }
  if (Status status = source->update(0); !status) return status.error();
  return source;
}

Status LocalPlaybackSource::update(int64_t now_us) {
  for (std::size_t i = 0; i < instances_.size(); ++i) {
    Instance& instance = instances_[i];
    const Rig& rig = model_->rigs[instance.rig];
    int64_t time_us = 0;
    if (clip_index_ != kRestPose) {
      const int64_t duration = rig.clips[static_cast<std::size_t>(clip_index_)].duration_us;
      // Integer time, looped here (evaluate_pose clamps, it does not loop).
      if (duration > 0) time_us = ((now_us + instance.phase_us) % duration + duration) % duration;
    }
    if (!evaluate_pose(rig, clip_index_, time_us, instance.cursor, instance.pose)) {
      return Error{model_->source + ": skin " + std::to_string(instance.rig) +
                   ": pose evaluation failed"};
    }
    render::RenderEntity& entity = entities_[i];
    const int32_t mesh_node = rig.skeleton.mesh_node;
    entity.world = mesh_node >= 0
                       ? instance.placement * instance.pose.models[static_cast<std::size_t>(mesh_node)]
                       : instance.placement;
    entity.palette = instance.pose.palette;
  }
  return {};
}

std::string LocalPlaybackSource::describe() const {
  std::string clip = "rest pose";
  if (clip_index_ != kRestPose) {
    clip = "clip '" + model_->rigs[0].clips[static_cast<std::size_t>(clip_index_)].name + "'";
  }
  uint32_t joints = 0;
  for (const Rig& rig : model_->rigs) joints += static_cast<uint32_t>(rig.skeleton.joint_count());
  return model_->source + ", " + clip + ", " + std::to_string(count_) + " entit" +
         (count_ == 1 ? "y" : "ies") + " x " + std::to_string(joints) + " joints";
}

}  // namespace posecast::viewer
