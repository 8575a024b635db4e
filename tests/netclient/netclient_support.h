#pragma once
// Helpers for the network client tests: the generated rig as a client asset, and a
// "server side" that quantises and encodes one entity's poses the way the server does.

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "posecast/client/asset_library.h"
#include "posecast/model.h"
#include "posecast/pose_evaluation.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/pose_codec.h"
#include "posecast/protocol/quantization.h"
#include "posecast/rig/model_source.h"

namespace posecast::client::testing {

struct TestRig {
  std::shared_ptr<AssetLibrary> library;
  const ClientModel* model = nullptr;
  const Rig& rig() const { return model->model->rigs[0]; }
  const Skeleton& skeleton() const { return rig().skeleton; }
  const protocol::PoseFormat& format() const { return *model->formats[0]; }
};

inline TestRig load_test_rig(const std::string& source = "gen-rig:24") {
  TestRig r;
  r.library = std::make_shared<AssetLibrary>();
  const Status s = r.library->load(source);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  if (r.library->size() > 0) r.model = &r.library->at(0);
  return r;
}

// The test rig as the server's model 0, bound as a Welcome's manifest would bind it.
inline AssetBinding bind_test_rig(const TestRig& rig) {
  const protocol::AssetInfo info{0, rig.model->model->content_hash,
                                 static_cast<uint16_t>(rig.skeleton().joint_count()), "gen-rig:24"};
  Result<AssetBinding> bound = AssetBinding::bind(std::span(&info, 1), *rig.library, false, {});
  EXPECT_TRUE(bound.ok());
  return bound.ok() ? std::move(bound).value() : AssetBinding{};
}

// One entity playing a looping clip, quantised and encoded per tick like the server does.
class PoseSource {
 public:
  PoseSource(const TestRig& rig, int clip, uint32_t tick_rate_hz = 60)
      : rig_(rig), clip_(clip), tick_rate_(tick_rate_hz), quantizer_(rig.format()),
        encoder_(rig.format()) {}

  // The exact (unquantised) local pose at a server tick.
  const std::vector<Transform>& exact(uint32_t tick) {
    EXPECT_TRUE(evaluate_pose(rig_.rig(), clip_, clip_time(tick), cursor_, buffers_));
    return buffers_.locals;
  }
  int64_t clip_time(uint32_t tick) const {
    const Clip& c = rig_.rig().clips[static_cast<std::size_t>(clip_)];
    const int64_t t = static_cast<int64_t>(tick) * 1'000'000 / tick_rate_;
    return c.duration_us > 0 ? t % c.duration_us : 0;
  }

  // The quantised pose at `tick`, quantised against `reference` (nullable), as the server does.
  protocol::QuantizedPose quantized(uint32_t tick, const protocol::QuantizedPose* reference) {
    protocol::QuantizedPose q;
    q.reset(rig_.format());
    EXPECT_TRUE(quantizer_.quantize(exact(tick), reference, q));
    return q;
  }

  std::vector<uint8_t> encode(const protocol::QuantizedPose& pose,
                              const protocol::PoseReference& reference) {
    std::vector<uint8_t> out;
    EXPECT_TRUE(encoder_.encode(pose, reference, out));
    return out;
  }

  // The quantised pose at `tick` with the recipe that evaluates it (clip at its looped time),
  // encoded with the server's clip dictionary (its own instance, as the server has).
  protocol::QuantizedPose quantized_with_recipe(uint32_t tick) {
    protocol::QuantizedPose q = quantized(tick, nullptr);
    q.recipe.count = 1;
    q.recipe.inputs[0] = {static_cast<uint16_t>(clip_), clip_time(tick), 1.0f};
    return q;
  }
  std::vector<uint8_t> encode_with_dictionary(const protocol::QuantizedPose& pose,
                                              const protocol::PoseReference& reference) {
    protocol::ClipDictionary dictionary(rig_.skeleton(), rig_.rig().clips, rig_.format());
    protocol::PoseEncoder encoder(rig_.format(), &dictionary);
    std::vector<uint8_t> out;
    EXPECT_TRUE(encoder.encode(pose, reference, out));
    return out;
  }

  // The server's palette of a quantised pose.
  std::vector<glm::mat4> palette(const protocol::QuantizedPose& pose) {
    std::vector<glm::mat4> p(rig_.skeleton().joint_count());
    protocol::PaletteScratch scratch;
    EXPECT_TRUE(protocol::quantized_palette(rig_.skeleton(), rig_.format(), pose, scratch, p));
    return p;
  }

 private:
  const TestRig& rig_;
  int clip_;
  uint32_t tick_rate_;
  protocol::PoseQuantizer quantizer_;
  protocol::PoseEncoder encoder_;
  SamplingCursor cursor_;
  PoseBuffers buffers_;
};

inline bool same_bits(std::span<const glm::mat4> a, std::span<const glm::mat4> b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(glm::mat4)) == 0;
}

}  // namespace posecast::client::testing
