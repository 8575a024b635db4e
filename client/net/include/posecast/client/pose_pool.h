#pragma once
// PosePool: storage for decoded entity poses, shared between snapshot views by reference
// count. A pose carried unchanged from a baseline into a later view (docs/session.md: entities
// left out of a snapshot keep their baseline pose) is the same slot, not a copy. Released
// slots are recycled with their buffers, so steady-state decoding does not allocate.

#include <glm/mat4x4.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/quantization.h"
#include "posecast/skeleton.h"
#include "posecast/transform.h"

namespace posecast::client {

// One entity's pose at one server tick.
//
// No palette is stored: a decoded pose's palette is needed only when a frame shows that pose
// unchanged (PoseTrack's kExact/kHold/kStalled), and PoseTrack then computes it from `locals`
// with the same jobs (computing it for every decoded pose would waste most of it, docs/client.md,
// "CPU per frame"). palette() gives it on demand (tests, tools).
struct PoseSample {
  // The codes, as the server quantised them, and dequantize_pose(quantized) (node_count
  // entries). Read them through decoded(): a record sent exact is stored with
  // its recipe alone, and its codes and locals are computed the first time someone needs
  // them (mutable for that). `quantized.recipe`, `quantized.off_layout` and the sizes of
  // both are always set.
  mutable protocol::QuantizedPose quantized;
  mutable std::vector<Transform> locals;
  const Skeleton* skeleton = nullptr; // the skeleton the pose was decoded for (outlives it)
  // The record was predicted from its recipe through the clip dictionary and its codes equal
  // that prediction's: the recipe reproduces this pose to the codec's quantisation (not, say,
  // a blend with IK or another edit on top). Render-time recipes require it (pose_track.h).
  bool recipe_verified = false;
  // Set while the codes are deferred: the dictionary that computes them from the recipe (its
  // prediction is the record's codes) and the format that dequantises them. Both outlive the
  // sample (the AssetLibrary's). Null once computed, and for records decoded in full.
  mutable protocol::ClipDictionary* pending = nullptr;
  const protocol::PoseFormat* format = nullptr;
  mutable bool undecodable = false;  // the deferred prediction failed (a job refused it)

  // True when `quantized.values` and `locals` hold the pose: at once for a record decoded in
  // full; for a deferred one after computing them here (a clip-dictionary prediction and a
  // dequantisation, once). False when that prediction fails: the sample is then unusable.
  // Uses the dictionary's scratch: the client's thread only, as the dictionaries are.
  bool decoded() const { return pending == nullptr ? !undecodable : compute_deferred(); }

  // The skinning palette of this pose: LocalToModelJob then PaletteJob on `locals`, the jobs
  // PoseTrack runs and protocol::quantized_palette() runs on dequantize_pose(quantized), so the
  // result is bit-identical to the server's quantised palette. `models` needs node_count
  // entries (scratch), `palette` joint_count. False (palette unspecified) without a skeleton,
  // on a size mismatch, or when a job rejects the pose (singular mesh node).
  bool compute_palette(std::span<glm::mat4> models, std::span<glm::mat4> palette) const;
  // Allocating convenience for tests and tools: the palette, or empty on failure.
  std::vector<glm::mat4> palette() const;

 private:
  bool compute_deferred() const;
};

class PosePool {
 public:
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

  // A slot with reference count 1 (its buffers hold whatever the last user left).
  uint32_t acquire();
  void retain(uint32_t slot) { ++refs_[slot]; }
  // Drops one reference; the slot is recycled at zero.
  void release(uint32_t slot);

  PoseSample& at(uint32_t slot) { return samples_[slot]; }
  const PoseSample& at(uint32_t slot) const { return samples_[slot]; }
  std::size_t live() const { return samples_.size() - free_.size(); }

 private:
  std::vector<PoseSample> samples_;
  std::vector<uint32_t> refs_;
  std::vector<uint32_t> free_;
};

}  // namespace posecast::client
