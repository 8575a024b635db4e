#pragma once
// Shared by fuzz_pose_decode and fuzz_seed_corpus: the format and reference poses the pose
// fuzzer decodes against (the generated 24-joint rig and quantised samples of its "run" clip),
// and how a fuzz input selects the reference set.
//
// Input layout: byte 0 selects the references (bits 0-1: how many, 0..3; bits 2-7 vary the
// ages), byte 1 the coding (bit 0: bit-packed) and whether the decoder has the clip dictionary
// (bit 1), the rest is the pose stream.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/pose_format.h"
#include "posecast/protocol/quantization.h"
#include "posecast/rig/model_source.h"
#include "posecast/sampling.h"

namespace posecast::fuzz {

struct PoseFuzzSetup {
  std::unique_ptr<Model> model;
  std::unique_ptr<protocol::PoseFormat> format;
  std::vector<protocol::QuantizedPose> poses;  // 5 consecutive 50 ms samples, oldest first,
                                               // each with its recipe ("run" at its time)
  std::unique_ptr<protocol::ClipDictionary> dictionary;
};

inline const PoseFuzzSetup& pose_fuzz_setup() {
  static const PoseFuzzSetup setup = [] {
    PoseFuzzSetup s;
    auto loaded = rig::load_model_source("gen-rig:24");
    if (!loaded.ok() || loaded.value().rigs.empty()) return s;
    s.model = std::make_unique<Model>(std::move(loaded.value()));
    const Rig& rig = s.model->rigs[0];
    auto format = protocol::build_pose_format(rig.skeleton, rig.clips);
    if (!format.ok()) return s;
    s.format = std::make_unique<protocol::PoseFormat>(std::move(format.value()));
    const int clip = s.model->find_clip("run");
    if (clip < 0) return s;
    const Clip& c = rig.clips[static_cast<std::size_t>(clip)];
    SamplingCursor cursor;
    cursor.reset(c);
    std::vector<Transform> pose(rig.skeleton.node_count());
    protocol::PoseQuantizer quantizer(*s.format);
    for (int i = 0; i < 5; ++i) {
      SampleJob job{&rig.skeleton, &c, i * 50000, cursor.keys, pose};
      if (!job.Run()) return s;
      protocol::QuantizedPose q;
      if (!quantizer.quantize(pose, s.poses.empty() ? nullptr : &s.poses.back(), q)) return s;
      q.recipe.count = 1;
      q.recipe.inputs[0] = {static_cast<uint16_t>(clip), i * 50000, 1.0f};
      s.poses.push_back(std::move(q));
    }
    s.dictionary = std::make_unique<protocol::ClipDictionary>(rig.skeleton, rig.clips, *s.format);
    return s;
  }();
  return setup;
}

// The references selected by `selector` (newest pose = poses[3], then 2, 1).
inline protocol::PoseReference fuzz_reference(const PoseFuzzSetup& s, uint8_t selector) {
  protocol::PoseReference ref;
  const int count = selector & 3;
  const auto age = [&](int shift) { return 1u + ((selector >> shift) & 3u); };
  if (count >= 1) ref = {&s.poses[3], age(2), nullptr, 0, nullptr, 0, 60};
  if (count >= 2) {
    ref.prior = &s.poses[2];
    ref.prior_age = age(4);
  }
  if (count >= 3) {
    ref.older = &s.poses[1];
    ref.older_age = age(6);
  }
  return ref;
}

}  // namespace posecast::fuzz
