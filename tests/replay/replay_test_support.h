#pragma once
// Helpers for the replay tests: the generated rig as the session's model, a deterministic
// command generator that exercises every command kind, recording a session to a temporary
// file, and byte-level chunk surgery (CRC recomputed) for the damaged-file tests.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "posecast/replay/zstd_frame.h"
#include "posecast/replay/recorder.h"
#include "posecast/replay/recording.h"
#include "posecast/replay/replayer.h"
#include "posecast/rig/model_source.h"
#include "posecast/sim/world.h"

namespace posecast::test {

using namespace posecast::replay;  // NOLINT: test shorthand
using namespace posecast::sim;     // NOLINT: test shorthand

inline constexpr const char* kRigSource = "gen-rig:24";

inline std::shared_ptr<const Model> rig_model() {
  static const std::shared_ptr<const Model> model = [] {
    Result<Model> m = rig::load_model_source(kRigSource);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
    return std::make_shared<const Model>(std::move(m.value()));
  }();
  return model;
}

inline ModelLoader rig_loader() {
  return [](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    if (source != kRigSource) return Error{"unexpected source '" + source + "'"};
    return rig_model();
  };
}

// A unique temporary path, removed with the object.
struct TempFile {
  // current_test_info() is null outside a test body (SetUpTestSuite): the pid keeps runs apart.
  explicit TempFile(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string test = info != nullptr ? std::string(info->test_suite_name()) + "_" + info->name() : "suite";
    path = (std::filesystem::temp_directory_path() /
            ("posecast_" + std::to_string(::getpid()) + "_" + test + "_" + name))
               .string();
    std::filesystem::remove(path);
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline MotionSpec motion(uint16_t clip, SpeedQ16 speed = kSpeedOne, int64_t offset_us = 0) {
  MotionSpec m;
  m.count = 1;
  m.clips[0] = ClipWeight{clip, 1.0f};
  m.speed = speed;
  m.start_offset_us = offset_us;
  return m;
}

// One command for entity `e`'s k-th decision: every command kind appears, some invalid on
// purpose (the World rejects them; a replay must reject them identically).
inline CommandBody decision(EntityId e, uint64_t k) {
  const uint16_t clip = static_cast<uint16_t>((e + k) % 4);
  switch (k % 12) {
    case 0: {
      CrossfadeCommand c{0, motion(clip, kSpeedOne + static_cast<SpeedQ16>(e * 977)), 250000, true};
      return c;
    }
    case 1: return SetSpeedCommand{0, static_cast<SpeedQ16>(kSpeedOne / 2 + static_cast<SpeedQ16>(k * 1111))};
    case 2: {
      PlayCommand p{0, motion(clip)};
      p.motion.count = 2;
      p.motion.clips[1] = ClipWeight{static_cast<uint16_t>((clip + 1) % 4), 0.5f};
      return p;
    }
    case 3: {
      SetBlendWeightsCommand b{0, {0.25f, 0.75f, 0, 0}, 2};  // rejected unless a 2-clip motion plays
      return b;
    }
    case 4: return SetLayerModeCommand{1, LayerMode::kAdditive, static_cast<int32_t>(clip), 100000};
    case 5: return PlayCommand{1, motion(static_cast<uint16_t>((clip + 2) % 4))};
    case 6: return SetLayerWeightCommand{1, 0.1f * static_cast<float>(k % 7)};
    case 7: return SetMaskCommand{1, kNoMask};
    case 9: return TeleportCommand{static_cast<float>(e % 7) - 3.0f, 0.5f * static_cast<float>(k % 5), 0.25f * static_cast<float>(k)};
    case 10: return MoveCommand{0.4f * static_cast<float>(k % 9), k % 2 == 0 ? 0.5f : -1.0f};
    case 11: return MoveToCommand{static_cast<float>(e % 5) * 2.0f, -3.0f, 1.0f + 0.1f * static_cast<float>(k % 30), k % 4 == 3};
    default: {
      CrossfadeCommand c{0, motion(clip, -kSpeedOne), 120000, false};
      return c;
    }
  }
}

// A world with the rig model and `entities` entities spawned by submitter 0 at tick 0; it
// computes tick checks (a recorder needs them).
inline std::unique_ptr<World> make_world(uint32_t entities, unsigned threads = 1, bool hash_palettes = true) {
  auto world = std::make_unique<World>(WorldOptions{60, threads, hash_palettes, true, /*tick_checks=*/true});
  EXPECT_TRUE(world->add_model(rig_model()).ok());
  for (EntityId e = 1; e <= entities; ++e) {
    world->submit(0, Command{0, e, SpawnCommand{0, 0, {}}});
    world->submit(0, Command{0, e, PlayCommand{0, motion(static_cast<uint16_t>(e % 4), kSpeedOne, e * 37000)}});
  }
  return world;
}

// Submits, before tick `tick`, one decision for each entity whose turn it is (one command per
// entity per `period` ticks, staggered), from submitter 1 + entity % 8.
inline void submit_decisions(World& world, uint64_t tick, uint32_t entities, uint64_t period = 60) {
  for (EntityId e = 1; e <= entities; ++e) {
    if ((tick + e * 7) % period != 0 || tick == 0) continue;
    world.submit(1 + e % 8, Command{tick, e, decision(e, tick / period + e)});
  }
}

// Records `ticks` ticks of the decision-driven session into `path`; returns the live world
// hashes, one per tick.
inline std::vector<uint64_t> record_session(const std::string& path, uint64_t ticks, uint32_t entities,
                                            RecorderConfig config = {}) {
  std::unique_ptr<World> world = make_world(entities);
  Result<std::unique_ptr<Recorder>> rec = Recorder::create(path, *world, {kRigSource}, config);
  EXPECT_TRUE(rec.ok()) << (rec.ok() ? "" : rec.error().message);
  std::vector<uint64_t> hashes;
  for (uint64_t t = 0; t < ticks; ++t) {
    submit_decisions(*world, t, entities);
    world->tick();
    hashes.push_back(world->world_hash());
    Status s = rec.value()->record_tick(*world);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  }
  EXPECT_TRUE(rec.value()->close().ok());
  return hashes;
}

// Chunk positions in a recording file.
struct ChunkInfo {
  std::size_t offset = 0;  // of the type bytes
  std::string type;
  std::size_t length = 0;  // payload bytes
};

inline std::vector<ChunkInfo> list_chunks(const std::vector<uint8_t>& file) {
  std::vector<ChunkInfo> out;
  std::size_t pos = sizeof kRecordingSignature;
  while (pos + kChunkOverhead <= file.size()) {
    ChunkInfo c;
    c.offset = pos;
    c.type.assign(file.begin() + static_cast<std::ptrdiff_t>(pos), file.begin() + static_cast<std::ptrdiff_t>(pos + 4));
    c.length = std::size_t{file[pos + 4]} | std::size_t{file[pos + 5]} << 8 | std::size_t{file[pos + 6]} << 16 |
               std::size_t{file[pos + 7]} << 24;
    if (pos + kChunkOverhead + c.length > file.size()) break;
    out.push_back(c);
    pos += kChunkOverhead + c.length;
  }
  return out;
}

// The decompressed content of the chunk at `c` (not HEAD: its payload starts with the version).
inline std::vector<uint8_t> chunk_content(const std::vector<uint8_t>& file, const ChunkInfo& c) {
  std::vector<uint8_t> content;
  std::string why;
  FrameDecompressor decompressor;
  const auto frame = std::span<const uint8_t>(file).subspan(c.offset + kChunkOverhead, c.length);
  EXPECT_EQ(decompressor.decompress(frame, kMaxChunkContent, content, why), FrameError::kNone) << why;
  return content;
}

// Replaces the content of the chunk at `c` with `content`, compressed as a valid frame (so the
// edit reaches the payload parser instead of stopping at the checksum). The chunks after it move.
inline void replace_content(std::vector<uint8_t>& file, const ChunkInfo& c, const std::vector<uint8_t>& content) {
  std::vector<uint8_t> frame;
  FrameCompressor().compress(content, frame);
  const auto begin = file.begin() + static_cast<std::ptrdiff_t>(c.offset + kChunkOverhead);
  file.erase(begin, begin + static_cast<std::ptrdiff_t>(c.length));
  file.insert(file.begin() + static_cast<std::ptrdiff_t>(c.offset + kChunkOverhead), frame.begin(), frame.end());
  for (std::size_t i = 0; i < 4; ++i) file[c.offset + 4 + i] = static_cast<uint8_t>(frame.size() >> (8 * i));
}

inline std::shared_ptr<const Recording> read_ok(std::vector<uint8_t> bytes) {
  Result<std::shared_ptr<const Recording>> r = read_recording(std::move(bytes));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : nullptr;
}

// Replays every recorded tick; returns the index of the first mismatching tick or -1.
inline int64_t verify_all(std::shared_ptr<const Recording> rec, unsigned threads = 1) {
  Result<std::unique_ptr<Replayer>> r = Replayer::create(std::move(rec), rig_loader(), ReplayOptions{threads});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return -2;
  Replayer& replayer = *r.value();
  while (!replayer.at_end()) {
    const ReplayStep s = replayer.step();
    if (!s.matches()) return static_cast<int64_t>(s.tick);
  }
  return -1;
}

}  // namespace posecast::test
