// libFuzzer: read_recording() on arbitrary bytes must return a recording or an error, never
// crash; a recording it accepts must be internally consistent, and replaying a few ticks of it
// (with the generated rig, when that is the model it names) must not crash either: commands
// and snapshots from a hostile file reach the World's own validation.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "posecast/replay/recording.h"
#include "posecast/replay/replayer.h"
#include "posecast/replay/zstd_frame.h"
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

// Compresses every complete chunk's payload that is not already a valid zstd frame (HEAD: the
// bytes after its version), so mutations of plain contents reach the payload parsers instead
// of stopping at the frame's checksum. fuzz_recording_seeds writes seeds with plain contents
// for this; the input as given is read too.
std::vector<uint8_t> with_compressed_payloads(const uint8_t* data, size_t size) {
  using posecast::replay::kChunkOverhead;
  std::vector<uint8_t> out;
  std::size_t pos = sizeof posecast::replay::kRecordingSignature;
  if (size < pos) return std::vector<uint8_t>(data, data + size);
  out.assign(data, data + pos);
  static posecast::replay::FrameCompressor compressor(1);
  static posecast::replay::FrameDecompressor decompressor;
  std::vector<uint8_t> scratch;
  std::string why;
  while (pos + kChunkOverhead <= size) {
    const std::size_t length = std::size_t{data[pos + 4]} | std::size_t{data[pos + 5]} << 8 |
                               std::size_t{data[pos + 6]} << 16 | std::size_t{data[pos + 7]} << 24;
    if (length > size - pos - kChunkOverhead) break;
    const bool head = out.size() == sizeof posecast::replay::kRecordingSignature;
    const std::size_t plain = head ? std::min<std::size_t>(4, length) : 0;  // HEAD's version
    const std::span<const uint8_t> body(data + pos + kChunkOverhead + plain, length - plain);
    const std::size_t chunk_at = out.size();
    out.insert(out.end(), data + pos, data + pos + kChunkOverhead + plain);
    if (decompressor.decompress(body, 1u << 20, scratch, why) == posecast::replay::FrameError::kNone) {
      out.insert(out.end(), body.begin(), body.end());
    } else {
      compressor.compress(body, out);
    }
    const std::size_t new_length = out.size() - chunk_at - kChunkOverhead;
    for (std::size_t i = 0; i < 4; ++i) out[chunk_at + 4 + i] = static_cast<uint8_t>(new_length >> (8 * i));
    pos += kChunkOverhead + length;
  }
  out.insert(out.end(), data + pos, data + size);
  return out;
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
  check(with_compressed_payloads(data, size));
  return 0;
}
