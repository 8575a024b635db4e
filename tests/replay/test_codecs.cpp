// Varints, the chunks' zstd frames and the command codec: known values, round trips, and
// hostile input that must give an error naming the field, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "posecast/byte_io.h"
#include "posecast/replay/command_codec.h"
#include "posecast/replay/zstd_frame.h"
#include "replay_test_support.h"

namespace posecast::test {
namespace {

TEST(ByteIo, VarintsRoundTripAtEveryWidth) {
  std::vector<uint8_t> buf;
  ByteWriter w(buf);
  const uint64_t values[] = {0, 1, 127, 128, 16383, 16384, 0xFFFFFFFFull, 1ull << 62, ~0ull};
  const int64_t signed_values[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
  for (uint64_t v : values) w.varint(v);
  for (int64_t v : signed_values) w.svarint(v);
  ByteReader r(buf);
  for (uint64_t v : values) EXPECT_EQ(r.varint("v"), v);
  for (int64_t v : signed_values) EXPECT_EQ(r.svarint("s"), v);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ByteIo, RejectsOverlongAndTruncatedVarintsNamingTheField) {
  std::vector<uint8_t> overlong(11, 0x80);
  ByteReader a(overlong);
  a.varint("count");
  EXPECT_FALSE(a.ok());
  EXPECT_NE(a.error().find("count"), std::string::npos);
  std::vector<uint8_t> truncated = {0x80, 0x80};
  ByteReader b(truncated);
  b.varint("entity");
  EXPECT_EQ(b.error(), "entity: truncated");
  std::vector<uint8_t> big = {0xFF, 0x01};
  ByteReader c(big);
  c.varint("layer", 100);
  EXPECT_EQ(c.error(), "layer: 255 exceeds 100");
}

std::vector<uint8_t> snapshot_like_bytes() {
  std::unique_ptr<World> world = make_world(20);
  for (uint64_t t = 0; t < 90; ++t) {
    submit_decisions(*world, t, 20, 30);
    world->tick();
  }
  return world->snapshot();
}

TEST(ZstdFrame, RoundTripsSnapshotsRandomAndEdgeInputs) {
  std::mt19937 rng(3);
  std::vector<std::vector<uint8_t>> inputs = {{}, {1}, {1, 2, 3}, std::vector<uint8_t>(1000, 0), snapshot_like_bytes()};
  std::vector<uint8_t> random(5000);
  for (uint8_t& b : random) b = static_cast<uint8_t>(rng());
  inputs.push_back(random);
  FrameCompressor compressor;
  FrameDecompressor decompressor;
  for (const auto& in : inputs) {
    std::vector<uint8_t> packed = {0xAA};  // compress() appends
    compressor.compress(in, packed);
    EXPECT_EQ(packed[0], 0xAA);
    std::vector<uint8_t> unpacked;
    std::string why;
    ASSERT_EQ(decompressor.decompress(std::span<const uint8_t>(packed).subspan(1), in.size(), unpacked, why),
              FrameError::kNone)
        << why;
    EXPECT_EQ(unpacked, in);
  }
}

// A world snapshot and its frame.
struct PackedSnapshot {
  PackedSnapshot() { FrameCompressor().compress(snapshot, packed); }
  std::vector<uint8_t> snapshot = snapshot_like_bytes();
  std::vector<uint8_t> packed;
};

TEST(ZstdFrame, CompressesWorldSnapshots) {
  const auto [snapshot, packed] = PackedSnapshot();
  EXPECT_LT(packed.size() * 3, snapshot.size() * 2) << packed.size() << " of " << snapshot.size();
}

TEST(ZstdFrame, RefusesFramesWithoutChecksumSizeOrWithTrailingBytes) {
  const auto [snapshot, packed] = PackedSnapshot();
  std::vector<uint8_t> out;
  FrameDecompressor decompressor;
  std::string why;
  // Above the caller's limit.
  EXPECT_EQ(decompressor.decompress(packed, snapshot.size() - 1, out, why), FrameError::kTooLarge);
  EXPECT_NE(why.find("exceeds"), std::string::npos) << why;
  // Trailing bytes, and a cut frame.
  std::vector<uint8_t> longer = packed;
  longer.push_back(0);
  EXPECT_EQ(decompressor.decompress(longer, snapshot.size(), out, why), FrameError::kMalformed);
  EXPECT_NE(why.find("after the frame"), std::string::npos) << why;
  const std::vector<uint8_t> cut(packed.begin(), packed.end() - 1);
  EXPECT_EQ(decompressor.decompress(cut, snapshot.size(), out, why), FrameError::kMalformed);
  // The checksum flag cleared (Frame_Header_Descriptor bit 2).
  std::vector<uint8_t> unchecked = packed;
  unchecked[4] &= static_cast<uint8_t>(~(1u << 2));
  EXPECT_EQ(decompressor.decompress(unchecked, snapshot.size(), out, why), FrameError::kMalformed);
  EXPECT_NE(why.find("no content checksum"), std::string::npos) << why;
  EXPECT_EQ(decompressor.decompress(std::vector<uint8_t>{1, 2, 3, 4, 5, 6}, 100, out, why), FrameError::kMalformed);
  EXPECT_NE(why.find("magic"), std::string::npos) << why;
}

TEST(ZstdFrame, DamageIsAnErrorNeverWrongContent) {
  const auto [snapshot, packed] = PackedSnapshot();
  std::vector<uint8_t> out;
  FrameDecompressor decompressor;
  std::string why;
  // The checksum's own bytes (the last four).
  std::vector<uint8_t> bad_sum = packed;
  bad_sum.back() ^= 0x01;
  EXPECT_EQ(decompressor.decompress(bad_sum, snapshot.size(), out, why), FrameError::kChecksum);
  EXPECT_NE(why.find("checksum mismatch"), std::string::npos) << why;
  // Every single-bit flip: an error, or (a bit zstd does not read) the exact content.
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bad = packed;
    bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    if (decompressor.decompress(bad, snapshot.size(), out, why) == FrameError::kNone) {
      EXPECT_EQ(out, snapshot);
    }
  }
}

std::vector<Command> every_kind_of_command() {
  std::vector<Command> out;
  for (uint64_t k = 0; k < 12; ++k) out.push_back(Command{100, 7, decision(7, k)});
  out.push_back(Command{100, 1u << 31, SpawnCommand{70000, 65535, {}}});
  out.push_back(Command{99, 3, DespawnCommand{}});
  // Values the World rejects are kept as they were.
  MotionSpec odd = motion(65535, INT32_MIN, INT64_MIN);
  odd.count = 200;
  odd.wrap = static_cast<WrapMode>(250);
  odd.clips[0].weight = std::numeric_limits<float>::quiet_NaN();
  out.push_back(Command{0, 0, CrossfadeCommand{255, odd, INT64_MAX, true}});
  out.push_back(Command{100, 4, SetLayerModeCommand{9, static_cast<LayerMode>(77), INT32_MIN, INT64_MIN}});
  out.push_back(Command{100, 4, SetBlendWeightsCommand{3, {-1.0f, std::numeric_limits<float>::infinity(), 2, 3}, 9}});
  out.push_back(Command{100, 4, SetMaskCommand{2, INT32_MAX}});
  out.push_back(Command{100, 4, SetLayerWeightCommand{2, -0.0f}});
  out.push_back(Command{100, 4, SpawnCommand{1, 2, RootTransform{-0.0f, std::numeric_limits<float>::quiet_NaN(), 1e30f, -7.0f}}});
  out.push_back(Command{100, 4, MoveCommand{std::numeric_limits<float>::infinity(), -1e9f}});
  out.push_back(Command{100, 4, MoveToCommand{1e20f, -0.0f, -1.0f, true}});
  return out;
}

TEST(CommandCodec, RoundTripsEveryKindFaithfully) {
  std::vector<uint8_t> buf;
  ByteWriter w(buf);
  const std::vector<Command> commands = every_kind_of_command();
  for (std::size_t i = 0; i < commands.size(); ++i) encode_command(w, static_cast<uint32_t>(i * 1000), commands[i], 100);
  ByteReader r(buf);
  for (std::size_t i = 0; i < commands.size(); ++i) {
    RecordedCommand got;
    ASSERT_TRUE(decode_command(r, 100, got)) << r.error();
    EXPECT_EQ(got.submitter, i * 1000);
    EXPECT_TRUE(same_command(got.command, commands[i])) << "command " << i << " (" << command_name(commands[i].body) << ")";
  }
  EXPECT_EQ(r.remaining(), 0u);
}

// The stored bytes of one command of each kind, written out from the format in
// command_codec.h (kind, submitter, entity, lateness, body), so a change of the encoding,
// however it is generated, fails here.
TEST(CommandCodec, WritesTheDocumentedBytesOfEveryKind) {
  MotionSpec two_clips;
  two_clips.count = 2;
  two_clips.wrap = WrapMode::kPingPong;
  two_clips.speed = kSpeedOne;                   // svarint 65536: zigzag 131072 = 80 80 08
  two_clips.start_offset_us = -5;                // svarint: zigzag 9
  two_clips.clips[0] = ClipWeight{4, 1.0f};      // 04, f32 00 00 80 3f
  two_clips.clips[1] = ClipWeight{300, 0.5f};    // varint ac 02, f32 00 00 00 3f
  const std::vector<uint8_t> motion = {2, 2, 1, 0x80, 0x80, 0x08, 9,    4,    0,    0,
                                       0x80, 0x3f, 0xac, 0x02, 0, 0, 0, 0x3f};
  struct Case {
    CommandBody body;
    std::vector<uint8_t> body_bytes;
  };
  std::vector<Case> cases = {
      {SpawnCommand{3, 1, RootTransform{1.0f, 0.0f, -2.0f, 0.5f}},
       {3, 1, 0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f}},
      {DespawnCommand{}, {}},
      {PlayCommand{1, two_clips}, {}},
      {CrossfadeCommand{2, two_clips, 300, true}, {}},
      {SetSpeedCommand{1, -3}, {1, 5}},
      {SetLayerWeightCommand{1, 0.25f}, {1, 0, 0, 0x80, 0x3e}},
      {SetMaskCommand{1, kNoMask}, {1, 1}},
      {SetBlendWeightsCommand{1, {0.25f, 0.5f}, 2}, {1, 2, 0, 0, 0x80, 0x3e, 0, 0, 0, 0x3f}},
      {SetLayerModeCommand{1, LayerMode::kAdditive, 2, 1000}, {1, 1, 4, 0xd0, 0x0f}},
      {TeleportCommand{1.0f, 2.0f, -0.5f}, {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0, 0xbf}},
      {MoveCommand{0.5f, 0.25f}, {0, 0, 0, 0x3f, 0, 0, 0x80, 0x3e}},
      {MoveToCommand{2.0f, -2.0f, 1.0f, true}, {0, 0, 0, 0x40, 0, 0, 0, 0xc0, 0, 0, 0x80, 0x3f, 1}},
  };
  cases[2].body_bytes = {1};
  cases[2].body_bytes.insert(cases[2].body_bytes.end(), motion.begin(), motion.end());
  cases[3].body_bytes = {2};
  cases[3].body_bytes.insert(cases[3].body_bytes.end(), motion.begin(), motion.end());
  cases[3].body_bytes.insert(cases[3].body_bytes.end(), {0xd8, 0x04, 1});  // svarint 300, sync
  ASSERT_EQ(kNoMask, -1);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    std::vector<uint8_t> buf;
    ByteWriter w(buf);
    // Submitter 200 (varint c8 01), entity 7, command tick 10 applied at 12 (lateness 2).
    encode_command(w, 200, Command{10, 7, cases[k].body}, 12);
    std::vector<uint8_t> expected = {static_cast<uint8_t>(k + 1), 0xc8, 0x01, 7, 2};
    expected.insert(expected.end(), cases[k].body_bytes.begin(), cases[k].body_bytes.end());
    EXPECT_EQ(buf, expected) << command_name(cases[k].body);
  }
}

TEST(CommandCodec, KeepsLatenessAsTheCommandsOwnTick) {
  std::vector<uint8_t> buf;
  ByteWriter w(buf);
  encode_command(w, 2, Command{95, 1, DespawnCommand{}}, 100);
  ByteReader r(buf);
  RecordedCommand got;
  ASSERT_TRUE(decode_command(r, 100, got));
  EXPECT_EQ(got.command.tick, 95u);
}

TEST(CommandCodec, NamesTheFieldOfAnInvalidOrTruncatedCommand) {
  std::vector<uint8_t> unknown = {77, 0, 0, 0};
  ByteReader r(unknown);
  RecordedCommand got;
  EXPECT_FALSE(decode_command(r, 0, got));
  EXPECT_EQ(r.error(), "kind: 77 is not a command kind (1..12)");

  std::vector<uint8_t> late = {2, 0, 0, 5};  // 5 ticks late at tick 3
  ByteReader l(late);
  EXPECT_FALSE(decode_command(l, 3, got));
  EXPECT_NE(l.error().find("lateness"), std::string::npos);

  std::vector<uint8_t> buf;
  ByteWriter w(buf);
  encode_command(w, 1, Command{10, 1, decision(1, 0)}, 10);  // a crossfade
  for (std::size_t n = 0; n < buf.size(); ++n) {
    ByteReader t(std::span<const uint8_t>(buf).first(n));
    EXPECT_FALSE(decode_command(t, 10, got)) << n;
    EXPECT_NE(t.error().find("truncated"), std::string::npos) << t.error();
  }
}

}  // namespace
}  // namespace posecast::test
