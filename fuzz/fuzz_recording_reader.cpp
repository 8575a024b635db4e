// libFuzzer: read_recording() on arbitrary bytes must return a recording or an error, never
// crash; a recording it accepts must be internally consistent, and replaying a few ticks of it
// (with the generated rig, when that is the model it names) must not crash either: commands
// and snapshots from a hostile file reach the World's own validation.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "posecast/replay/crc32c.h"
#include "posecast/replay/recording.h"
#include "posecast/replay/replayer.h"
#include "posecast/rig/model_source.h"

namespace {

std::shared_ptr<const posecast::Model> generated_rig() {
  static const std::shared_ptr<const posecast::Model> model = [] {
    auto loaded = posecast::rig::load_model_source("gen-rig:24");
    if (!loaded) std::abort();
    return std::make_shared<const posecast::Model>(std::move(loaded.value()));
  }();
  return model;
}

// Recomputes the CRC of every complete chunk, so mutations reach the payload parsers instead of
// stopping at the checksum (the input as given is read too).
std::vector<uint8_t> with_repaired_crcs(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  std::size_t pos = sizeof posecast::replay::kRecordingSignature;
  while (pos + posecast::replay::kChunkOverhead <= bytes.size()) {
    const std::size_t length = std::size_t{bytes[pos + 4]} | std::size_t{bytes[pos + 5]} << 8 |
                               std::size_t{bytes[pos + 6]} << 16 | std::size_t{bytes[pos + 7]} << 24;
    if (length > bytes.size() - pos - posecast::replay::kChunkOverhead) break;
    const uint32_t crc = posecast::replay::crc32c(std::span<const uint8_t>(bytes).subspan(pos, 8 + length));
    for (std::size_t i = 0; i < 4; ++i) bytes[pos + 8 + length + i] = static_cast<uint8_t>(crc >> (8 * i));
    pos += posecast::replay::kChunkOverhead + length;
  }
  return bytes;
}

void check(std::vector<uint8_t> bytes) {
  using namespace posecast;
  using namespace posecast::replay;
  auto read = read_recording(std::move(bytes));
  if (!read.ok()) return;
  const Recording& rec = *read.value();
  if (rec.checkpoints.empty() || rec.checkpoints.front().tick != rec.first_tick()) std::abort();
  for (std::size_t i = 1; i < rec.checkpoints.size(); ++i) {
    if (rec.checkpoints[i].tick <= rec.checkpoints[i - 1].tick || rec.checkpoints[i].tick > rec.end_tick()) std::abort();
  }
  std::size_t commands = 0;
  for (uint64_t t = rec.first_tick(); t < rec.end_tick(); ++t) commands += rec.commands_at(t).size();
  if (commands != rec.commands.size()) std::abort();

  ModelLoader loader = [](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    if (source != "gen-rig:24") return Error{"not the fuzz model"};
    return generated_rig();
  };
  auto replayer = Replayer::create(read.value(), loader);
  if (!replayer.ok()) return;
  for (int i = 0; i < 64 && !replayer.value()->at_end(); ++i) (void)replayer.value()->step();
  (void)replayer.value()->seek(rec.first_tick() + (rec.end_tick() - rec.first_tick()) / 2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check(std::vector<uint8_t>(data, data + size));
  check(with_repaired_crcs(data, size));
  return 0;
}
