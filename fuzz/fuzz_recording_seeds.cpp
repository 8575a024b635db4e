// Writes seed recordings for fuzz_recording_reader: small sessions of the generated rig
// (every command kind, checkpoints, palettes, long and one-tick batches), each also as a
// "content-" copy whose chunk payloads are their decompressed contents (the fuzz target
// compresses those, so mutations of a seed's contents reach the payload parsers).
// Usage: fuzz_recording_seeds <dir>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "posecast/replay/recorder.h"
#include "posecast/replay/zstd_frame.h"
#include "posecast/rig/model_source.h"
#include "posecast/sim/world.h"

namespace {

using namespace posecast;
using namespace posecast::sim;

MotionSpec clip(uint16_t c, SpeedQ16 speed) {
  MotionSpec m;
  m.count = 1;
  m.clips[0] = ClipWeight{c, 1.0f};
  m.speed = speed;
  return m;
}

bool write_seed(const std::string& path, std::shared_ptr<const Model> model, uint32_t entities, uint64_t ticks,
                replay::RecorderConfig config) {
  World world(WorldOptions{60, 1, true, true, true});
  if (!world.add_model(model)) return false;
  for (EntityId e = 0; e < entities; ++e) {
    world.submit(0, Command{0, e, SpawnCommand{0, 0, {}}});
    world.submit(0, Command{0, e, PlayCommand{0, clip(static_cast<uint16_t>(e % 4), kSpeedOne)}});
  }
  auto rec = replay::Recorder::create(path, world, {"gen-rig:24"}, config);
  if (!rec) return false;
  for (uint64_t t = 0; t < ticks; ++t) {
    const EntityId e = static_cast<EntityId>(t % entities);
    switch (t % 9) {
      case 1: world.submit(1, Command{t, e, CrossfadeCommand{0, clip(1, kSpeedOne), 100000, true}}); break;
      case 2: world.submit(2, Command{t, e, SetSpeedCommand{0, kSpeedOne / 2}}); break;
      case 3: world.submit(3, Command{t, e, SetLayerModeCommand{1, LayerMode::kAdditive, 2, 50000}}); break;
      case 4: world.submit(3, Command{t, e, PlayCommand{1, clip(2, kSpeedOne)}}); break;
      case 5: world.submit(4, Command{t, e, SetLayerWeightCommand{1, 0.5f}}); break;
      case 6: world.submit(4, Command{t, e, SetBlendWeightsCommand{0, {0.5f, 0.5f, 0, 0}, 2}}); break;
      case 7: world.submit(5, Command{t, e, SetMaskCommand{1, kNoMask}}); break;
      case 8: world.submit(5, Command{t > 0 ? t - 1 : 0, e, DespawnCommand{}}); break;
      default: world.submit(6, Command{t, e, SpawnCommand{0, 0, {}}}); break;
    }
    world.tick();
    if (!rec.value()->record_tick(world)) return false;
  }
  return rec.value()->close().ok();
}

// Writes `path`'s chunks with decompressed payloads to `dir`/content-`name`.
bool write_content_copy(const std::string& dir, const std::string& name) {
  using replay::kChunkOverhead;
  std::ifstream in(dir + "/" + name, std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t pos = sizeof replay::kRecordingSignature;
  if (file.size() < pos) return false;
  std::vector<uint8_t> out(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(pos));
  replay::FrameDecompressor decompressor;
  std::vector<uint8_t> content;
  std::string why;
  while (pos + kChunkOverhead <= file.size()) {
    const std::size_t length = std::size_t{file[pos + 4]} | std::size_t{file[pos + 5]} << 8 |
                               std::size_t{file[pos + 6]} << 16 | std::size_t{file[pos + 7]} << 24;
    const std::size_t plain = out.size() == sizeof replay::kRecordingSignature ? 4 : 0;  // HEAD's version
    const auto frame = std::span<const uint8_t>(file).subspan(pos + kChunkOverhead + plain, length - plain);
    if (decompressor.decompress(frame, replay::kMaxChunkContent, content, why) != replay::FrameError::kNone) return false;
    const std::size_t new_length = plain + content.size();
    out.insert(out.end(), file.begin() + static_cast<std::ptrdiff_t>(pos), file.begin() + static_cast<std::ptrdiff_t>(pos + 4));
    for (std::size_t i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(new_length >> (8 * i)));
    out.insert(out.end(), file.begin() + static_cast<std::ptrdiff_t>(pos + kChunkOverhead),
               file.begin() + static_cast<std::ptrdiff_t>(pos + kChunkOverhead + plain));
    out.insert(out.end(), content.begin(), content.end());
    pos += kChunkOverhead + length;
  }
  std::ofstream(dir + "/content-" + name, std::ios::binary).write(reinterpret_cast<const char*>(out.data()),
                                                                  static_cast<std::streamsize>(out.size()));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_recording_seeds <dir>\n");
    return 2;
  }
  auto loaded = rig::load_model_source("gen-rig:24");
  if (!loaded) return 1;
  auto model = std::make_shared<const Model>(std::move(loaded.value()));
  const std::string dir = argv[1];
  int written = 0;
  written += write_seed(dir + "/plain.pcrec", model, 3, 40, {10, 5, false, false, "seed", ""});
  written += write_seed(dir + "/palettes.pcrec", model, 2, 25, {8, 4, false, true, "seed", "a=1\n"});
  written += write_seed(dir + "/one_batch.pcrec", model, 4, 30, {30, 30, false, false, "", ""});
  written += write_seed(dir + "/every_tick.pcrec", model, 1, 12, {4, 1, false, false, "", ""});
  for (const char* name : {"plain.pcrec", "palettes.pcrec", "one_batch.pcrec", "every_tick.pcrec"}) {
    written += write_content_copy(dir, name);
  }
  std::printf("fuzz_recording_seeds: %d seeds in %s\n", written, dir.c_str());
  return written == 8 ? 0 : 1;
}
