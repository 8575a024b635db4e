// The recording file: what the Recorder writes, what the reader keeps, and every kind of bad
// file (truncated, flipped bytes, unknown chunk, wrong version, invalid contents): a clear
// reason, the valid prefix kept and replayable, never a crash.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include "replay_test_support.h"

namespace posecast::test {
namespace {

constexpr uint32_t kRecordedEntities = 12;

struct Recorded {
  TempFile file{"session.pcrec"};
  std::vector<uint64_t> hashes;
  std::vector<uint8_t> bytes;
};

// 10 s at 60 Hz: checkpoints at 0, 300, 600; TICK chunks every 60 ticks.
const Recorded& session() {
  static Recorded* r = [] {
    auto* rec = new Recorded();
    rec->hashes = record_session(rec->file.path, 600, kRecordedEntities);
    rec->bytes = read_bytes(rec->file.path);
    // The object is never destroyed (tests share it to the end): the bytes are all they use,
    // so the file goes now rather than staying behind in the temporary directory.
    std::filesystem::remove(rec->file.path);
    return rec;
  }();
  return *r;
}

TEST(RecordingFile, HoldsHeaderTicksCommandsAndCheckpoints) {
  const auto rec = read_ok(session().bytes);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->header.format_version, kRecordingFormatVersion);
  EXPECT_EQ(rec->header.tick_rate_hz, 60u);
  EXPECT_EQ(rec->header.checkpoint_interval_ticks, 300u);  // 5 s by default
  EXPECT_EQ(rec->header.flush_interval_ticks, 30u);        // half a second by default
  ASSERT_EQ(rec->header.models.size(), 1u);
  EXPECT_EQ(rec->header.models[0].source, kRigSource);
  EXPECT_EQ(rec->header.models[0].content_hash, rig_model()->content_hash);
  EXPECT_EQ(rec->first_tick(), 0u);
  EXPECT_EQ(rec->end_tick(), 600u);
  ASSERT_EQ(rec->checkpoints.size(), 3u);
  EXPECT_EQ(rec->checkpoints[1].tick, 300u);
  EXPECT_EQ(rec->checkpoints[1].entity_hashes.size(), kRecordedEntities);
  EXPECT_EQ(rec->stop.reason, StopReason::kClosed);
  for (uint64_t t = 0; t < 600; ++t) ASSERT_EQ(rec->tick_record(t)->world_hash, session().hashes[t]) << t;
  // Spawn + play per entity at tick 0, then one decision per entity per second.
  EXPECT_EQ(rec->commands_at(0).size(), 2 * kRecordedEntities);
  EXPECT_EQ(rec->commands.size(), 2 * kRecordedEntities + kRecordedEntities * 10);
}

TEST(RecordingFile, ChunksAreFlushedEveryHalfSecondOfTicks) {
  const std::vector<ChunkInfo> chunks = list_chunks(session().bytes);
  std::size_t ticks = 0;
  for (const ChunkInfo& c : chunks) ticks += c.type == "TICK";
  EXPECT_EQ(chunks.front().type, "HEAD");
  EXPECT_EQ(chunks[1].type, "CKPT");
  EXPECT_EQ(chunks.back().type, "END ");
  EXPECT_EQ(ticks, 20u);  // ten seconds
}

TEST(RecordingFile, TruncationAnywhereKeepsEveryCompleteChunk) {
  const std::vector<uint8_t>& full = session().bytes;
  const std::vector<ChunkInfo> chunks = list_chunks(full);
  std::mt19937 rng(5);
  std::vector<std::size_t> cuts;
  for (const ChunkInfo& c : chunks) {
    cuts.push_back(c.offset);
    cuts.push_back(c.offset + 5);
    cuts.push_back(c.offset + 8 + c.length / 2);
  }
  for (int i = 0; i < 200; ++i) cuts.push_back(rng() % full.size());
  for (std::size_t cut : cuts) {
    std::vector<uint8_t> bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
    Result<std::shared_ptr<const Recording>> r = read_recording(std::move(bytes));
    // Cut inside the header or the first checkpoint: no recording, a clear error.
    if (cut < chunks[2].offset) {
      EXPECT_FALSE(r.ok()) << cut;
      continue;
    }
    ASSERT_TRUE(r.ok()) << cut << ": " << r.error().message;
    const Recording& rec = *r.value();
    // Every chunk that ends at or before the cut is read.
    std::size_t complete_ticks = 0;
    bool at_boundary = false;
    for (const ChunkInfo& c : chunks) {
      if (c.offset + kChunkOverhead + c.length <= cut && c.type == "TICK") complete_ticks += 30;
      at_boundary = at_boundary || c.offset == cut;
    }
    EXPECT_EQ(rec.ticks.size(), complete_ticks) << cut;
    EXPECT_EQ(rec.stop.reason, at_boundary ? StopReason::kUnclosed : StopReason::kTruncated) << cut;
    EXPECT_TRUE(rec.stop.benign());
  }
}

TEST(RecordingFile, TruncatedRecordingReplaysItsValidPrefix) {
  const std::vector<uint8_t>& full = session().bytes;
  const auto rec = read_ok(std::vector<uint8_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(full.size() * 2 / 3)));
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->stop.reason, StopReason::kTruncated);
  EXPECT_GT(rec->ticks.size(), 300u);
  EXPECT_EQ(verify_all(rec), -1);
}

TEST(RecordingFile, FlippedByteStopsAtThatChunkAsDamaged) {
  const std::vector<ChunkInfo> chunks = list_chunks(session().bytes);
  // Flip one byte in the payload of every chunk type after the first checkpoint in turn: the
  // zstd frame's checksum (or its structure) catches it.
  for (std::size_t i = 2; i + 1 < chunks.size(); ++i) {
    std::vector<uint8_t> bytes = session().bytes;
    bytes[chunks[i].offset + 8 + chunks[i].length / 2] ^= 0x10;
    const auto rec = read_ok(bytes);
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->stop.reason, StopReason::kDamaged) << chunks[i].type;
    EXPECT_EQ(rec->stop.offset, chunks[i].offset);
    EXPECT_NE(rec->stop.message.find(chunks[i].type + " chunk at offset " + std::to_string(chunks[i].offset)), std::string::npos)
        << rec->stop.message;
    EXPECT_NE(rec->stop.message.find("zstd frame"), std::string::npos) << rec->stop.message;
    EXPECT_FALSE(rec->stop.benign());
    EXPECT_EQ(rec->chunks, i);
  }
  // A flipped byte in the frame's checksum itself (its last 4 bytes) is caught by name.
  std::vector<uint8_t> bytes = session().bytes;
  bytes[chunks[3].offset + 8 + chunks[3].length - 1] ^= 1;
  const auto rec = read_ok(bytes);
  EXPECT_EQ(rec->stop.reason, StopReason::kDamaged);
  EXPECT_NE(rec->stop.message.find("checksum mismatch"), std::string::npos) << rec->stop.message;
}

TEST(RecordingFile, TheCommandLineNamesFileChunkAndReasonOnOneLine) {
  const std::vector<ChunkInfo> chunks = list_chunks(session().bytes);
  std::vector<uint8_t> bytes = session().bytes;
  bytes[chunks[5].offset + 8 + chunks[5].length / 2] ^= 0x10;
  TempFile file("damaged.pcrec");
  TempFile err("damaged.err");
  write_bytes(file.path, bytes);
  // stderr is a file, not a terminal: the --verify progress bar must not appear in it either.
  const std::string command = std::string(POSECAST_CLI) + " replay " + file.path + " --verify > /dev/null 2> " + err.path;
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(err.path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find(file.path + ": " + chunks[5].type + " chunk at offset " + std::to_string(chunks[5].offset) +
                      ": zstd frame: "),
            std::string::npos)
      << text;
}

TEST(RecordingFile, DamagedMiddleStillReplaysTheChunksBeforeIt) {
  const std::vector<ChunkInfo> chunks = list_chunks(session().bytes);
  std::vector<uint8_t> bytes = session().bytes;
  bytes[chunks[7].offset + 20] ^= 0xFF;
  const auto rec = read_ok(bytes);
  ASSERT_TRUE(rec);
  EXPECT_GT(rec->ticks.size(), 0u);
  EXPECT_EQ(verify_all(rec), -1);
}

TEST(RecordingFile, UnknownChunkTypeStopsReadingThere) {
  std::vector<uint8_t> bytes = session().bytes;
  const std::vector<ChunkInfo> chunks = list_chunks(bytes);
  const ChunkInfo& c = chunks[4];
  bytes[c.offset] = 'Z';
  const auto rec = read_ok(bytes);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->stop.reason, StopReason::kUnknownChunk);
  EXPECT_NE(rec->stop.message.find("unknown chunk type"), std::string::npos);
  EXPECT_EQ(rec->chunks, 4u);
}

TEST(RecordingFile, WrongFormatVersionIsRefused) {
  std::vector<uint8_t> bytes = session().bytes;
  const ChunkInfo head = list_chunks(bytes).front();
  bytes[head.offset + 8] = 9;  // format_version, the first payload field (uncompressed)
  Result<std::shared_ptr<const Recording>> r = read_recording(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("wrong version 9"), std::string::npos) << r.error().message;
}

TEST(RecordingFile, AnOlderVersionIsRefusedNamingBothVersions) {
  // A version 2 file starts as every version does: the signature, then HEAD with the version
  // as its first payload field (version 2: uncompressed fields and a CRC32C after the payload).
  std::vector<uint8_t> bytes(std::begin(kRecordingSignature), std::end(kRecordingSignature));
  const std::vector<uint8_t> head = {'H', 'E', 'A', 'D', 8, 0, 0, 0, 2, 0, 0, 0, 60, 0, 0, 0, 0x12, 0x34, 0x56, 0x78};
  bytes.insert(bytes.end(), head.begin(), head.end());
  Result<std::shared_ptr<const Recording>> r = read_recording(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("wrong version 2 (this build reads version " + std::to_string(kRecordingFormatVersion) + ")"),
            std::string::npos)
      << r.error().message;
}

TEST(RecordingFile, NotARecordingIsRefused) {
  Result<std::shared_ptr<const Recording>> r = read_recording(std::vector<uint8_t>{'{', '"', 'a', '"', '}'});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a posecast recording"), std::string::npos);
  EXPECT_FALSE(read_recording({}).ok());
}

TEST(RecordingFile, ValidChecksumButInvalidContentsNamesTheField) {
  std::vector<uint8_t> bytes = session().bytes;
  const std::vector<ChunkInfo> chunks = list_chunks(bytes);
  const ChunkInfo* tick_chunk = nullptr;
  for (const ChunkInfo& c : chunks) {
    if (c.type == "TICK" && c.offset > chunks[4].offset) {
      tick_chunk = &c;
      break;
    }
  }
  ASSERT_NE(tick_chunk, nullptr);
  // first_tick (the first 8 content bytes) no longer continues the recording.
  std::vector<uint8_t> content = chunk_content(bytes, *tick_chunk);
  content[0] ^= 0x01;
  replace_content(bytes, *tick_chunk, content);
  const auto rec = read_ok(bytes);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->stop.reason, StopReason::kInvalidChunk);
  EXPECT_NE(rec->stop.message.find("first_tick"), std::string::npos) << rec->stop.message;
}

TEST(RecordingFile, UnknownCommandKindIsAnInvalidChunk) {
  // A recording whose second tick holds one command, then its kind byte replaced.
  TempFile file("kind.pcrec");
  std::unique_ptr<World> world = make_world(1);
  auto rec = Recorder::create(file.path, *world, {kRigSource}, RecorderConfig{0, 1, false, false, "", ""});
  ASSERT_TRUE(rec.ok());
  world->tick();
  ASSERT_TRUE(rec.value()->record_tick(*world).ok());
  world->submit(3, Command{1, 1, DespawnCommand{}});
  world->tick();
  ASSERT_TRUE(rec.value()->record_tick(*world).ok());
  ASSERT_TRUE(rec.value()->close().ok());
  std::vector<uint8_t> bytes = read_bytes(file.path);
  const std::vector<ChunkInfo> chunks = list_chunks(bytes);
  const ChunkInfo& second_tick = chunks[3];
  ASSERT_EQ(second_tick.type, "TICK");
  // content: u64 first_tick, varint 1 (count), then the records: u64 hash, the tick check (u8
  // sum_count 1: no entity after the despawn; u64 state total; varint 0 palettes checked),
  // varint 1 (commands), u8 kind.
  std::vector<uint8_t> content = chunk_content(bytes, second_tick);
  const std::size_t kind_at = 8 + 1 + 8 + (1 + 8 + 1) + 1;  // one sum: the total, no locator byte
  ASSERT_EQ(content[kind_at], 2);  // despawn
  content[kind_at] = 77;
  replace_content(bytes, second_tick, content);
  const auto damaged = read_ok(bytes);
  ASSERT_TRUE(damaged);
  EXPECT_EQ(damaged->stop.reason, StopReason::kInvalidChunk);
  EXPECT_NE(damaged->stop.message.find("ticks[0] (tick 1).commands[0].kind: 77 is not a command kind"), std::string::npos)
      << damaged->stop.message;
  EXPECT_EQ(damaged->ticks.size(), 1u);
}

TEST(RecordingFile, RandomDamageNeverCrashesTheReader) {
  std::mt19937 rng(17);
  const std::vector<uint8_t>& full = session().bytes;
  std::set<std::size_t> replayed;  // stop offsets whose kept prefix was replayed
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> bytes = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    Result<std::shared_ptr<const Recording>> r = read_recording(std::move(bytes));
    if (!r.ok()) {
      EXPECT_FALSE(r.error().message.empty()) << "damage " << i;
      continue;
    }
    // What the reader kept is undamaged: the ticks hold the recorded hashes, and a replay
    // reproduces them. The kept part is the chunks before the stop, all checksum-verified: one
    // replay per stop offset (a dozen or so, not ~280) keeps the test fast.
    const Recording& rec = *r.value();
    ASSERT_LE(rec.end_tick(), 600u) << "damage " << i;
    for (uint64_t t = rec.first_tick(); t < rec.end_tick(); ++t) {
      ASSERT_EQ(rec.tick_record(t)->world_hash, session().hashes[t]) << "damage " << i << ", tick " << t;
    }
    if (replayed.insert(rec.stop.offset).second) {
      ASSERT_EQ(verify_all(r.value()), -1) << "damage " << i;
    }
  }
}

TEST(Recorder, RefusesAGapInTicks) {
  TempFile file("gap.pcrec");
  std::unique_ptr<World> world = make_world(2);
  auto rec = Recorder::create(file.path, *world, {kRigSource});
  ASSERT_TRUE(rec.ok());
  world->tick();
  world->tick();
  Status s = rec.value()->record_tick(*world);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("tick 1 recorded, expected tick 0"), std::string::npos) << s.error().message;
}

TEST(Recorder, WritesOneCheckpointPerTick) {
  TempFile file("twice.pcrec");
  std::unique_ptr<World> world = make_world(2);
  auto rec = Recorder::create(file.path, *world, {kRigSource});
  ASSERT_TRUE(rec.ok());
  EXPECT_TRUE(rec.value()->append_checkpoint(*world).ok());  // tick 0 has one already
  world->tick();
  ASSERT_TRUE(rec.value()->record_tick(*world).ok());
  EXPECT_TRUE(rec.value()->append_checkpoint(*world).ok());
  EXPECT_TRUE(rec.value()->append_checkpoint(*world).ok());
  EXPECT_EQ(rec.value()->stats().checkpoints, 2u);
  ASSERT_TRUE(rec.value()->close().ok());
  const auto read = read_ok(read_bytes(file.path));
  ASSERT_TRUE(read);
  EXPECT_EQ(read->stop.reason, StopReason::kClosed) << read->stop.message;
  EXPECT_EQ(read->checkpoints.size(), 2u);
}

TEST(Recorder, ReportsAnUnwritablePath) {
  std::unique_ptr<World> world = make_world(1);
  auto rec = Recorder::create("/nonexistent-folder/x.pcrec", *world, {kRigSource});
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find("/nonexistent-folder/x.pcrec"), std::string::npos);
}

TEST(Recorder, RefusesAWorldWithoutTickChecks) {
  auto world = std::make_unique<World>(WorldOptions{60, 1, /*hash_palettes=*/true, /*palettes=*/true});
  ASSERT_TRUE(world->add_model(rig_model()).ok());
  auto rec = Recorder::create(::testing::TempDir() + "/no_palettes.pcrec", *world, {kRigSource});
  ASSERT_FALSE(rec.ok());
  EXPECT_NE(rec.error().message.find("computes no tick checks"), std::string::npos) << rec.error().message;
}

TEST(Recorder, RequiresOneSourcePerModel) {
  std::unique_ptr<World> world = make_world(1);
  TempFile file("sources.pcrec");
  // None, and two for the one model: both refused, the message giving both counts.
  const auto none = Recorder::create(file.path, *world, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "recorder: 0 model sources for a world of 1 models");
  const auto two = Recorder::create(file.path, *world, {kRigSource, kRigSource});
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().message, "recorder: 2 model sources for a world of 1 models");
  EXPECT_TRUE(Recorder::create(file.path, *world, {kRigSource}).ok());  // the right count is accepted
}

TEST(Recorder, RecordsPalettesWhenAsked) {
  TempFile file("palettes.pcrec");
  RecorderConfig config;
  config.checkpoint_interval_ticks = 30;
  config.record_palettes = true;
  record_session(file.path, 90, 3, config);
  const auto rec = read_ok(read_bytes(file.path));
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->header.has_palettes);
  ASSERT_EQ(rec->palettes.size(), 3u);
  EXPECT_EQ(rec->palettes[0].tick, 29u);
  ASSERT_EQ(rec->palettes[0].entities.size(), 3u);
  EXPECT_EQ(rec->palettes[0].entities[0].matrices.size(), rig_model()->rigs[0].skeleton.joint_count() * 16);
}

}  // namespace
}  // namespace posecast::test
