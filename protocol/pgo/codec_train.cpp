// posecast_codec_train: the training run of the pose codec's profile-guided build
// (protocol/pgo/CMakeLists.txt, docs/codec.md "Profile-guided build"). The build links it with
// an instrumented copy of pose_codec.cpp, runs it once, and compiles the library's
// pose_codec.cpp with the counts it leaves.
//
// It streams the codec's scenarios (codec_scenarios.h, which bench_codec streams too), on the project's generated
// rigs only: the sample assets (Fox, CesiumMan) may be absent from a build machine, and the
// codec's speed targets are measured on Fox, which the profile then has never seen. Every
// record kind the server sends is covered: absolute records, deltas against one, two and three
// references, clip-dictionary records and the served recipes, for one clip and for
// crossfades, at 60, 30 and 20 Hz. The generated clips never turn a joint far enough to change
// its rotation's largest quaternion component, which Fox's do (one record in five to seven at
// 20 Hz), so a variant of each run clip spins two joints as well: its deltas take the steady
// bodies with coded rotation axes (FastBody::kSteadyAxesCoded), which would otherwise be
// compiled without a profile.
//
// Each record is also decoded and compared with what was encoded: a codec that does not round-
// trip fails the build here, before any test runs. Exit status 0 when every record round-trips,
// 1 otherwise (with the scenario named on stderr).

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <glm/gtc/quaternion.hpp>

#include "codec_scenarios.h"
#include "posecast/protocol/clip_dictionary.h"
#include "posecast/protocol/pose_codec.h"

namespace {

using namespace posecast;
using namespace posecast::codec_scenarios;
using protocol::ClipDictionary;
using protocol::PoseCoding;
using protocol::PoseEncodeOptions;
using protocol::PoseEncoder;

// How a run sends: the references a record may use, and whether poses carry their recipes.
struct Mode {
  const char* name;
  int max_references;  // 0: absolute records
  bool recipes;        // poses carry recipes, both sides hold a clip dictionary
  bool served;         // recipes that reproduce the pose (PoseEncodeOptions::recipe_reproduces_pose)
};
constexpr Mode kModes[] = {
    {"absolute", 0, false, false},       {"one reference", 1, false, false},
    {"two references", 2, false, false}, {"delta", 3, false, false},
    {"dictionary", 3, true, false},      {"served", 3, true, true},
};
// Passes over each scenario: enough for the hot loops' counts to dwarf the set-up's.
constexpr int kPasses = 3;

// `s` with joints 1 and 2 also turning about their z axis, a full turn per second and 0.7 of
// one: the largest component of each rotation then changes a few times a turn. The recipes no
// longer describe the poses: for the reference-coded modes only.
Scenario with_spinning_joints(Scenario s, int send_hz) {
  for (std::size_t u = 0; u < s.poses.size(); ++u) {
    const double seconds = static_cast<double>(u) / send_hz;
    for (std::size_t joint = 1; joint <= 2 && joint < s.poses[u].size(); ++joint) {
      const auto angle = static_cast<float>(6.283185307179586 * seconds * (joint == 1 ? 1.0 : 0.7));
      Transform& t = s.poses[u][joint];
      t.rotation = glm::normalize(t.rotation * glm::angleAxis(angle, glm::vec3(0.0f, 0.0f, 1.0f)));
    }
  }
  return s;
}

// Encodes and decodes every update of `s` in `mode` `kPasses` times; false (and a line on
// stderr) at the first record that does not decode to what was encoded.
bool train(const Scenario& s, int send_hz, const Mode& mode, const std::string& label) {
  const int age = kServerTickHz / send_hz;
  std::vector<QuantizedPose> q = quantize_all(s, mode.recipes);
  std::unique_ptr<ClipDictionary> server_dictionary, client_dictionary;
  if (mode.recipes) {
    for (std::size_t i = 0; i < q.size(); ++i) q[i].recipe = s.recipes[i];
    server_dictionary = std::make_unique<ClipDictionary>(s.rig->skeleton, s.rig->clips, *s.format);
    client_dictionary = std::make_unique<ClipDictionary>(s.rig->skeleton, s.rig->clips, *s.format);
  }
  PoseEncoder encoder(*s.format, server_dictionary.get());
  PoseEncodeOptions options;
  options.max_references = mode.max_references == 0 ? 3 : mode.max_references;
  options.recipe_reproduces_pose = mode.served;
  const bool delta = mode.max_references > 0;
  std::vector<uint8_t> bytes;
  QuantizedPose decoded, dictionary_scratch;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (std::size_t u = 0; u < q.size(); ++u) {
      const PoseReference ref = reference_for(q, u, delta, age);
      bytes.clear();
      if (!encoder.encode(q[u], ref, bytes, options)) {
        std::fprintf(stderr, "posecast_codec_train: %s: update %zu not encoded\n", label.c_str(), u);
        return false;
      }
      // A served record of an exact pose is decoded as a recipe (the client evaluates it when
      // it shows the pose); its codes are the dictionary's prediction, compared below.
      const Status st = decode_pose(*s.format, bytes, ref, decoded, PoseCoding::kRangeCoded,
                                    client_dictionary.get(), &dictionary_scratch, nullptr,
                                    /*defer_exact=*/false);
      if (!st) {
        std::fprintf(stderr, "posecast_codec_train: %s: update %zu: %s\n", label.c_str(), u,
                     st.error().message.c_str());
        return false;
      }
      if (decoded.values != q[u].values || decoded.off_layout != q[u].off_layout) {
        std::fprintf(stderr, "posecast_codec_train: %s: update %zu decodes to other codes\n",
                     label.c_str(), u);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int main() {
  struct Source {
    const char* source;
    const char* clip_a;
    const char* clip_b;
  };
  // A rig of Fox's size and the benchmark's large one; one clip, and walk <-> run crossfades.
  constexpr Source kSources[] = {
      {"gen-rig:24", "run", ""},
      {"gen-rig:24", "walk", "run"},
      {"gen-rig:128", "run", ""},
      {"gen-rig:128", "walk", "run"},
  };
  int records = 0;
  for (const Source& src : kSources) {
    for (const int send_hz : kSendRates) {
      const Scenario s = build_scenario(src.source, src.clip_a, src.clip_b, send_hz);
      if (!s.error.empty()) {
        std::fprintf(stderr, "posecast_codec_train: %s: %s\n", src.source, s.error.c_str());
        return 1;
      }
      for (const Mode& mode : kModes) {
        const std::string label = std::string(src.source) + " " + src.clip_a +
                                  (*src.clip_b != '\0' ? std::string(" <-> ") + src.clip_b : "") +
                                  " " + std::to_string(send_hz) + " Hz " + mode.name;
        if (!train(s, send_hz, mode, label)) return 1;
        records += kPasses * static_cast<int>(s.poses.size());
      }
      if (*src.clip_b != '\0') continue;
      const Scenario spun = with_spinning_joints(s, send_hz);
      for (const Mode& mode : kModes) {
        if (mode.recipes) continue;
        const std::string label = std::string(src.source) + " " + src.clip_a + " spinning " +
                                  std::to_string(send_hz) + " Hz " + mode.name;
        if (!train(spun, send_hz, mode, label)) return 1;
        records += kPasses * static_cast<int>(spun.poses.size());
      }
    }
  }
  std::printf("posecast_codec_train: %d records encoded and decoded\n", records);
  return 0;
}
