// libFuzzer target: import_gltf_memory() on arbitrary bytes (.glb or .gltf JSON), then, for
// whatever imports, the per-tick jobs on every clip of every rig. Malformed input must give an
// error, never a crash or an out-of-bounds access (ASan + UBSan in scripts/fuzz.sh's build);
// and a model that imports must sample and evaluate: the importer has validated it, so a job
// refusing it is a finding too (trapped).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "posecast/gltf_import.h"
#include "posecast/local_to_model.h"
#include "posecast/palette.h"
#include "posecast/sampling.h"

namespace {

// Samples `clip` at `time_us` and evaluates the palette; traps when a job refuses the
// validated assets.
void evaluate(const posecast::Rig& rig, const posecast::Clip& clip, int64_t time_us,
              bool assets_validated) {
  using namespace posecast;
  const std::size_t nodes = rig.skeleton.node_count();
  std::vector<uint32_t> cursor(clip.tracks.size(), 0u);
  std::vector<Transform> pose(nodes);
  std::vector<glm::mat4> models(nodes);
  std::vector<glm::mat4> palette(rig.skeleton.joint_count());
  SampleJob sample{&rig.skeleton, &clip, time_us, cursor, pose, assets_validated};
  LocalToModelJob to_model;
  to_model.skeleton = &rig.skeleton;
  to_model.locals = pose;
  to_model.models = models;
  to_model.assets_validated = assets_validated;
  PaletteJob palette_job;
  palette_job.skeleton = &rig.skeleton;
  palette_job.models = models;
  palette_job.palette = palette;
  palette_job.assets_validated = assets_validated;
  if (!sample.Run() || !to_model.Run()) __builtin_trap();
  // PaletteJob may refuse a mesh node whose world matrix has no inverse (a valid file can
  // scale it to zero): an error value, not a finding.
  (void)palette_job.Run();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace posecast;
  const std::vector<uint8_t> bytes(data, data + size);
  ImportOptions options;
  options.load_images = false;       // image decoding is stb_image's, not this project's
  options.max_keys_per_track = 4096;  // bounds the work per input
  Result<Model> model = import_gltf_memory(bytes, "fuzz.glb", options);
  if (!model.ok()) return 0;
  for (const Rig& rig : model.value().rigs) {
    for (const Clip& clip : rig.clips) {
      for (const int64_t t : {int64_t{0}, clip.duration_us / 3, clip.duration_us,
                              clip.duration_us + 1}) {
        evaluate(rig, clip, t, true);
        evaluate(rig, clip, t, false);
      }
    }
  }
  return 0;
}
