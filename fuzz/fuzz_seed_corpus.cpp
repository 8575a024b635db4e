// Writes seed inputs for the fuzz targets: every message type, and pose streams for every
// reference count and both codings. Usage: fuzz_seed_corpus <message_dir> <pose_dir>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "pose_fuzz_setup.h"
#include "posecast/protocol/messages.h"
#include "posecast/protocol/root_coding.h"
#include "posecast/protocol/snapshot_packets.h"

namespace {

bool write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace posecast;
  using namespace posecast::protocol;
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus <message_dir> <pose_dir>\n");
    return 2;
  }
  const std::string message_dir = argv[1], pose_dir = argv[2];
  const fuzz::PoseFuzzSetup& setup = fuzz::pose_fuzz_setup();
  if (!setup.format || setup.poses.size() < 5) {
    std::fprintf(stderr, "fuzz_seed_corpus: could not build the generated rig's pose format\n");
    return 1;
  }
  int written = 0;
  // Poses: poses[4] coded against each reference selection, both codings.
  PoseEncoder encoder(*setup.format, setup.dictionary.get());
  std::vector<EntityPose> entities;
  for (int selector = 0; selector < 256; selector += 5) {
    // 0: range coded, 1: bit packed, 2: range coded with a recipe and the dictionary, 3: the
    // same with a crossfade recipe (the pose's recipe fading to another clip), 4: with a fade
    // from a frozen pose (the pose's recipe fading to another clip, frozen 100 ms in, fading
    // to a third).
    for (int coding = 0; coding < 5; ++coding) {
      const PoseReference ref = fuzz::fuzz_reference(setup, static_cast<uint8_t>(selector));
      // Byte 1 as fuzz_pose_decode reads it: bit 0 bit-packed, bit 1 the dictionary.
      std::vector<uint8_t> bytes = {static_cast<uint8_t>(selector), static_cast<uint8_t>(coding >= 3 ? 2 : coding)};
      PoseEncodeOptions options;
      options.coding = coding == 1 ? PoseCoding::kBitPacked : PoseCoding::kRangeCoded;
      QuantizedPose pose = setup.poses[4];
      if (coding < 2) pose.recipe = PoseRecipe{};
      if (coding == 3) {
        PoseRecipe& r = pose.recipe;
        r.source_count = r.count;
        r.source_speed = r.speed;
        r.inputs[r.count++] = PoseRecipe::Input{
            static_cast<uint16_t>((r.inputs[0].clip + 1) % setup.format->clip_durations_us.size()), 0, 1.0f};
        r.speed = 3 * 65536 / 4;
        r.fade_elapsed_us = 100'000;
        r.fade_duration_us = 250'000;
        r.steady_us = 100'000;
      }
      if (coding == 4) {
        PoseRecipe& r = pose.recipe;
        const auto clips = setup.format->clip_durations_us.size();
        r.frozen_source_count = r.count;
        r.inputs[r.count++] = PoseRecipe::Input{static_cast<uint16_t>((r.inputs[0].clip + 1) % clips), 100'000, 1.0f};
        // A second frozen mix (a crossfade interrupted twice in a row).
        r.inputs[r.count++] = PoseRecipe::Input{static_cast<uint16_t>(r.inputs[0].clip), 40'000, 1.0f};
        r.frozen_mix_count = 2;
        r.frozen_mixes[0] = {100'000, 250'000, static_cast<uint8_t>(r.count - 1)};
        r.frozen_mixes[1] = {30'000, 200'000, r.count};
        r.source_count = r.count;
        r.source_speed = 0;
        r.source_wrap = 0;
        r.inputs[r.count++] = PoseRecipe::Input{static_cast<uint16_t>((r.inputs[0].clip + 2) % clips), 0, 1.0f};
        r.fade_elapsed_us = 50'000;
        r.fade_duration_us = 200'000;
        r.steady_us = 50'000;
      }
      if (!encoder.encode(pose, ref, bytes, options)) return 1;
      written += write(pose_dir + "/pose_" + std::to_string(selector) + "_" + std::to_string(coding), bytes);
      if (coding == 0 && entities.size() < 12) {
        // Each record with root bytes before the pose's: absolute, against a baseline, or none.
        std::vector<uint8_t> record;
        const QuantizedRoot base{8192 * selector, 0, -4096, 1000, 2560, 0, -512, 16, 128, 0, 0, 0};
        const QuantizedRoot held{8192 * selector + 700, 0, -4000, 1200, 2600, 0, -512, 20, 128, 0, 0, 0};
        const RootReference root_ref = selector % 3 == 0 ? RootReference{} : RootReference{&base, 3};
        const std::size_t root_size = selector % 3 == 2 ? 0 : encode_root(held, root_ref, record);
        record.insert(record.end(), bytes.begin() + 2, bytes.end());
        entities.push_back({static_cast<uint32_t>(selector), 1, std::move(record), static_cast<uint8_t>(root_size)});
      }
    }
  }
  // Messages: one of each type, and a snapshot split in parts.
  Welcome welcome;
  welcome.assets = {{1, 0x1234, 24, "gen-rig:24"}, {2, 0x5678, 67, "Fox.glb"}};
  const std::vector<Message> messages = {
      ClientHello{kProtocolVersion, 42, "fuzz"}, ServerChallenge{42, 7}, ChallengeResponse{42, 7},
      welcome, Ack{100, 0xFFFF0000u},
      ClientCommand{1, 2, 3, CommandOp::kCrossfade, 1, 0, 250000, 65536}, EntitySpawn{2, 3, 1, 0, 90},
      ClientCommand{2, 2, 3, CommandOp::kMove, -1, 0, 0, 0, 0.0f, 0.0f, 0.0f, 96.5f, 1.2f},
      ClientCommand{3, 2, 3, CommandOp::kMoveTo, -1, 0, 0, 0, 120.0f, -40.0f, 0.0f, 150.0f, 0.0f},
      ClientCommand{4, 2, 3, CommandOp::kTeleport, -1, 0, 0, 0, 5.5f, 7.25f, 1.5f, 0.0f, 0.0f},
      EntityDespawn{2, 3, 95}, Disconnect{DisconnectReason::kTimeout, "bye"},
      SessionStatus{120, {2, 5}, kNoTick, kNoTick, kNoTick, 65536},
      SessionStatus{121, {}, 0, 3599, 812, 2 * 65536},
      ReplayControl{4, ReplayAction::kSeek, 300, 0, 0},
      HitQuery{5, 0.0f, 1.0f, -4.0f, 0.0f, 0.0f, 1.0f, 20.0f, 1'500'000},
      HitResult{5, HitOutcome::kHit, 0, 1000000, 3, 3.5f, 1'500'000, false},
      ClientCommand{6, 2, 3, CommandOp::kPlay, 1, 0, 0, 0, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 140},
      OwnerState{139, 2, 3, 6, std::vector<uint8_t>(120, 0x5A)}};
  int index = 0;
  for (const Message& m : messages) {
    const auto bytes = encode_message(m);
    if (!bytes.ok()) return 1;
    written += write(message_dir + "/message_" + std::to_string(index++), bytes.value());
  }
  const auto packets = encode_snapshot_packets({100, 97, 94, 91}, entities, 400);
  if (!packets.ok()) return 1;
  for (const auto& p : packets.value()) written += write(message_dir + "/message_" + std::to_string(index++), p);
  std::printf("fuzz_seed_corpus: %d seeds written\n", written);
  return 0;
}
